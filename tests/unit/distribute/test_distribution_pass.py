"""Pass-level rows of the distribution test table (spec/replica-distribution.md §13): the RD
through `reconcile` with the §13 fixture (see rd_helpers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gitfleet.api.output import expand_cluster_statuses
from tests.unit.distribute.rd_helpers import (
    CLUSTERS,
    PLACEMENT,
    condition,
    next_prior,
    rd,
    replicas,
    run,
    statefulset,
    status,
    subset,
    workload_on,
    write_fleet,
)

EU_US = [subset("eu", "eu"), subset("us", "us")]


def ro(name: str, cluster: str, **rule: Any) -> dict[str, Any]:
    return {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ResourceOverride",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {
            "resourceSelectors": [
                {"group": "apps", "version": "v1", "kind": "StatefulSet", "name": "web"}
            ],
            "policy": {
                "overrideRules": [
                    {
                        "clusterSelector": {
                            "clusterSelectorTerms": [
                                {"labelSelector": {"matchLabels": {"name": cluster}}}
                            ]
                        },
                        **rule,
                    }
                ]
            },
        },
    }


def labelled() -> dict[str, dict[str, str]]:
    return {c: {"region": r, "name": c} for c, r in CLUSTERS.items()}


def test_row1_two_subsets(tmp_path: Path) -> None:
    write_fleet(tmp_path, [rd({"replicas": 10, "topology": {"subsets": EU_US}})])
    r = run(tmp_path)
    assert replicas(r) == {"eu-1": 2, "eu-2": 3, "us-1": 1, "us-2": 2, "us-3": 2, "ap-1": 0}
    s = status(r)
    assert s["unassignedClusters"] == ["ap-1"]
    assert s["subsetReplicas"] == {"eu": 5, "us": 5}
    assert condition(r, "ReplicasAllocated") == (
        "True",
        "Allocated",
        "Allocated 10 replicas to 2 subsets on 5 clusters",
    )
    assert not r.errors


def allocation(result: Any) -> dict[str, int]:
    """cluster -> r_c from the status (what the distribution decided, rolled out or not)."""
    return {
        c["name"]: c["replicas"]
        for sub in status(result)["subsetStatuses"]
        for c in sub["clusters"]
    }


def test_row16_joining_cluster_via_state(tmp_path: Path) -> None:
    clusters = {c: {"region": r} for c, r in CLUSTERS.items() if c != "us-3"}
    spec = {"replicas": 7, "topology": {"subsets": [subset("us", "us")]}}
    write_fleet(tmp_path, [rd(spec)], clusters=clusters)
    first = run(tmp_path)
    assert allocation(first) == {"us-1": 3, "us-2": 4}
    write_fleet(tmp_path, [rd(spec)])
    second = run(tmp_path, next_prior(first))
    assert allocation(second) == {"us-1": 2, "us-2": 3, "us-3": 2}


def test_row18_subset_without_clusters(tmp_path: Path) -> None:
    clusters = {c: {"region": r} for c, r in CLUSTERS.items() if c != "ap-1"}
    spec = {"replicas": 9, "topology": {"subsets": [*EU_US, subset("ap", "ap")]}}
    write_fleet(tmp_path, [rd(spec)], clusters=clusters)
    r = run(tmp_path)
    s = status(r)
    assert s["subsetReplicas"] == {"eu": 3, "us": 3, "ap": 3}
    assert (s["unplacedReplicas"], s["placedReplicas"]) == (3, 6)
    assert condition(r, "SubsetProvisioned") == (
        "False",
        "SubsetWithoutClusters",
        "Subsets without clusters: [ap]; 3 replicas are not placed",
    )


def test_row19_overlap(tmp_path: Path) -> None:
    clusters = {c: {"region": r} for c, r in CLUSTERS.items()}
    clusters["eu-1"]["tier"] = "gold"
    gold = {"name": "gold", "clusterSelector": {"matchLabels": {"tier": "gold"}}}
    write_fleet(
        tmp_path,
        [rd({"replicas": 6, "topology": {"subsets": [gold, subset("eu", "eu")]}})],
        clusters=clusters,
    )
    s = status(run(tmp_path))
    assert s["overlappingClusters"] == [{"cluster": "eu-1", "subsets": ["gold", "eu"]}]
    assert [c["name"] for c in s["subsetStatuses"][0]["clusters"]] == ["eu-1"]
    assert [c["name"] for c in s["subsetStatuses"][1]["clusters"]] == ["eu-2"]


def test_row20_unassigned_scaled_to_zero_without_subset_annotation(tmp_path: Path) -> None:
    write_fleet(tmp_path, [rd({"replicas": 4, "topology": {"subsets": EU_US}})])
    obj = workload_on(run(tmp_path), "ap-1")
    assert obj is not None and obj["spec"]["replicas"] == 0
    assert "gitfleet.io/subset" not in obj["metadata"]["annotations"]
    assert obj["metadata"]["annotations"]["gitfleet.io/replica-distribution"] == "shop/web"


PARTS = {
    "replicas": 12,
    "topology": {"subsets": EU_US},
    "updateStrategy": {"manualUpdate": {"partitions": {"eu": 4}}},
}


def test_row21_partition_written(tmp_path: Path) -> None:
    write_fleet(tmp_path, [rd(PARTS)])
    r = run(tmp_path)
    parts = {
        c: workload_on(r, c)["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
        for c in ("eu-1", "eu-2")
    }  # type: ignore[index]
    assert parts == {"eu-1": 1, "eu-2": 3}
    assert status(r)["subsetStatuses"][0]["partition"] == 4


def test_row22_partition_capped(tmp_path: Path) -> None:
    spec = {**PARTS, "updateStrategy": {"manualUpdate": {"partitions": {"eu": 10}}}}
    write_fleet(tmp_path, [rd(spec)])
    r = run(tmp_path)
    assert status(r)["subsetStatuses"][0]["partition"] == 6
    assert [c["partition"] for c in status(r)["subsetStatuses"][0]["clusters"]] == [3, 3]


def test_row23_deployment_ignores_partition(tmp_path: Path) -> None:
    deploy = {**statefulset(), "kind": "Deployment"}
    spec = {**PARTS, "workload": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}
    write_fleet(tmp_path, [rd(spec)], workload=deploy)
    r = run(tmp_path)
    obj = workload_on(r, "eu-1")
    assert obj is not None and obj["spec"]["replicas"] == 3
    assert "updateStrategy" not in obj["spec"]
    assert status(r)["warnings"] == [
        "PartitionIgnored: partitions are not written into a Deployment"
    ]


def test_row24_ondelete_statefulset(tmp_path: Path) -> None:
    write_fleet(tmp_path, [rd(PARTS)], workload=statefulset(updateStrategy={"type": "OnDelete"}))
    obj = workload_on(run(tmp_path), "eu-2")
    assert obj is not None and obj["spec"]["updateStrategy"] == {"type": "OnDelete"}


def test_row25_cloneset_v1alpha1(tmp_path: Path) -> None:
    clone = {**statefulset(), "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet"}
    spec = {
        **PARTS,
        "workload": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
    }
    write_fleet(tmp_path, [rd(spec)], workload=clone)
    r = run(tmp_path)
    got = {c: workload_on(r, c)["spec"]["updateStrategy"]["partition"] for c in ("eu-1", "eu-2")}  # type: ignore[index]
    assert got == {"eu-1": 1, "eu-2": 3}


def test_row26_hub_partition_kept_without_update_strategy(tmp_path: Path) -> None:
    hub = statefulset(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})
    write_fleet(tmp_path, [rd({"replicas": 6, "topology": {"subsets": EU_US}})], workload=hub)
    r = run(tmp_path)
    for c in CLUSTERS:
        assert workload_on(r, c)["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 2  # type: ignore[index]


SSD = {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}


def affinity_terms(obj: dict[str, Any] | None) -> Any:
    assert obj is not None
    spec = obj["spec"]["template"]["spec"]
    return (
        spec.get("affinity", {})
        .get("nodeAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution", {})
        .get("nodeSelectorTerms")
    )


def test_row27_node_affinity_appended_to_every_term(tmp_path: Path) -> None:
    hub = statefulset()
    t1 = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    t2 = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}
    hub["spec"]["template"]["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [t1, t2]}
        }
    }
    eu = subset("eu", "eu", nodeSelectorTerm=SSD)
    write_fleet(
        tmp_path,
        [rd({"replicas": 6, "topology": {"subsets": [eu, subset("us", "us")]}})],
        workload=hub,
    )
    r = run(tmp_path)
    ssd = SSD["matchExpressions"][0]
    assert affinity_terms(workload_on(r, "eu-1")) == [
        {"matchExpressions": [t1["matchExpressions"][0], ssd]},
        {"matchExpressions": [t2["matchExpressions"][0], ssd]},
    ]
    assert affinity_terms(workload_on(r, "us-1")) == [t1, t2]


def test_row28_node_affinity_created(tmp_path: Path) -> None:
    eu = subset("eu", "eu", nodeSelectorTerm=SSD)
    write_fleet(tmp_path, [rd({"replicas": 6, "topology": {"subsets": [eu, subset("us", "us")]}})])
    assert affinity_terms(workload_on(run(tmp_path), "eu-2")) == [SSD]


def test_row29_tolerations_appended(tmp_path: Path) -> None:
    hub = statefulset()
    hub["spec"]["template"]["spec"]["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    eu = subset("eu", "eu", tolerations=[{"key": "edge", "operator": "Exists"}])
    write_fleet(tmp_path, [rd({"replicas": 6, "topology": {"subsets": [eu]}})], workload=hub)
    obj = workload_on(run(tmp_path), "eu-1")
    assert obj is not None
    assert obj["spec"]["template"]["spec"]["tolerations"] == [
        {"key": "gpu", "operator": "Exists"},
        {"key": "edge", "operator": "Exists"},
    ]


def test_row30_strategic_merge_on_containers(tmp_path: Path) -> None:
    hub = statefulset()
    hub["spec"]["template"]["spec"]["containers"] = [
        {"name": "app", "image": "web:1", "env": [{"name": "A", "value": "1"}]},
        {"name": "sidecar", "image": "s:1"},
    ]
    patch = {
        "spec": {
            "containers": [
                {"name": "app", "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "3"}]},
                {"name": "sidecar", "$patch": "delete"},
            ]
        }
    }
    write_fleet(
        tmp_path,
        [rd({"replicas": 2, "topology": {"subsets": [subset("eu", "eu", patch=patch)]}})],
        workload=hub,
    )
    obj = workload_on(run(tmp_path), "eu-1")
    assert obj is not None
    assert obj["spec"]["template"]["spec"]["containers"] == [
        {
            "name": "app",
            "image": "web:1",
            "env": [{"name": "A", "value": "3"}, {"name": "B", "value": "2"}],
        }
    ]


def test_row31_null_deletes_label(tmp_path: Path) -> None:
    hub = statefulset()
    hub["spec"]["template"]["metadata"]["labels"] = {"app": "web", "tier": "x"}
    patch = {"metadata": {"labels": {"tier": None}}}
    write_fleet(
        tmp_path,
        [rd({"replicas": 2, "topology": {"subsets": [subset("eu", "eu", patch=patch)]}})],
        workload=hub,
    )
    obj = workload_on(run(tmp_path), "eu-2")
    assert obj is not None and obj["spec"]["template"]["metadata"]["labels"] == {"app": "web"}


def test_row32_unsupported_directive(tmp_path: Path) -> None:
    patch = {"spec": {"$setElementOrder/containers": [{"name": "web"}]}}
    write_fleet(
        tmp_path, [rd({"replicas": 2, "topology": {"subsets": [subset("eu", "eu", patch=patch)]}})]
    )
    r = run(tmp_path)
    assert condition(r, "ReplicasAllocated") == (
        "False",
        "InvalidSpec",
        "subset eu: patch directive $setElementOrder/containers is not supported",
    )
    error = next(e for e in r.errors if "setElementOrder" in e.message)
    assert error.file == "distributions/rd.yaml" and error.field == "spec.topology.subsets[0].patch"


def test_row33_override_then_owned_fields(tmp_path: Path) -> None:
    override = ro(
        "web-eu1",
        "eu-1",
        jsonPatchOverrides=[
            {"op": "replace", "path": "/spec/replicas", "value": 9},
            {
                "op": "add",
                "path": "/spec/template/spec/containers/0/env",
                "value": [{"name": "X", "value": "1"}],
            },
        ],
    )
    write_fleet(
        tmp_path,
        [rd({"replicas": 4, "topology": {"subsets": EU_US}})],
        clusters=labelled(),
        extra={"overrides/ro.yaml": [override]},
    )
    r = run(tmp_path)
    obj = workload_on(r, "eu-1")
    assert obj is not None and obj["spec"]["replicas"] == 1
    assert obj["spec"]["template"]["spec"]["containers"][0]["env"] == [{"name": "X", "value": "1"}]


def test_row34_delete_override_removes_member(tmp_path: Path) -> None:
    override = ro("no-web-us1", "us-1", overrideType="Delete")
    spec = {"replicas": 5, "topology": {"subsets": [subset("us", "us")]}}
    write_fleet(tmp_path, [rd(spec)], clusters=labelled(), extra={"overrides/ro.yaml": [override]})
    r = run(tmp_path)
    us = status(r)["subsetStatuses"][0]["clusters"]
    assert us == [{"name": "us-2", "replicas": 2}, {"name": "us-3", "replicas": 3}]
    assert workload_on(r, "us-1") is None


def test_row35_invalid_keeps_last_good_and_holds_new_cluster(tmp_path: Path) -> None:
    clusters = {c: {"region": r} for c, r in CLUSTERS.items() if c != "us-3"}
    good = {"replicas": 5, "topology": {"subsets": EU_US}}
    write_fleet(tmp_path, [rd(good)], clusters=clusters)
    first = run(tmp_path)
    before = replicas(first)
    bad = {
        "replicas": 5,
        "topology": {
            "subsets": [subset("eu", "eu", replicas="50%"), subset("us", "us", replicas="50%")]
        },
    }
    write_fleet(tmp_path, [rd(bad)])
    second = run(tmp_path, next_prior(first))
    after = replicas(second)
    assert {c: after[c] for c in before} == before
    assert "us-3" not in after
    placement = yaml.safe_load(second.files["status/placements/web.yaml"])
    us3 = next(
        e for e in expand_cluster_statuses(placement["status"]) if e["clusterName"] == "us-3"
    )
    overridden = next(c for c in us3["conditions"] if c["type"] == "Overridden")
    assert (overridden["status"], overridden["reason"]) == ("False", "OverriddenFailed")
    assert overridden["message"] == (
        "ReplicaDistribution shop/web is invalid: sum of subset replicas (6) is greater than spec.replicas (5)"
    )


@pytest.mark.parametrize(("hub_replicas", "total"), [(3, 3), (None, 1)])
def test_row36_default_total(tmp_path: Path, hub_replicas: int | None, total: int) -> None:
    write_fleet(
        tmp_path, [rd({"topology": {"subsets": EU_US}})], workload=statefulset(hub_replicas)
    )
    assert status(run(tmp_path))["replicas"] == total


def test_row37_scale_changes_every_member_result(tmp_path: Path) -> None:
    write_fleet(tmp_path, [rd({"replicas": 10, "topology": {"subsets": EU_US}})])
    first = run(tmp_path)
    write_fleet(tmp_path, [rd({"replicas": 20, "topology": {"subsets": EU_US}})])
    second = run(tmp_path, next_prior(first))
    a, b = allocation(first), allocation(second)
    assert all(b[c] != a[c] for c in a)
    assert sum(b.values()) == 20
    # what each cluster renders now is in its file; status shows it where it differs
    rows = [c for sub in status(second)["subsetStatuses"] for c in sub["clusters"]]
    for row in rows:
        obj = workload_on(second, row["name"])
        rendered = obj["spec"]["replicas"] if obj is not None else 0
        assert row.get("renderedReplicas", row["replicas"]) == rendered


def test_row38_second_rd_conflicts(tmp_path: Path) -> None:
    spec = {"replicas": 10, "topology": {"subsets": EU_US}}
    write_fleet(tmp_path, [rd(spec)])
    first = run(tmp_path)
    write_fleet(
        tmp_path, [rd(spec), rd({"replicas": 2, "topology": {"subsets": EU_US}}, name="web2")]
    )
    second = run(tmp_path, next_prior(first))
    assert condition(second, "ReplicasAllocated", "web2") == (
        "False",
        "Conflict",
        "workload apps/v1 StatefulSet shop/web is also distributed by ReplicaDistribution shop/web",
    )
    assert replicas(second) == replicas(first)
    assert (
        second.files["state/replicadistributions/shop/web.yaml"]
        == first.files["state/replicadistributions/shop/web.yaml"]
    )


def test_row39_workload_not_found(tmp_path: Path) -> None:
    spec = {
        "workload": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "nope"},
        "topology": {"subsets": EU_US},
    }
    write_fleet(tmp_path, [rd(spec)])
    assert condition(run(tmp_path), "ReplicasAllocated") == (
        "False",
        "WorkloadNotFound",
        "workload apps/v1 StatefulSet shop/nope is not in resources/",
    )


def test_row40_unsupported_workload(tmp_path: Path) -> None:
    spec = {
        "workload": {"apiVersion": "batch/v1", "kind": "Job", "name": "web"},
        "topology": {"subsets": EU_US},
    }
    write_fleet(tmp_path, [rd(spec)])
    r = run(tmp_path)
    assert condition(r, "ReplicasAllocated") == (
        "False",
        "UnsupportedWorkload",
        "workload kind batch/v1 Job is not supported",
    )
    assert condition(r, "SubsetProvisioned") is None
    assert replicas(r)["eu-1"] == 3


def test_row41_adaptive_rejected(tmp_path: Path) -> None:
    spec = {"replicas": 4, "topology": {"subsets": EU_US, "scheduleStrategy": {"type": "Adaptive"}}}
    write_fleet(tmp_path, [rd(spec)])
    assert condition(run(tmp_path), "ReplicasAllocated") == (
        "False",
        "InvalidSpec",
        "topology.scheduleStrategy.type Adaptive is not supported",
    )


def test_row42_zero_replicas(tmp_path: Path) -> None:
    write_fleet(tmp_path, [rd({"replicas": 0, "topology": {"subsets": EU_US}})])
    r = run(tmp_path)
    assert set(replicas(r).values()) == {0}
    assert condition(r, "SubsetProvisioned") == (
        "True",
        "AllSubsetsProvisioned",
        "Every subset with replicas has at least one cluster",
    )


def test_row43_deterministic_and_no_new_state(tmp_path: Path) -> None:
    write_fleet(tmp_path, [rd({"replicas": 10, "topology": {"subsets": EU_US}})])
    first = run(tmp_path)
    assert run(tmp_path).files == first.files
    again = run(tmp_path, next_prior(first))
    assert again.files == first.files


def test_placement_of_other_objects_untouched(tmp_path: Path) -> None:
    write_fleet(tmp_path, [rd({"replicas": 10, "topology": {"subsets": EU_US}})])
    r = run(tmp_path)
    ns = yaml.safe_load(r.files["clusters/eu-1/web/namespace_shop.yaml"])
    assert "annotations" not in ns["metadata"]
    assert PLACEMENT["metadata"]["name"] == "web"

"""PlacementDecision slices, ClusterProfiles, and the stored clusterDecision of bindings."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import yaml

from gitfleet.api.shards import shard_count, shard_of
from gitfleet.load.yamlio import dump_yaml
from reconciler.decisions import cluster_profile_documents, decision_documents, label_value
from reconciler.state import (
    Binding,
    BindingDecision,
    PlacementState,
    State,
    read_state,
    state_files,
)
from tests.unit.schedule.fleet import cluster, fleet


@pytest.mark.parametrize(
    ("count", "shards", "indexed"),
    [(0, 1, False), (1, 1, False), (100, 1, False), (101, 4, True), (250, 8, True)],
)
def test_decision_slices(count: int, shards: int, indexed: bool) -> None:
    names = [f"c{i:03}" for i in reversed(range(count))]
    docs = decision_documents("web", "web", "fleet-system", names)
    assert shard_count(count) == shards
    if shards == 1:  # one slice, all clusters sorted, as before shards
        assert [p for p, _ in docs] == ["decisions/web-0.yaml"]
    else:  # shard i is slice i; each cluster in its shard's slice, each slice sorted
        assert [p for p, _ in docs] == [f"decisions/web-{i}.yaml" for i in range(shards)]
    for i, (_, doc) in enumerate(docs):
        listed = [e["clusterProfileRef"]["name"] for e in doc["decisions"]]
        assert listed == sorted(listed) and {shard_of(c, shards) for c in listed} <= {i}
        labels = doc["metadata"]["labels"]
        assert labels["multicluster.x-k8s.io/decision-key"] == "web"
        assert labels["multicluster.x-k8s.io/placement-key"] == "web"
        assert labels.get("multicluster.x-k8s.io/decision-index") == (str(i) if indexed else None)
        revision = hashlib.sha256("\n".join(listed).encode()).hexdigest()[:16]
        assert doc["metadata"]["annotations"]["gitfleet.io/decision-revision"] == revision
        assert (doc["apiVersion"], doc["kind"], doc["schedulerName"]) == (
            "multicluster.x-k8s.io/v1alpha1",
            "PlacementDecision",
            "gitfleet",
        )
    flat = sorted(e["clusterProfileRef"]["name"] for _, d in docs for e in d["decisions"])
    assert flat == sorted(names)


def test_decision_reason_and_profile_namespace() -> None:
    [(_, doc)] = decision_documents("ns.app", "app", "ns", ["b", "a"], reasons={"a": "picked"})
    assert doc["decisions"] == [
        {"clusterProfileRef": REF | {"name": "a"}, "reason": "picked"},
        {"clusterProfileRef": REF | {"name": "b"}},
    ]
    [(_, same)] = decision_documents("app", "app", "fleet-system", ["a"])
    assert same["decisions"] == [{"clusterProfileRef": REF | {"name": "a"}}]
    [(_, crp)] = decision_documents("app", "app", "", ["a"])
    assert crp["metadata"]["namespace"] == "fleet-system"


REF = {
    "apiVersion": "multicluster.x-k8s.io/v1alpha1",
    "kind": "ClusterProfile",
    "namespace": "fleet-system",
}


@pytest.mark.parametrize(
    ("text", "ok"),
    [("web", True), ("ns.web", True), ("x" * 63, True), ("x" * 64, False), ("-bad", False)],
)
def test_label_value(text: str, ok: bool) -> None:
    value = label_value(text)
    assert (value == text) is ok
    assert len(value) <= 63 and value[0].isalnum() and value[-1].isalnum()


def test_cluster_profiles() -> None:
    views = fleet(
        cluster("b", {"env": "prod"}, props={"kubernetes-fleet.io/node-count": "3"}), cluster("a")
    )
    docs = cluster_profile_documents(views)
    assert [p for p, _ in docs] == ["clusterprofiles/a.yaml", "clusterprofiles/b.yaml"]
    b = docs[1][1]
    assert b["metadata"] == {
        "name": "b",
        "namespace": "fleet-system",
        "labels": {"env": "prod", "x-k8s.io/cluster-manager": "gitfleet"},
    }
    assert b["spec"] == {"displayName": "b", "clusterManager": {"name": "gitfleet"}}
    assert b["status"] == {"properties": [{"name": "kubernetes-fleet.io/node-count", "value": "3"}]}
    assert "status" not in docs[0][1]
    # Accepted back as an inventory source by the loader's ClusterProfile kind.
    from gitfleet.api import ClusterProfile

    ClusterProfile.model_validate(b)


@pytest.mark.parametrize(
    "decision",
    [
        None,
        BindingDecision(
            'Successfully scheduled resources for placement in "a": picked by scheduling policy'
        ),
        BindingDecision("r", 12, -1000),
    ],
)
def test_binding_decision_round_trips(decision: BindingDecision | None) -> None:
    b = Binding("a", "Bound", 2, 3, decision=decision)
    files = state_files(State(placements={"p": PlacementState(key="p", bindings=(b,))}))
    doc = yaml.safe_load(files["state/placements/p.yaml"])
    stored = doc["bindings"][0]
    if decision is not None and decision.scored:
        assert stored["clusterDecision"]["clusterScore"] == {
            "affinityScore": 12,
            "topologySpreadScore": -1000,
        }
    state, problems = read_state(files)
    assert not problems and state.placements["p"].bindings == (b,)


def test_malformed_cluster_decision_is_reported_not_raised() -> None:
    doc = {
        "apiVersion": "gitfleet.io/v1alpha1",
        "kind": "PlacementState",
        "metadata": {"name": "p"},
        "bindings": [
            {"cluster": "a", "state": "Bound", "policyIndex": 0, "clusterDecision": "oops"}
        ],
    }
    state, problems = read_state({"state/placements/p.yaml": dump_yaml(doc).encode()})
    assert "p" not in state.placements and problems


def test_profile_files_made_again_only_for_another_member_cluster() -> None:
    """`publish.profile_files` reuses a profile while its MemberCluster is the same object and
    equals the documents made afresh after a relabel, a rename or a new cluster."""
    from dataclasses import replace

    from reconciler.output import yaml_bytes
    from reconciler.publish import profile_files

    def fresh(views: dict[str, Any]) -> dict[str, bytes]:
        return {p: yaml_bytes(d) for p, d in cluster_profile_documents(views)}

    views = dict(fleet(cluster("b", {"env": "prod"}), cluster("a")))
    assert profile_files(views) == fresh(views)
    first = profile_files(views)
    views["b"] = fleet(cluster("b", {"env": "dev"}))["b"]  # relabelled: another object
    assert profile_files(views) == fresh(views) != first
    views["c"] = replace(views["a"], name="c")  # the same MemberCluster under another name
    got = profile_files(views)
    assert got == fresh(views) and "clusterprofiles/c.yaml" in got

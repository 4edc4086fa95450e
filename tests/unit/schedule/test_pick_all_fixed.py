"""Scheduling cycles for PickAll (spec §1.5) and PickFixed (§1.7): bindings and decisions."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.api import ClusterResourcePlacement, MemberCluster
from reconciler.schedule.clusters import ClusterView
from reconciler.schedule.cycle import schedule_pick_all, schedule_pick_fixed
from reconciler.state import Binding


def view(
    name: str,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    props: dict[str, str] | None = None,
    ineligible: str | None = None,
) -> ClusterView:
    body: dict[str, Any] = {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"taints": taints or []},
    }
    if props:
        body["status"] = {"properties": {k: {"value": v} for k, v in props.items()}}
    return ClusterView(name, MemberCluster.model_validate(body), ineligible)


def policy(**spec: Any) -> Any:
    crp = ClusterResourcePlacement.model_validate(
        {
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "p"},
            "spec": {
                "resourceSelectors": [
                    {"group": "", "version": "v1", "kind": "Namespace", "name": "a"}
                ],
                "policy": {"placementType": "PickAll", **spec},
            },
        }
    )
    return crp.spec.policy


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "clusterAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": list(terms)}
        }
    }


VIEWS = {
    v.name: v
    for v in [
        view("a", {"env": "prod"}, props={"kubernetes-fleet.io/node-count": "5"}),
        view("b", {"env": "dev"}, props={"kubernetes-fleet.io/node-count": "2"}),
        view(
            "c", {"env": "prod"}, taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
        ),
        view(
            "d",
            {"env": "prod"},
            ineligible="cluster is not connected to the fleet: member agent not online yet",
        ),
    ]
}


@pytest.mark.parametrize(
    ("spec", "picked", "filtered"),
    [
        (
            {},
            ["a", "b"],
            {
                "c": "taint &{Key:gpu Value:true Effect:NoSchedule} cannot be tolerated",
                "d": "cluster is not connected to the fleet: member agent not online yet",
            },
        ),
        (
            {"tolerations": [{"key": "gpu", "operator": "Exists"}]},
            ["a", "b", "c"],
            {"d": "cluster is not connected"},
        ),
        (
            {"affinity": required({"labelSelector": {"matchLabels": {"env": "prod"}}})},
            ["a"],
            {"b": "cluster does not match with any of the required cluster affinity terms"},
        ),
        (
            {
                "affinity": required(
                    {
                        "propertySelector": {
                            "matchExpressions": [
                                {
                                    "name": "kubernetes-fleet.io/node-count",
                                    "operator": "Ge",
                                    "values": ["3"],
                                }
                            ]
                        }
                    }
                )
            },
            ["a"],
            {"b": "cluster does not match", "c": "cluster does not match"},
        ),
        (
            {
                "affinity": required(
                    {"labelSelector": {"matchLabels": {"env": "dev"}}},
                    {
                        "labelSelector": {"matchLabels": {"env": "prod"}},
                        "propertySelector": {
                            "matchExpressions": [
                                {
                                    "name": "kubernetes-fleet.io/node-count",
                                    "operator": "Gt",
                                    "values": ["4"],
                                }
                            ]
                        },
                    },
                )
            },
            ["a", "b"],
            {},
        ),
    ],
)
def test_pick_all_filters(
    spec: dict[str, Any], picked: list[str], filtered: dict[str, str]
) -> None:
    out = schedule_pick_all(policy(**spec), [], VIEWS, 0)
    assert [d.cluster for d in out.decisions if d.selected] == picked
    assert [b.cluster for b in out.bindings] == picked
    assert all(b.state == "Scheduled" for b in out.bindings)
    rejected = {d.cluster: d.reason for d in out.decisions if not d.selected}
    for name, reason in filtered.items():
        assert rejected[name].startswith("ClusterUnschedulable, " + reason)
    assert out.fulfilled and out.message.endswith(f"found {len(picked)} cluster(s)")


def test_pick_all_keeps_bound_cluster_that_no_longer_matches() -> None:
    """IgnoredDuringExecution: a current-policy binding stays; the cluster is listed once."""
    prior = [Binding("b", "Bound", 0, 0)]
    out = schedule_pick_all(
        policy(affinity=required({"labelSelector": {"matchLabels": {"env": "prod"}}})),
        prior,
        VIEWS,
        0,
    )
    assert [(b.cluster, b.state) for b in out.bindings] == [("a", "Scheduled"), ("b", "Bound")]
    assert [d.cluster for d in out.decisions].count("b") == 1


def test_pick_all_new_policy_unschedules_obsolete_and_patches_picked() -> None:
    prior = [Binding("a", "Bound", 0, 3), Binding("b", "Bound", 0, 3)]
    out = schedule_pick_all(
        policy(affinity=required({"labelSelector": {"matchLabels": {"env": "prod"}}})),
        prior,
        VIEWS,
        1,
    )
    by = {b.cluster: b for b in out.bindings}
    assert (by["a"].state, by["a"].policy_index, by["a"].resource_index) == ("Bound", 1, 3)
    assert (by["b"].state, by["b"].previous_state) == ("Unscheduled", "Bound")


def test_dangling_binding_is_unscheduled() -> None:
    out = schedule_pick_all(policy(), [Binding("gone", "Bound", 0, 0)], VIEWS, 0)
    gone = next(b for b in out.bindings if b.cluster == "gone")
    assert (gone.state, gone.previous_state) == ("Unscheduled", "Bound")


def test_pick_fixed_decisions_and_condition() -> None:
    out = schedule_pick_fixed(["a", "d", "zz"], [], VIEWS, 0)
    assert [(d.cluster, d.selected) for d in out.decisions] == [
        ("a", True),
        ("d", False),
        ("zz", False),
    ]
    assert (
        out.decisions[0].reason
        == 'Successfully scheduled resources for placement in "a": picked by scheduling policy'
    )
    assert out.decisions[1].reason.startswith(
        'Cluster "d" is not eligible for resource placement yet: cluster is not connected'
    )
    assert out.decisions[2].reason == 'Specified cluster "zz" is not found'
    assert out.fulfilled is False
    assert (
        out.message
        == "could not find all clusters needed as specified by the scheduling policy, found 1 cluster(s) instead"
    )
    assert [b.cluster for b in out.bindings] == ["a"]


def test_pick_fixed_ignores_taints_and_keeps_current_binding_of_ineligible_cluster() -> None:
    out = schedule_pick_fixed(["c", "d"], [Binding("d", "Bound", 0, 0)], VIEWS, 0)
    assert [(b.cluster, b.state) for b in out.bindings] == [("c", "Scheduled"), ("d", "Bound")]


def test_pick_fixed_empty_names_decides_nothing() -> None:
    out = schedule_pick_fixed([], [], VIEWS, 0)
    assert out.fulfilled is None and out.decisions == ()

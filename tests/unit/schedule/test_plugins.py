"""Filter and score plugins, one table each (spec §1.3.1-§1.3.6), run through the framework."""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.schedule.clusteraffinity import go_round
from reconciler.schedule.errors import ScheduleError
from reconciler.schedule.framework import (
    ClusterScore,
    Code,
    CycleState,
    Evaluation,
    PlacementInfo,
    Status,
    evaluate,
    rank_scored,
)
from reconciler.schedule.profile import DEFAULT_PROFILE
from tests.unit.schedule.fleet import (
    cluster,
    crp,
    fleet,
    preferred,
    prop,
    required,
    rp,
    sorter,
)

NODES = "kubernetes-fleet.io/node-count"


def run(
    placement: Any, views: Any, current: tuple[str, ...] = (), obsolete: tuple[str, ...] = ()
) -> Evaluation:
    ns = placement.metadata.namespace if placement.kind == "ResourcePlacement" else None
    state = CycleState(
        PlacementInfo(placement.spec.policy, ns),
        views,
        [views[n] for n in sorted(views)],
        frozenset(current),
        frozenset(obsolete),
        {},
    )
    return evaluate(DEFAULT_PROFILE, state, with_scores=True)


def reasons(ev: Evaluation) -> dict[str, str]:
    return {name: str(status) for name, status in ev.filtered.items()}


@pytest.mark.parametrize(
    ("x", "want"),
    [(2.5, 3), (-2.5, -3), (2.4999, 2), (-2.4999, -2), (0.5, 1), (-0.5, -1), (0.0, 0), (7.0, 7)],
)
def test_go_round_is_half_away_from_zero(x: float, want: int) -> None:
    assert go_round(x) == want


def test_status_string_and_score_order() -> None:
    assert str(Status(Code.UNSCHEDULABLE, ("a", "b"))) == "ClusterUnschedulable, a, b"
    # Topology dominates affinity, which dominates the obsolete tie-breaker.
    assert ClusterScore(topology=1) > ClusterScore(affinity=100, obsolete=1)
    assert ClusterScore(affinity=1) > ClusterScore(obsolete=1)
    scores = {"cluster-3": ClusterScore(), "cluster-4": ClusterScore(), "x": ClusterScore(-1)}
    assert rank_scored(scores) == ["cluster-4", "cluster-3", "x"]


FLEET = fleet(
    cluster(
        "a",
        {"env": "prod"},
        props={NODES: "5"},
        usage={"allocatable": {"cpu": "4", "memory": "8Gi"}},
    ),
    cluster("b", {"env": "dev"}, props={NODES: "2"}, usage={"allocatable": {"cpu": "500m"}}),
    cluster("c", {"env": "prod"}),
)
NO_MATCH = (
    "ClusterUnschedulable, cluster does not match with any of the required cluster affinity terms"
)


@pytest.mark.parametrize(
    ("terms", "passed"),
    [
        ([], ["a", "b", "c"]),
        ([{"labelSelector": {"matchLabels": {"env": "prod"}}}], ["a", "c"]),
        ([{"labelSelector": {}}], ["a", "b", "c"]),
        (
            [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "env", "operator": "NotIn", "values": ["prod"]}
                        ]
                    }
                }
            ],
            ["b"],
        ),
        (
            [{"labelSelector": {"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]}}],
            [],
        ),
        ([prop(NODES, "Eq", "5")], ["a"]),
        ([prop(NODES, "Ne", "5")], ["b"]),
        ([prop(NODES, "Gt", "2")], ["a"]),
        ([prop(NODES, "Ge", "2")], ["a", "b"]),
        ([prop(NODES, "Lt", "5")], ["b"]),
        ([prop(NODES, "Le", "5")], ["a", "b"]),
        ([prop("resources.kubernetes-fleet.io/allocatable-cpu", "Ge", "1")], ["a"]),
        ([prop("resources.kubernetes-fleet.io/allocatable-cpu", "Eq", "500m")], ["b"]),
        ([prop("resources.kubernetes-fleet.io/allocatable-memory", "Ge", "8192Mi")], ["a"]),
        ([prop("resources.kubernetes-fleet.io/total-cpu", "Ge", "0")], []),
        # Terms are OR-ed; label and property selector inside a term are AND-ed.
        ([{"labelSelector": {"matchLabels": {"env": "dev"}}}, prop(NODES, "Gt", "4")], ["a", "b"]),
        ([{"labelSelector": {"matchLabels": {"env": "prod"}}, **prop(NODES, "Lt", "5")}], []),
    ],
)
def test_required_affinity_filter(terms: list[dict[str, Any]], passed: list[str]) -> None:
    ev = run(crp(affinity=required(*terms) if terms else None), FLEET)
    assert list(ev.passed) == passed
    assert all(r == NO_MATCH for r in reasons(ev).values())
    assert all(s.plugin == "ClusterAffinity" for s in ev.filtered.values())


@pytest.mark.parametrize(
    ("term", "needle"),
    [
        (
            prop("resources.kubernetes-fleet.io/allocatable-ephemeral-storage", "Ge", "1"),
            "invalid resource property name",
        ),
        (prop("resources.kubernetes-fleet.io/used-cpu", "Ge", "1"), "invalid capacity type"),
        (prop(NODES, "Ge", "1", "2"), "exactly one value"),
        (prop(NODES, "Ge", "lots"), "cannot parse"),
    ],
)
def test_required_affinity_errors_abort_the_cycle(term: dict[str, Any], needle: str) -> None:
    with pytest.raises(ScheduleError, match=needle):
        run(crp(affinity=required(term)), FLEET)


def test_unparsable_property_value_is_an_error_not_a_filter() -> None:
    views = fleet(cluster("a", props={NODES: "many"}))
    with pytest.raises(ScheduleError, match="cannot parse"):
        run(crp(affinity=required(prop(NODES, "Ge", "1"))), views)


SCORE_FLEET = fleet(
    cluster("lo", {"tier": "x"}, props={NODES: "0"}),
    cluster("mid", {"tier": "x"}, props={NODES: "1"}),
    cluster("hi", {"tier": "y"}, props={NODES: "2"}),
    cluster("none", {"tier": "x"}),
)


@pytest.mark.parametrize(
    ("terms", "want"),
    [
        (
            [(20, {"labelSelector": {"matchLabels": {"tier": "x"}}})],
            {"lo": 20, "mid": 20, "hi": 0, "none": 20},
        ),
        (
            [(-30, {"labelSelector": {"matchLabels": {"tier": "y"}}})],
            {"lo": 0, "mid": 0, "hi": -30, "none": 0},
        ),
        ([(0, {})], {"lo": 0, "mid": 0, "hi": 0, "none": 0}),
        (
            [(10, {}), (5, {"labelSelector": {"matchLabels": {"tier": "y"}}})],
            {"lo": 10, "mid": 10, "hi": 15, "none": 10},
        ),
        # Interpolation over the fleet-wide min (0) and max (2); 0.5 * 5 = 2.5 rounds to 3.
        ([(5, sorter(NODES))], {"lo": 0, "mid": 3, "hi": 5, "none": 0}),
        ([(-5, sorter(NODES))], {"lo": 0, "mid": -3, "hi": -5, "none": 0}),
        ([(5, sorter(NODES, "Ascending"))], {"lo": 5, "mid": 3, "hi": 0, "none": 0}),
        (
            [(100, sorter(NODES, "Descending", labelSelector={"matchLabels": {"tier": "x"}}))],
            {"lo": 0, "mid": 50, "hi": 0, "none": 0},
        ),
    ],
)
def test_preferred_affinity_score(
    terms: list[tuple[int, dict[str, Any]]], want: dict[str, int]
) -> None:
    ev = run(crp("PickN", numberOfClusters=1, affinity=preferred(*terms)), SCORE_FLEET)
    assert {n: s.affinity for n, s in ev.scores.items()} == want


def test_sorter_min_max_spans_filtered_clusters_and_equal_bounds_give_zero() -> None:
    views = fleet(
        cluster("a", {"ok": "1"}, props={NODES: "3"}),
        cluster("b", {"ok": "1"}, props={NODES: "3"}),
        cluster("big", props={NODES: "9"}, ineligible="cluster has left the fleet"),
    )
    affinity = {
        **preferred((10, sorter(NODES))),
        **required({"labelSelector": {"matchLabels": {"ok": "1"}}}),
    }
    merged = {"clusterAffinity": {**affinity["clusterAffinity"]}}
    ev = run(crp("PickN", numberOfClusters=1, affinity=merged), views)
    assert {n: s.affinity for n, s in ev.scores.items()} == {"a": 0, "b": 0}  # min 3, max 9
    alone = fleet(cluster("a", props={NODES: "3"}), cluster("b", props={NODES: "3"}))
    ev = run(crp("PickN", numberOfClusters=1, affinity=preferred((10, sorter(NODES)))), alone)
    assert {n: s.affinity for n, s in ev.scores.items()} == {"a": 0, "b": 0}


def test_eligibility_filter_runs_after_affinity() -> None:
    views = fleet(
        cluster(
            "a",
            {"env": "dev"},
            ineligible="cluster is not connected to the fleet: member agent not joined yet",
        ),
        cluster(
            "b",
            {"env": "prod"},
            ineligible="cluster is not connected to the fleet: member agent not joined yet",
        ),
    )
    ev = run(crp(affinity=required({"labelSelector": {"matchLabels": {"env": "prod"}}})), views)
    assert reasons(ev) == {
        "a": NO_MATCH,
        "b": "ClusterUnschedulable, cluster is not connected to the fleet: member agent not joined yet",
    }
    assert ev.filtered["b"].plugin == "ClusterEligibility"


NS_FLEET = fleet(
    cluster("plain"),
    cluster("has", namespaces={"web": "Active"}, ns_collected=True),
    cluster("lacks", namespaces={"other": "Active"}, ns_collected=True),
    cluster("unknown", ns_collected=True),
    cluster("nocondition", namespaces={"other": "Active"}),
)


@pytest.mark.parametrize(
    ("placement", "filtered"),
    [
        (crp(), {}),
        (
            rp("web"),
            {
                "lacks": "ClusterUnschedulable, target namespace does not exist on cluster",
                "unknown": "ClusterUnschedulable, cluster has no namespace information available",
            },
        ),
    ],
)
def test_namespace_affinity(placement: Any, filtered: dict[str, str]) -> None:
    assert reasons(run(placement, NS_FLEET)) == filtered


TAINTED = fleet(
    cluster("clean"),
    cluster("gpu", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]),
    cluster(
        "two",
        taints=[
            {"key": "a", "effect": "NoSchedule"},
            {"key": "b", "value": "1", "effect": "NoSchedule"},
        ],
    ),
)


@pytest.mark.parametrize(
    ("tolerations", "filtered"),
    [
        (
            [],
            {
                "gpu": "taint &{Key:gpu Value:true Effect:NoSchedule} cannot be tolerated",
                "two": "taint &{Key:a Value: Effect:NoSchedule} cannot be tolerated",
            },
        ),
        ([{"operator": "Exists"}], {}),
        (
            [
                {"key": "gpu", "operator": "Exists"},
                {"key": "a", "operator": "Exists", "effect": "NoSchedule"},
            ],
            {"two": "taint &{Key:b Value:1 Effect:NoSchedule} cannot be tolerated"},
        ),
        (
            [{"key": "gpu", "operator": "Equal", "value": "false"}],
            {
                "gpu": "taint &{Key:gpu Value:true Effect:NoSchedule} cannot be tolerated",
                "two": "taint &{Key:a Value: Effect:NoSchedule} cannot be tolerated",
            },
        ),
        (
            [
                {"key": "gpu", "value": "true"},
                {"key": "a", "value": ""},
                {"key": "b", "value": "1"},
            ],
            {},
        ),
    ],
)
def test_taint_toleration(tolerations: list[dict[str, str]], filtered: dict[str, str]) -> None:
    ev = run(crp(tolerations=tolerations), TAINTED)
    assert reasons(ev) == {k: "ClusterUnschedulable, " + v for k, v in filtered.items()}


def test_same_placement_affinity_filter_and_obsolete_score() -> None:
    views = fleet(cluster("a"), cluster("b"), cluster("c", {"env": "x"}))
    ev = run(crp("PickN", numberOfClusters=3), views, current=("a",), obsolete=("b",))
    assert ev.already_selected == {"a"} and "a" not in ev.filtered
    assert {n: s.obsolete for n, s in ev.scores.items()} == {"b": 1, "c": 0}
    # A selected cluster failing an earlier filter is reported as filtered, not already selected.
    ev = run(
        crp(affinity=required({"labelSelector": {"matchLabels": {"env": "x"}}})),
        views,
        current=("a",),
    )
    assert "a" in ev.filtered and not ev.already_selected

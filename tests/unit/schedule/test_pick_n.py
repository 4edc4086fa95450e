"""PickN cycles (spec §1.6): picking, tie-breaks, downscale, no-op, scale out, stickiness."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from reconciler.schedule.bindingset import downscale_victims
from reconciler.schedule.cycle import schedule
from reconciler.schedule.errors import ScheduleError
from reconciler.schedule.outcome import ScheduleOutcome
from reconciler.state import Binding, BindingDecision
from tests.unit.schedule.fleet import cluster, crp, fleet, preferred, prop, required, sorter

NODES = "kubernetes-fleet.io/node-count"


def pick_n(n: int, **policy: Any) -> Any:
    return crp("PickN", numberOfClusters=n, **policy)


def selected(out: ScheduleOutcome) -> list[str]:
    return sorted(b.cluster for b in out.bindings if b.state in ("Scheduled", "Bound"))


def bind(out: ScheduleOutcome) -> list[Binding]:
    """What the lead does after scheduling: bind Scheduled, delete Unscheduled."""
    return [
        replace(b, state="Bound", resource_index=0, previous_state=None)
        for b in out.bindings
        if b.state != "Unscheduled"
    ]


GREEK = fleet(cluster("alpha"), cluster("beta"), cluster("gamma"))


def test_ties_break_by_reverse_name() -> None:
    out = schedule(pick_n(2), [], GREEK, 0)
    assert selected(out) == ["beta", "gamma"]
    assert out.fulfilled and out.message.endswith("found 2 cluster(s)")
    assert [(d.cluster, d.selected) for d in out.decisions] == [
        ("beta", True),
        ("gamma", True),
        ("alpha", False),
    ]
    assert (
        out.decisions[2].reason
        == 'Cluster "alpha" does not score high enough (affinity score: 0, topology spread score: 0)'
    )
    assert {n: e.rank for n, e in out.explanations.items()} == {"gamma": 1, "beta": 2, "alpha": 3}


def test_preferences_pick_highest_score() -> None:
    views = fleet(*(cluster(f"c{i}", props={NODES: str(i)}) for i in range(4)))
    out = schedule(pick_n(2, affinity=preferred((10, sorter(NODES, "Ascending")))), [], views, 0)
    assert selected(out) == ["c0", "c1"]
    by = {d.cluster: d for d in out.decisions}
    assert (by["c0"].affinity_score, by["c1"].affinity_score) == (10, 7)
    assert by["c2"].reason.endswith("(affinity score: 3, topology spread score: 0)")


@pytest.mark.parametrize(
    ("n", "present", "want"),
    [
        (0, 0, []),
        (3, 3, ["alpha", "beta", "gamma"]),
        (5, 3, ["alpha", "beta", "gamma"]),
    ],
)
def test_condition_counts(n: int, present: int, want: list[str]) -> None:
    out = schedule(pick_n(n), [], GREEK, 0)
    assert selected(out) == want
    assert out.fulfilled is (len(want) >= n)
    if out.fulfilled:
        assert (
            out.message
            == f"found all cluster needed as specified by the scheduling policy, found {len(want)} cluster(s)"
        )
    else:
        assert (
            out.message
            == f"could not find all clusters needed as specified by the scheduling policy, found {len(want)} cluster(s) instead"
        )
        assert out.reason == "SchedulingPolicyUnfulfilled"


def scored(cluster: str, state: str, topo: int | None, aff: int | None = 0) -> Binding:
    decision = BindingDecision("r", aff, topo) if topo is not None else BindingDecision("r")
    return Binding(cluster, state, 0, 0, decision=decision)


@pytest.mark.parametrize(
    ("bindings", "count", "victims"),
    [
        # Scheduled ones go first, lowest score first when only some go.
        (
            [scored("a", "Bound", 0), scored("b", "Scheduled", 5), scored("c", "Scheduled", 1)],
            1,
            ["c"],
        ),
        (
            [scored("a", "Bound", 0), scored("b", "Scheduled", 5), scored("c", "Scheduled", 1)],
            2,
            ["c", "b"],
        ),
        # Then Bound: no score first, then lowest (topology before affinity), then smaller name.
        (
            [scored("a", "Bound", 1), scored("b", "Bound", None), scored("c", "Bound", 0, 50)],
            2,
            ["b", "c"],
        ),
        (
            [scored("z", "Bound", 0), scored("y", "Bound", 0), scored("x", "Bound", 0, 1)],
            2,
            ["y", "z"],
        ),
        ([scored("a", "Bound", 0, -5), scored("b", "Bound", 0, 5)], 1, ["a"]),
    ],
)
def test_downscale_victim_order(bindings: list[Binding], count: int, victims: list[str]) -> None:
    current = {b.cluster: b for b in bindings}
    assert [b.cluster for b in downscale_victims(current, count)] == victims


def test_downscale_marks_victims_and_obsolete_unscheduled() -> None:
    views = fleet(cluster("a"), cluster("b"), cluster("c"), cluster("old"))
    prior = [
        replace(scored("a", "Bound", 0, 10), policy_index=1),
        replace(scored("b", "Bound", 0, 20), policy_index=1),
        replace(scored("c", "Bound", 0, 30), policy_index=1),
        Binding("old", "Bound", 0, 0),
    ]
    out = schedule(pick_n(2), prior, views, 1)
    states = {b.cluster: (b.state, b.previous_state) for b in out.bindings}
    assert states == {
        "a": ("Unscheduled", "Bound"),
        "b": ("Bound", None),
        "c": ("Bound", None),
        "old": ("Unscheduled", "Bound"),
    }
    assert out.fulfilled


def test_no_op_keeps_bindings_and_reports_them() -> None:
    prior = [scored("alpha", "Bound", 0), scored("beta", "Bound", 0)]
    out = schedule(pick_n(2), prior, GREEK, 0)
    assert out.bindings == tuple(prior) and out.cycles == 1
    assert [d.reason for d in out.decisions if d.selected] == ["r", "r"]


def test_scale_out_keeps_existing_even_if_they_no_longer_match() -> None:
    views = fleet(
        cluster("a", {"env": "dev"}), cluster("b", {"env": "prod"}), cluster("c", {"env": "prod"})
    )
    policy = {"affinity": required({"labelSelector": {"matchLabels": {"env": "prod"}}})}
    out = schedule(pick_n(2, **policy), [scored("a", "Bound", 0)], views, 0)
    assert selected(out) == ["a", "c"]
    # numberOfClusters 2 -> 3 keeps the policy snapshot index (the hash excludes it).
    out = schedule(pick_n(3, **policy), bind(out), views, 0)
    assert selected(out) == ["a", "b", "c"]
    assert (
        out.explanations["a"].selected and out.explanations["a"].filter_plugin == "ClusterAffinity"
    )
    assert out.fulfilled


def test_new_policy_patches_picked_obsolete_and_prefers_it_on_ties() -> None:
    views = fleet(cluster("a"), cluster("b"), cluster("z"))
    prior = [Binding("a", "Bound", 0, 7), Binding("b", "Bound", 0, 7)]
    out = schedule(pick_n(1), prior, views, 1)
    # Equal scores; the obsolete-placement score beats reverse-name order (z), then b beats a.
    by = {b.cluster: b for b in out.bindings}
    assert (by["b"].state, by["b"].policy_index, by["b"].resource_index) == ("Bound", 1, 7)
    assert (by["a"].state, by["a"].previous_state) == ("Unscheduled", "Bound")
    assert "z" not in by


def test_unscheduled_binding_is_restored_to_its_previous_state() -> None:
    prior = [Binding("gamma", "Unscheduled", 0, 3, previous_state="Bound")]
    out = schedule(pick_n(1), prior, GREEK, 1)
    assert [(b.cluster, b.state, b.previous_state, b.policy_index) for b in out.bindings] == [
        ("gamma", "Bound", None, 1)
    ]


def test_unselected_decisions_scored_then_filtered_within_budget() -> None:
    views = fleet(
        *(cluster(f"ok{i:02}", {"ok": "y"}) for i in range(15)),
        *(cluster(f"no{i:02}") for i in range(10)),
    )
    out = schedule(
        pick_n(1, affinity=required({"labelSelector": {"matchLabels": {"ok": "y"}}})), [], views, 0
    )
    unselected = [d for d in out.decisions if not d.selected]
    assert len(unselected) == 20
    assert [d.cluster for d in unselected[:14]] == [f"ok{i:02}" for i in range(13, -1, -1)]
    assert [d.cluster for d in unselected[14:]] == [f"no{i:02}" for i in range(6)]
    assert unselected[-1].reason.startswith("ClusterUnschedulable, cluster does not match")
    assert len(out.explanations) == 25


def test_plugin_error_raises_when_scheduling_but_not_on_no_op() -> None:
    views = fleet(cluster("a", props={NODES: "x"}), cluster("b", props={NODES: "1"}))
    policy = {"affinity": preferred((5, sorter(NODES)))}
    with pytest.raises(ScheduleError):
        schedule(pick_n(1, **policy), [], views, 0)
    out = schedule(pick_n(1, **policy), [scored("b", "Bound", 0)], views, 0)
    assert selected(out) == ["b"] and out.fulfilled


def test_stickiness_over_several_passes() -> None:
    views = fleet(*(cluster(c, {"env": "prod"}) for c in ("a", "b", "c", "d")))
    policy = {"affinity": required({"labelSelector": {"matchLabels": {"env": "prod"}}})}
    out = schedule(pick_n(2, **policy), [], views, 0)
    assert selected(out) == ["c", "d"]
    again = schedule(pick_n(2, **policy), bind(out), views, 0)
    assert again.decisions == out.decisions and again.explanations.keys() == out.explanations.keys()
    # Scale out: the existing two stay, one more joins.
    out = schedule(pick_n(3, **policy), bind(out), views, 0)
    assert selected(out) == ["b", "c", "d"]
    # Relabel d: it no longer matches but stays (IgnoredDuringExecution).
    views["d"] = cluster("d", {"env": "dev"})
    out = schedule(pick_n(3, **policy), bind(out), views, 0)
    assert selected(out) == ["b", "c", "d"]
    # c leaves the fleet: its binding is unscheduled and a replacement is picked.
    del views["c"]
    out = schedule(pick_n(3, **policy), bind(out), views, 0)
    assert selected(out) == ["a", "b", "d"]
    assert [(b.cluster, b.state) for b in out.bindings if b.cluster == "c"] == [
        ("c", "Unscheduled")
    ]
    # c returns: the placement is satisfied, nothing moves.
    views["c"] = cluster("c", {"env": "prod"})
    out = schedule(pick_n(3, **policy), bind(out), views, 0)
    assert selected(out) == ["a", "b", "d"]
    assert out.explanations["c"].reason.startswith('Cluster "c" does not score high enough')


def test_property_selector_with_pick_n() -> None:
    views = fleet(cluster("a", props={NODES: "3"}), cluster("b", props={NODES: "1"}))
    out = schedule(pick_n(2, affinity=required(prop(NODES, "Ge", "2"))), [], views, 0)
    assert selected(out) == ["a"] and out.fulfilled is False

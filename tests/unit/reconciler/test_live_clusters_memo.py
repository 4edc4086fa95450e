"""`PlacementPlan.live_clusters` remembers its answer, and reads again when anything it reads
changes: the state (by identity), the pinned snapshot, or the content a cluster would get (the
rollout stage fills `desired` in place). Each call returns a list of its own."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reconciler.binding import Binding
from reconciler.placement import PlacementPlan
from reconciler.state import PlacementState, Snapshot
from reconciler.status import Cond

BINDINGS = (
    Binding("c3", "Bound", 0, 3, content="d3"),
    Binding("c1", "Bound", 0, 3, content="d1"),
    Binding("c2", "Bound", 0, 2, content=None),
    Binding("c4", "Unscheduled", 0, 3, content="d4"),
    Binding("c5", "Bound", 0, 3, content=None),
)


def _plan() -> PlacementPlan:
    state = PlacementState(
        key="web", resource_snapshots=(Snapshot(2, "h2"), Snapshot(3, "h3")), bindings=BINDINGS
    )
    scheduled = Cond("Scheduled", "True", "Scheduled", "ok")
    return PlacementPlan(key="web", state=state, scheduled=scheduled, desired={"c1": "d1"})


def _new_state(plan: PlacementPlan) -> None:
    plan.state = PlacementState(
        key="web", resource_snapshots=plan.state.resource_snapshots, bindings=BINDINGS[2:]
    )


def _pin(plan: PlacementPlan) -> None:
    plan.target_index = 2


def _desire_in_place(plan: PlacementPlan) -> None:
    plan.desired["c3"] = "d3"


def _undesire_in_place(plan: PlacementPlan) -> None:
    plan.desired["c1"] = "other"


def _desire_new_dict(plan: PlacementPlan) -> None:
    plan.desired = {"c1": "d1", "c3": "d3"}


CHANGES: list[tuple[Callable[[PlacementPlan], None], list[str]]] = [
    (_new_state, ["c5"]),
    (_pin, ["c2"]),
    (_desire_in_place, ["c1", "c3", "c5"]),
    (_undesire_in_place, ["c5"]),
    (_desire_new_dict, ["c1", "c3", "c5"]),
]


def test_first_answer_sorted_live_bindings() -> None:
    assert _plan().live_clusters() == ["c1", "c5"]


@pytest.mark.parametrize(("change", "live"), CHANGES)
def test_reads_again_after_a_change(
    change: Callable[[PlacementPlan], None], live: list[str]
) -> None:
    plan = _plan()
    assert plan.live_clusters() == ["c1", "c5"]
    change(plan)
    assert plan.live_clusters() == live
    fresh = _plan()
    change(fresh)
    assert fresh.live_clusters() == live


def test_each_call_returns_its_own_list() -> None:
    plan = _plan()
    first = plan.live_clusters()
    first.append("zz")
    assert plan.live_clusters() == ["c1", "c5"]
    assert plan.live_clusters() is not plan.live_clusters()


def test_remembered_answer_not_in_equality_or_repr() -> None:
    plan, other = _plan(), _plan()
    plan.live_clusters()
    assert plan == other
    assert repr(plan) == repr(other)

"""The clusters a rollout has not moved yet (`assembleheld.kept_clusters`): remembered per
placement, and read again when anything `PlacementPlan.kept_clusters` reads changes - the
state, the pinned snapshot, the content each cluster would get, the clusters moved to an older
snapshot (the last two changed in place too, as the rollout stage does)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from reconciler import assembleheld
from reconciler.binding import Binding
from reconciler.placement import PlacementPlan
from reconciler.stagememo import forget_stages
from reconciler.state import PlacementState, Snapshot
from reconciler.status import Cond

BINDINGS = (
    Binding("c1", "Bound", 0, 3, content="d1"),
    Binding("c2", "Bound", 0, 2, content="old"),
    Binding("c3", "Unscheduled", 0, 3, content="d3"),
    Binding("c4", "Bound", 0, 3, content="stale"),
    Binding("c5", "Bound", 0, 3, content="d5"),
)


def _plan() -> PlacementPlan:
    state = PlacementState(
        key="web",
        resource_snapshots=(Snapshot(2, "h2"), Snapshot(3, "h3")),
        bindings=BINDINGS,
    )
    return PlacementPlan(
        key="web",
        state=state,
        scheduled=Cond("Scheduled", "True", "Scheduled", "ok"),
        desired={"c1": "d1", "c4": "d4", "c5": "d5"},
    )


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


def _new_state(plan: PlacementPlan) -> None:
    plan.state = PlacementState(
        key="web", resource_snapshots=plan.state.resource_snapshots, bindings=BINDINGS[:3]
    )


def _pin(plan: PlacementPlan) -> None:
    plan.target_index = 2


def _desire(plan: PlacementPlan) -> None:
    plan.desired["c5"] = "other"


def _move(plan: PlacementPlan) -> None:
    plan.moved_to["c2"] = 2


CHANGES: list[Callable[[PlacementPlan], None]] = [_new_state, _pin, _desire, _move]


@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__ for c in CHANGES])
def test_kept_clusters_follow_what_they_read(change: Callable[[PlacementPlan], None]) -> None:
    plan = _plan()
    first = assembleheld.kept_clusters(plan)
    assert first == plan.kept_clusters() == ["c2", "c3", "c4"]
    assert assembleheld.kept_clusters(plan) is first
    change(plan)
    assert plan.kept_clusters() != first
    assert assembleheld.kept_clusters(plan) == plan.kept_clusters()

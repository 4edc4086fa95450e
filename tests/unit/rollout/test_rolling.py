"""Unit tables for the rolling-update controller (spec/kubefleet.md §2.3-2.4)."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from reconciler.rollout.model import BindingView, ObservedCondition
from reconciler.rollout.rolling import (
    STALE_MESSAGE,
    Classes,
    RollingConfig,
    classify,
    pick_bindings,
    target_number,
)
from tests.helpers.counting import CountedName

NOW = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
AVAILABLE = (
    ObservedCondition("Applied", "True", "AllWorkHaveBeenApplied"),
    ObservedCondition("Available", "True", "AllWorkAreAvailable"),
)
APPLY_FAILED = (ObservedCondition("Applied", "False", "NotAllWorkHaveBeenApplied"),)
PENDING = (ObservedCondition("Applied", "False", "ApplyPending"),)


def bound(
    name: str, *, new: bool = False, conds: tuple[ObservedCondition, ...] = AVAILABLE
) -> BindingView:
    return BindingView(
        name,
        "Bound",
        1 if new else 0,
        "new" if new else "old",
        "new",
        conditions=conds,
        desired_resource_index=1,
    )


def scheduled(name: str) -> BindingView:
    return BindingView(name, "Scheduled", desired_content="new", desired_resource_index=1)


def unscheduled(name: str, conds: tuple[ObservedCondition, ...] = AVAILABLE) -> BindingView:
    return BindingView(
        name, "Unscheduled", 0, "old", None, previous_state="Bound", conditions=conds
    )


@pytest.mark.parametrize(
    ("placement_type", "targeted", "fixed", "n", "expected"),
    [
        ("PickAll", 7, 0, None, 7),
        ("PickFixed", 2, 5, None, 5),
        ("PickN", 3, 0, 4, 4),
        ("PickN", 3, 0, None, 0),
    ],
)
def test_target_number(
    placement_type: str, targeted: int, fixed: int, n: int | None, expected: int
) -> None:
    assert target_number(placement_type, targeted, fixed, n) == expected


@pytest.mark.parametrize(
    ("count", "max_unavailable", "expected_wave"),
    [
        (8, "25%", 2),  # ceil(2.0)
        (5, "25%", 2),  # ceil(1.25)
        (4, 1, 1),
        (3, "50%", 2),  # ceil(1.5)
        (2, "25%", 1),
        (8, "100%", 8),
        (8, 0, 0),
    ],
)
def test_update_candidates_limited_by_ceil_scaled_max_unavailable(
    count: int, max_unavailable: int | str, expected_wave: int
) -> None:
    views = [bound(f"c{i}") for i in range(count)]
    d = pick_bindings(views, RollingConfig(max_unavailable=max_unavailable), NOW)
    assert d.update == tuple(f"c{i}" for i in range(expected_wave))
    assert d.stale == tuple(f"c{i}" for i in range(expected_wave, count))


def test_clusters_still_updating_use_up_the_budget() -> None:
    views = [bound("c0", new=True, conds=()), bound("c1", new=True, conds=())]
    views += [bound(f"c{i}") for i in range(2, 8)]
    d = pick_bindings(views, RollingConfig(max_unavailable="25%"), NOW)
    assert d.update == () and d.max_to_remove == 0
    assert d.stale == tuple(f"c{i}" for i in range(2, 8))
    assert d.waits[0].message == (
        "waiting: maxUnavailable 2 reached, 2 clusters updating (maxUnavailable 25% of 8)"
    )


def test_apply_failed_candidates_are_never_limited() -> None:
    views = [bound(f"c{i}", conds=APPLY_FAILED) for i in range(4)]
    d = pick_bindings(views, RollingConfig(max_unavailable=0, max_surge=0), NOW)
    assert d.update == ("c0", "c1", "c2", "c3")
    assert d.stale == ()


def test_pending_reasons_are_not_failures() -> None:
    views = [bound("c0", conds=PENDING), bound("c1")]
    c = classify(views, NOW, timedelta(seconds=60))
    assert c.apply_failed == () and c.update == ("c0", "c1")
    assert c.can_be_ready == ("c0", "c1") and c.ready == ("c1",)


def test_max_unavailable_zero_with_surge_adds_new_clusters_only() -> None:
    views = [bound("c0"), bound("c1"), scheduled("c2"), scheduled("c3")]
    d = pick_bindings(views, RollingConfig(max_unavailable=0, max_surge=1), NOW)
    # target 4 (PickAll: Scheduled + Bound); maxToAdd = 4 + 1 - 2 canBeReady = 3; maxToRemove 2-4 <0
    assert d.update == ("c2", "c3")
    assert d.stale == ("c0", "c1")


def test_surge_limits_bounding_candidates() -> None:
    views = [bound("c0", new=True), bound("c1", new=True), scheduled("c2"), scheduled("c3")]
    d = pick_bindings(
        views, RollingConfig(max_surge=0), NOW, placement_type="PickN", number_of_clusters=3
    )
    # maxToAdd = 3 + 0 - 2 = 1
    assert d.update == ("c2",)
    assert d.stale == ("c3",)
    assert d.waits[0].message.startswith("waiting: maxSurge 0 reached")


def test_remove_candidates_come_before_update_candidates() -> None:
    views = [bound("a"), unscheduled("b"), bound("c"), bound("d")]
    d = pick_bindings(views, RollingConfig(max_unavailable=1), NOW)
    # target 3 (a, c, d), ready 4 -> maxToRemove = 4 - (3 - 1) = 2
    assert d.delete == ("b",)
    assert d.update == ("a",)
    assert d.stale == ("c", "d")


def test_nothing_to_roll() -> None:
    views = [bound("a", new=True), bound("b", new=True)]
    d = pick_bindings(views, RollingConfig(), NOW)
    assert not d.need_roll and d.update == () and d.stale == ()
    assert d.wait_time is None


def test_initial_placement_binds_every_scheduled_cluster() -> None:
    views = [scheduled(f"c{i}") for i in range(8)]
    d = pick_bindings(views, RollingConfig(), NOW)
    assert len(d.update) == 8  # maxToAdd = 8 + 2 - 0


def test_untrackable_waits_unavailable_period_after_the_hub_saw_it() -> None:
    seen = NOW - timedelta(seconds=26)
    conds = (
        ObservedCondition("Applied", "True", "AllWorkHaveBeenApplied"),
        ObservedCondition("Available", "True", "NotAllWorkAreAvailabilityTrackable", "", seen),
    )
    views = [bound("c0", new=True, conds=conds), bound("c1")]
    d = pick_bindings(views, RollingConfig(max_unavailable=1), NOW)
    assert d.classes.ready == ("c1",)
    assert d.update == () and d.stale == ("c1",)
    assert d.wait_time == timedelta(seconds=34)
    later = pick_bindings(views, RollingConfig(max_unavailable=1), NOW + timedelta(seconds=34))
    assert later.update == ("c1",)


def test_diff_reported_counts_as_ready() -> None:
    conds = (ObservedCondition("DiffReported", "True", "AllWorkHaveDiffReported"),)
    ready, _ = bound("a", conds=conds).ready(NOW, timedelta(seconds=60))
    assert ready


def test_stale_message_is_kubefleets() -> None:
    assert STALE_MESSAGE == (
        "The resources cannot be updated to the latest because of the rollout strategy"
    )


def _plain_classify(views: list[BindingView], now: datetime, period: timedelta) -> Classes:
    """§2.3 read literally: every class decided per binding, in listing order."""
    lists: dict[str, list[str]] = {k: [] for k in CLASS_LISTS}
    targeted, waits, all_ready, not_ready = 0, [], True, 0
    unready: list[str] = []
    for b in views:
        ready, wait = b.ready(now, period)
        if b.state in ("Unscheduled", "Bound"):
            all_ready = all_ready and ready
            not_ready += 0 if ready else 1
            unready += [] if ready else [b.cluster]
            if not ready and wait is not None and wait > timedelta(0):
                waits.append(wait)
            if not b.failed and not b.diff_reported:
                lists["can_be_ready"].append(b.cluster)
            if ready:
                lists["ready"].append(b.cluster)
            if b.deleting and ready:
                lists["can_be_unavailable"].append(b.cluster)
        if b.state == "Unscheduled" and not b.deleting:
            lists["remove"].append(b.cluster)
        targeted += b.state in ("Scheduled", "Bound")
        if b.state == "Scheduled":
            lists["bounding"].append(b.cluster)
        if b.state == "Bound" and not b.deleting:
            kind = "up_to_date" if b.up_to_date else "apply_failed" if b.failed else "update"
            lists[kind].append(b.cluster)
    made = {k: tuple(v) for k, v in lists.items()}
    return Classes(
        targeted,
        waits=tuple(waits),
        all_ready=all_ready,
        not_ready=not_ready,
        unready=tuple(unready),
        **made,
    )


CLASS_LISTS = ("ready", "can_be_ready", "can_be_unavailable", "remove", "update")
CLASS_LISTS += ("apply_failed", "bounding", "up_to_date")
UNTRACKED = (
    ObservedCondition("Applied", "True", "AllWorkHaveBeenApplied"),
    ObservedCondition(
        "Available", "True", "WorkNotTrackable", last_transition_time=NOW - timedelta(seconds=20)
    ),
)


def test_classify_equals_a_literal_reading() -> None:
    rng = random.Random(4)
    conds = [AVAILABLE, APPLY_FAILED, PENDING, UNTRACKED, ()]
    for _ in range(300):
        views = []
        for i in range(rng.randrange(8)):
            state = rng.choice(["Bound", "Scheduled", "Unscheduled"])
            content = rng.choice(["old", "new", None])
            views.append(
                BindingView(
                    f"c{i}",
                    state,
                    rng.choice([0, 1]),
                    content,
                    "new",
                    deleting=rng.random() < 0.2,
                    conditions=rng.choice(conds),
                    desired_resource_index=1,
                )
            )
        period = timedelta(seconds=rng.choice([0, 10, 60]))
        assert classify(views, NOW, period) == _plain_classify(views, NOW, period)


@pytest.mark.parametrize(
    ("field", "budget"),
    [("bounding", "25%"), ("update", "25%"), ("remove", "25%"), ("bounding", "100%")],
)
def test_picking_compares_each_name_a_bounded_number_of_times(field: str, budget: str) -> None:
    """Picking looks up names in sets, not in the lists: a fleet-wide placement's lists hold
    thousands of clusters (10,000 bounding bindings took ~1 s a placement and pass when each
    name was looked for in the list of those added)."""
    names = tuple(CountedName(f"cluster-{i:05d}") for i in range(3000))
    ready = names if field != "bounding" else ()
    classes = Classes(scheduler_targeted=len(names), ready=ready, all_ready=False)
    classes = replace(classes, **{field: names})
    CountedName.compared = 0
    config = RollingConfig(max_unavailable=budget, max_surge=budget)
    decision = pick_bindings((), config, NOW, number_of_clusters=len(names), classes=classes)
    picked = [*decision.update, *decision.delete, *decision.stale]
    assert len(set(picked)) == len(picked) >= 750  # each once; at least the 25% budget
    assert CountedName.compared < 10 * len(names)

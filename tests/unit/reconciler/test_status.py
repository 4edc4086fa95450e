"""Placement conditions (spec §8.3): aggregation order, Unknown before False, stopping point."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reconciler.status import (
    Cond,
    cluster_rollout_conditions,
    condition_summary,
    placement_conditions,
    timed,
)

P = "ClusterResourcePlacement"
SCHED = Cond("Scheduled", "True", "SchedulingPolicyFulfilled", "found all")


def test_cluster_conditions_stop_at_first_not_true() -> None:
    conds = cluster_rollout_conditions(True, None)
    assert [(c.type, c.status) for c in conds] == [
        ("RolloutStarted", "True"),
        ("Overridden", "True"),
        ("WorkSynchronized", "True"),
        ("Applied", "Unknown"),
    ]
    assert conds[1].reason == "NoOverrideSpecified"
    failed = cluster_rollout_conditions(True, "conflict")
    assert failed[-1] == Cond("WorkSynchronized", "False", "SyncWorkFailed", "conflict")
    assert [c.type for c in cluster_rollout_conditions(False, None)] == ["RolloutStarted"]


@pytest.mark.parametrize(
    ("conds", "expected"),
    [
        ([], ((None, None),) * 6),
        (
            [
                Cond("Overridden", "True", "OverriddenSucceeded", "m"),
                Cond("Applied", "False", "x", ""),
            ],
            (
                (None, None),
                ("True", "OverriddenSucceeded"),
                (None, None),
                ("False", None),
                (None, None),
                (None, None),
            ),
        ),
        (  # the first condition of a type counts; types outside the summary are not read
            [
                Cond("Other", "True", "r", ""),
                Cond("RolloutStarted", "Unknown", "a", ""),
                Cond("RolloutStarted", "True", "b", ""),
                Cond("DiffReported", "True", "c", ""),
            ],
            (("Unknown", None), *((None, None),) * 4, ("True", None)),
        ),
    ],
)
def test_condition_summary(conds: list[Cond], expected: tuple[tuple[str | None, ...], ...]) -> None:
    assert condition_summary(conds) == expected


@pytest.mark.parametrize(
    ("clusters", "expected"),
    [
        ([], [("Scheduled", "True")]),
        (
            [cluster_rollout_conditions(True, None)] * 2,
            [
                ("Scheduled", "True"),
                ("RolloutStarted", "True"),
                ("Overridden", "True"),
                ("WorkSynchronized", "True"),
                ("Applied", "Unknown"),
            ],
        ),
        (
            [cluster_rollout_conditions(True, "x"), cluster_rollout_conditions(True, None)],
            [
                ("Scheduled", "True"),
                ("RolloutStarted", "True"),
                ("Overridden", "True"),
                ("WorkSynchronized", "False"),
            ],
        ),
        (
            [cluster_rollout_conditions(True, "x"), cluster_rollout_conditions(False, None)],
            [("Scheduled", "True"), ("RolloutStarted", "Unknown")],
        ),
    ],
)
def test_placement_conditions(clusters: list[list[Cond]], expected: list[tuple[str, str]]) -> None:
    out = placement_conditions(P, SCHED, clusters)
    assert [(c.type.removeprefix(P), c.status) for c in out] == expected


def test_placement_messages_count_clusters() -> None:
    out = placement_conditions(P, SCHED, [cluster_rollout_conditions(True, None)] * 3)
    assert out[1].message == "All 3 cluster(s) start rolling out the latest resource"
    assert out[2].reason == "NoOverrideSpecified"
    assert out[-1].reason == "ApplyPending"


def test_unknown_scheduled_stops_everything() -> None:
    pending = Cond("Scheduled", "Unknown", "SchedulePending", "Scheduling has not completed")
    assert len(placement_conditions(P, pending, [cluster_rollout_conditions(True, None)])) == 1


def test_transition_time_kept_unless_status_reason_or_message_change() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    t1 = datetime(2026, 1, 2, tzinfo=UTC)
    first = timed([SCHED], (), 1, t0)
    same = timed([SCHED], first, 2, t1)
    assert same[0].last_transition_time == "2026-01-01T00:00:00Z"
    assert same[0].observed_generation == 2
    changed = timed([Cond("Scheduled", "False", "SchedulingPolicyUnfulfilled", "x")], first, 2, t1)
    assert changed[0].last_transition_time == "2026-01-02T00:00:00Z"

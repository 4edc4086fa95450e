"""KubeFleet's deleting phase of a binding (spec/kubefleet.md §2.2-2.3, §5.2 step 1).

When the rollout removes an Unscheduled binding, a driver deletes one, or an eviction deletes a
binding, KubeFleet sets the binding's deletionTimestamp and keeps it until the member's work is
gone. Here `begin` moves such a binding to `PlacementState.deleting` with the number of objects
its cluster had for the placement: the cluster's files leave the output (its agent prunes them),
the scheduler no longer sees the binding, and the rollout still counts it (a deleting binding is
never a candidate, never ready, and takes a maxSurge slot, §2.3: deleting a binding bumps its
generation, so its conditions no longer count).
`settle` ends the phase once the cluster's agent reports no entry for the placement (and no
failed prune), or the cluster left the fleet; clusters taken as applying what they are given
(a dry run, AssumeJoined clusters without a report) and clusters that had no objects end it at
once. `blocked` is §2.2 step 2 (a cluster with a deleting and a new binding waits). Pure; called
by `reconciler.rollstage`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from gitfleet.api.report import AgentReport
from reconciler.placement import PlacementPlan
from reconciler.reports import PASS_COMPLETED
from reconciler.rollout.model import BOUND, SCHEDULED, UNSCHEDULED

PRUNE_FAILED = "PruneFailed"


def begin(
    plan: PlacementPlan,
    clusters: Iterable[str],
    prior_index: Mapping[str, Mapping[str, Mapping[str, Any]]],
    immediate: frozenset[str],
) -> None:
    """The bindings of `clusters` start deleting (removed from `plan.state.bindings`)."""
    gone = set(clusters)
    if not gone:
        return
    kept, deleting = [], list(plan.state.deleting)
    for b in plan.state.bindings:
        if b.cluster not in gone:
            kept.append(b)
            continue
        entry = prior_index.get(b.cluster, {}).get(plan.key) or {}
        count = len(entry.get("objects") or [])
        if count and b.cluster not in immediate:
            deleting.append(replace(b, removing=count, conditions=()))
    plan.state = replace(plan.state, bindings=tuple(kept), deleting=tuple(deleting))


def _gone(key: str, report: AgentReport | None) -> bool:
    """The agent reports no objects of placement `key` left (its last pass pruned them)."""
    if report is None or any(p.key == key for p in report.placements):
        return False
    return not any(
        c.type == PASS_COMPLETED and c.status == "False" and c.reason == PRUNE_FAILED
        for c in report.conditions
    )


def settle(
    plan: PlacementPlan,
    reports: Mapping[str, AgentReport],
    clusters: frozenset[str],
    immediate: frozenset[str],
) -> None:
    """Drop the deleting bindings whose removal is over."""
    left = tuple(
        b
        for b in plan.state.deleting
        if b.cluster in clusters
        and b.cluster not in immediate
        and not _gone(plan.key, reports.get(b.cluster))
    )
    if left != plan.state.deleting:
        plan.state = replace(plan.state, deleting=left)


def blocked(plan: PlacementPlan) -> list[str]:
    """§2.2 step 2: clusters with a deleting binding and a new one that must wait for it (a
    Scheduled binding, or an Unscheduled one whose previous state was not Bound)."""
    deleting = {b.cluster for b in plan.state.deleting}
    return sorted(
        b.cluster
        for b in plan.state.bindings
        if b.cluster in deleting
        and (
            b.state in (SCHEDULED, BOUND) or (b.state == UNSCHEDULED and b.previous_state != BOUND)
        )
    )

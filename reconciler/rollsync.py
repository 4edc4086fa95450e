"""Binding sync conditions after the files are laid out (`record_sync`): a cluster whose files
for a placement could not be written as rendered gets WorkSynchronized False on its binding.

A placement whose bindings, target, desired contents and sync errors are what they were when
`record_sync` last changed nothing is skipped; one where they are but for a few clusters (one
joined or left) looks at those clusters only: its bindings by cluster, desired contents and
sync errors are diffed with last pass's in C (`stagememo.changed_keys`). Called by
`reconciler.pass_`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from operator import attrgetter
from typing import Any

from reconciler.placement import PlacementPlan
from reconciler.rollkept import Frozen
from reconciler.rollout.model import BOUND
from reconciler.rollview import MAX_MESSAGE, SYNC_FAILED, timed
from reconciler.stagememo import StageMemo, changed_keys
from reconciler.state import Binding

_SETTLED: StageMemo[dict[str, Binding]] = StageMemo()
"""Placement key -> its bindings by cluster (empty: a cluster has two) when `record_sync` last
changed nothing, with the inputs it read then."""


def record_sync(plans: Mapping[str, PlacementPlan], now: datetime) -> None:
    """After the files are laid out: a cluster whose files for a placement could not be written
    as rendered (an object lost to another placement, `assemble`) gets the binding condition
    WorkSynchronized False `SyncWorkFailed` with that message, so the next pass's rollout counts
    the binding as failed (§2.3 HasBindingFailed: not an allow-listed reason); a cluster whose
    files were written drops it. Clusters the rollout did not reach keep what they had.
    A placement whose bindings, target, desired contents and sync errors are what they were
    when this changed nothing last time is skipped (nothing it reads is the clock then), and
    one where they are but for a few clusters looks at those clusters only (`_synced_some`)."""
    for plan in plans.values():
        if plan.held:
            continue
        latest = plan.target()
        index = latest.index if latest else None
        bindings = plan.state.bindings
        if _SETTLED.get(plan.key, (bindings, index, plan.desired, plan.sync_errors)) is not None:
            continue
        by_cluster = dict(zip(map(_CLUSTER, bindings), bindings, strict=True))
        last = _SETTLED.last(plan.key)
        if (
            last is not None
            and last[1]
            and last[0][1] == index
            and len(by_cluster) == len(bindings)
        ):
            synced = _synced_some(plan, last, by_cluster, index, now)
        else:
            synced = _synced_all(plan, now)
        if synced is not None:
            plan.state = replace(plan.state, bindings=synced)
            _SETTLED.drop(plan.key)
        else:  # copies: the plan's dicts are its own to change (a `Frozen` one cannot change)
            desired = plan.desired if isinstance(plan.desired, Frozen) else dict(plan.desired)
            inputs = (bindings, index, desired, dict(plan.sync_errors))
            _SETTLED.put(plan.key, inputs, by_cluster if len(by_cluster) == len(bindings) else {})


_CLUSTER = attrgetter("cluster")


def _synced_all(plan: PlacementPlan, now: datetime) -> tuple[Binding, ...] | None:
    """Every live binding with its sync error; None when none changed."""
    live = set(plan.live_clusters())
    bindings = []
    for b in plan.state.bindings:
        if b.cluster in live:
            b = with_sync(b, plan.sync_errors.get(b.cluster), now)
        bindings.append(b)
    if any(a is not b for a, b in zip(bindings, plan.state.bindings, strict=True)):
        return tuple(bindings)
    return None


def _synced_some(
    plan: PlacementPlan,
    last: tuple[tuple[Any, ...], dict[str, Binding]],
    by_cluster: dict[str, Binding],
    index: int | None,
    now: datetime,
) -> tuple[Binding, ...] | None:
    """`_synced_all` when the last pass changed nothing under the same target and each cluster
    has one binding: the clusters whose binding, desired content or sync error is another object
    than then are looked at (`changed_keys`, in C); the others would give their binding again."""
    (_, _, desired, errors), before = last
    changed = changed_keys(before, by_cluster) | changed_keys(desired, plan.desired)
    changed |= changed_keys(errors, plan.sync_errors)
    bindings = plan.state.bindings
    out: list[Binding] | None = None
    for cluster in sorted(changed):
        b = by_cluster.get(cluster)
        if b is None or not is_live(b, index, plan.desired):
            continue
        synced = with_sync(b, plan.sync_errors.get(cluster), now)
        if synced is not b:
            out = list(bindings) if out is None else out
            out[list(map(id, bindings)).index(id(b))] = synced
    return tuple(out) if out is not None else None


def is_live(b: Binding, index: int | None, desired: Mapping[str, str]) -> bool:
    """The binding gets its placement's target content (snapshot `index`) in this pass's output:
    `PlacementPlan.live_clusters` for a cluster with this one binding."""
    return (
        b.state == BOUND
        and b.resource_index == index
        and (b.content is None or b.content == desired.get(b.cluster))
    )


def with_sync(b: Binding, error: str | None, now: datetime) -> Binding:
    if error is None and all(c.type != "WorkSynchronized" for c in b.conditions):
        return b
    rest = [c for c in b.conditions if c.type != "WorkSynchronized"]
    if error is None:
        return replace(b, conditions=tuple(rest))
    failed = timed(
        [("WorkSynchronized", "False", SYNC_FAILED, error[:MAX_MESSAGE])], b.conditions, now
    )
    started = [c for c in rest if c.type == "RolloutStarted"]
    others = [c for c in rest if c.type != "RolloutStarted"]
    return replace(b, conditions=(*started, *failed, *others))

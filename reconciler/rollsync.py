"""Binding sync conditions after the files are laid out (`record_sync`): a cluster whose files
for a placement could not be written as rendered gets WorkSynchronized False on its binding.

A placement whose bindings, target, desired contents and sync errors are what they were when
`record_sync` last changed nothing is skipped. Another one looks only at the bindings whose
result can differ from the binding itself: those of clusters with a sync error, and those that
carry a WorkSynchronized condition (a fact of the binding object, remembered on it the first
time it is asked: `_synchronized`); every other binding would be given again as it is. A
placement without sync errors whose bindings have no WorkSynchronized condition is passed by
reading only the bindings that are not last call's objects (`rollsplice.Column`). Called
by `reconciler.pass_`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime

from reconciler.binding import SYNCHRONIZED_ATTRIBUTE
from reconciler.placement import PlacementPlan
from reconciler.rollkept import Frozen
from reconciler.rollout.model import BOUND
from reconciler.rollsplice import Column
from reconciler.rollview import MAX_MESSAGE, SYNC_FAILED, timed
from reconciler.stagememo import StageMemo
from reconciler.state import Binding

_SETTLED: StageMemo[bool] = StageMemo()
"""Placement key -> the inputs `record_sync` read when it last changed nothing."""


def record_sync(plans: Mapping[str, PlacementPlan], now: datetime) -> None:
    """After the files are laid out: a cluster whose files for a placement could not be written
    as rendered (an object lost to another placement, `assemble`) gets the binding condition
    WorkSynchronized False `SyncWorkFailed` with that message, so the next pass's rollout counts
    the binding as failed (§2.3 HasBindingFailed: not an allow-listed reason); a cluster whose
    files were written drops it. Clusters the rollout did not reach keep what they had.
    A placement whose bindings, target, desired contents and sync errors are what they were
    when this changed nothing last time is skipped (nothing it reads is the clock then)."""
    for plan in plans.values():
        if plan.held:
            continue
        latest = plan.target()
        index = latest.index if latest else None
        bindings = plan.state.bindings
        if _SETTLED.get(plan.key, (bindings, index, plan.desired, plan.sync_errors)) is not None:
            continue
        synced = _synced(plan, index, now)
        if synced is not None:
            plan.state = replace(plan.state, bindings=synced)
            _SETTLED.drop(plan.key)
        else:  # copies: the plan's dicts are its own to change (a `Frozen` one cannot change)
            desired = plan.desired if isinstance(plan.desired, Frozen) else dict(plan.desired)
            _SETTLED.put(plan.key, (bindings, index, desired, dict(plan.sync_errors)), True)


_SYNCED: Column[bool] = Column(lambda b: _synchronized(b))
"""Placement key -> `_synchronized` of each binding, read only for bindings that are not the
last call's objects (`rollsplice.Column`)."""


def _synchronized(b: Binding) -> bool:
    """`b` has a WorkSynchronized condition (remembered on the object)."""
    found: bool | None = b.__dict__.get(SYNCHRONIZED_ATTRIBUTE)
    if found is None:
        found = any(c.type == "WorkSynchronized" for c in b.conditions)
        # frozen: only the memo of a fact of it
        object.__setattr__(b, SYNCHRONIZED_ATTRIBUTE, found)
    return found


def _synced(plan: PlacementPlan, index: int | None, now: datetime) -> tuple[Binding, ...] | None:
    """Every live binding with its sync error (`PlacementPlan.live_clusters`: a cluster is live
    when one of its bindings is); None when none changed. `with_sync` gives a binding without
    a sync error and without a WorkSynchronized condition back as it is, so only the others
    are looked at."""
    errors, bindings = plan.sync_errors, plan.state.bindings
    if not errors and not any(_SYNCED.of(plan.key, bindings)):
        return None  # no binding to look at: the common case, without reading each binding
    asked = {b.cluster for b in bindings if b.cluster in errors or _synchronized(b)}
    if not asked:
        return None
    desired = plan.desired
    live = {b.cluster for b in bindings if b.cluster in asked and is_live(b, index, desired)}
    out: list[Binding] | None = None
    for i, b in enumerate(bindings):
        if b.cluster not in live:
            continue
        synced = with_sync(b, errors.get(b.cluster), now)
        if synced is not b:
            out = list(bindings) if out is None else out
            out[i] = synced
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

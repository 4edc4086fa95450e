"""A remembered plan for a prior state that changed only in what agents reported.

An agent's report moves the conditions of its cluster's bindings (Applied, Available,
DiffReported) and the deleting bindings' conditions and `removing` counts; the pass records
them in the placement's state, which the next pass reads as its prior. `place` reads none of
those values: it carries each prior binding's conditions into the binding it schedules for the
same cluster (`schedule.bindingset` patches, restores or unschedules the prior binding; it
creates one only for a cluster without one) and the deleting bindings as they are
(`placement._new_plan`). So the plan `place` made from the earlier prior, with those carried
values swapped for the new prior's (`carried_plan`), is the plan `place` makes from the new one:
`placememo` reuses it instead of placing again (issue 18: every placement bound to a reporting
cluster was placed again on the next pass). `copy_plan` gives a remembered plan to the
stages that change it. Called by `reconciler.placememo`.
"""

from __future__ import annotations

from dataclasses import replace

from reconciler.binding import Binding
from reconciler.placement import PlacementPlan
from reconciler.placepatch import named
from reconciler.rollkept import frozen
from reconciler.statetypes import PlacementState

Moved = dict[str, tuple[Binding, Binding]]
"""Cluster -> (its binding in the earlier prior, in the new one): each other objects."""

_KEPT = (
    "key",
    "generation",
    "spec_hash",
    "policy_snapshots",
    "resource_snapshots",
    "selected",
    "origin_file",
)
"""The PlacementState fields besides the bindings: equal in both priors, or nothing is carried."""


def copy_plan(plan: PlacementPlan) -> PlacementPlan:
    """A plan the later stages may change without touching `plan`: every mutable container is
    copied, but for `per_cluster`, which is handed on frozen (`rollkept.Frozen`: the very dict
    pass after pass, so later stages find an unchanged placement's by identity; a stage that
    changes it replaces it with its own copy, `rollkept.thawed`); the frozen values in them
    (states, manifests, conditions) are shared. The plan itself is copied as `copy.copy`
    would (a new instance of its class, its `__dict__` copied), without `copy`'s reduce
    protocol: ~200 copies a pass."""
    out = object.__new__(type(plan))
    out.__dict__.update(plan.__dict__)
    out.errors = list(plan.errors)
    out.override_faults = {fault: list(cs) for fault, cs in plan.override_faults.items()}
    out.sync_errors = dict(plan.sync_errors)
    out.per_cluster = frozen(plan.per_cluster)
    out.desired = dict(plan.desired)
    out.waits = dict(plan.waits)
    out.reports = dict(plan.reports)
    out.renders = dict(plan.renders)
    out.unavailable = dict(plan.unavailable)
    out.moved_to = dict(plan.moved_to)
    out.cluster_apply_strategies = dict(plan.cluster_apply_strategies)
    return out


def carried_plan(
    plan: PlacementPlan, before: PlacementState, now: PlacementState
) -> PlacementPlan | None:
    """A copy of `plan` (made by `place` from the prior `before`) as `place` makes it from the
    prior `now` (`carried`), or None."""
    state = carried(plan.state, before, now)
    if state is None:
        return None
    out = copy_plan(plan)
    out.state = state
    return out


def carried(
    made: PlacementState, before: PlacementState, now: PlacementState
) -> PlacementState | None:
    """`made` (the state of the plan `place` made from the prior `before`) as `place` makes it
    from the prior `now`; None when the priors differ in more than their bindings' conditions
    and their deleting bindings, or `made` did not carry `before`'s values (then `place` runs)."""
    if made.deleting is not before.deleting and made.deleting != before.deleting:
        return None
    if any(
        getattr(before, name) is not getattr(now, name)
        and getattr(before, name) != getattr(now, name)
        for name in _KEPT
    ):
        return None
    moved = condition_moves(before.bindings, now.bindings)
    if moved is None:
        return None
    bindings = _swapped(made.bindings, moved) if moved else made.bindings
    if bindings is None:
        return None
    if bindings is made.bindings and made.deleting is now.deleting:
        return made
    return replace(made, bindings=bindings, deleting=now.deleting)


def condition_moves(before: tuple[Binding, ...], now: tuple[Binding, ...]) -> Moved | None:
    """Cluster -> (its binding in `before`, in `now`) for every binding that is another object
    in `now`, when each is equal or differs in its conditions only and the two lists name the
    same clusters in the same order, each once; None otherwise."""
    if len(before) != len(now):
        return None
    moved: Moved = {}
    for old, new in zip(before, now, strict=True):
        if old is new:
            continue
        if old != new and replace(old, conditions=new.conditions) != new:
            return None
        moved[old.cluster] = (old, new)
    if moved and len(named(now)[0]) != len(now):  # the set `_rescheduled` reads too
        return None  # a cluster named twice: which binding `place` carried is not known
    return moved


def _swapped(bindings: tuple[Binding, ...], moved: Moved) -> tuple[Binding, ...] | None:
    """`bindings` as made from the new prior: a binding the plan took as the earlier prior had
    it is the new prior's very object (the stages after compare bindings by identity); one it
    changed gets the new prior's conditions. None when one of those does not hold the earlier
    prior's conditions (it was not carried)."""
    out = list(bindings)
    for i, binding in enumerate(bindings):
        found = moved.get(binding.cluster)
        if found is None:
            continue
        old, new = found
        if binding is old or binding == old:
            out[i] = new
        elif binding.conditions != old.conditions:
            return None
        elif old.conditions != new.conditions:
            out[i] = replace(binding, conditions=new.conditions)
    return tuple(out)

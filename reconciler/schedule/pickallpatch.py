"""A PickAll run patched from the placement's last run, at a cost in proportion to what changed.

Without topology spread constraints a PickAll run decides every cluster on its own: the output
binding of a cluster is a function of its input binding, its presence (and deletion mark) in the
fleet and its static Filter verdict (`statics`); the final evaluation rejects exactly the
statically rejected clusters and finds every static candidate already selected; the decisions
are the current bindings' stored decisions by name, then the first 20 rejected clusters by name.
So, given the last run of the same policy, namespace and policy snapshot index, only the clusters
whose input binding changed (a rollout moved it, a new binding was recorded) or whose fleet row
changed (added, removed, relabelled, ...) are decided again (`decide`: `BindingSet` on that one
binding, exactly as the run does) and patched into the last bindings, final evaluation and
decisions. Declined (None: the caller runs the cycle) for anything else: another placement type,
spread constraints, a cluster bound twice, a plugin error. Called by
`reuse.schedule_reusing`; the tests compare it with fresh runs on sequences of passes.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from reconciler.state import Binding, BindingDecision

from . import statics as statics_
from .bindingset import BindingSet
from .clusters import ClusterView
from .errors import ScheduleError
from .fleetfacts import FleetFacts
from .framework import Code, CycleState, Evaluation, PlacementInfo
from .outcome import (
    MAX_DECISIONS,
    MAX_UNSELECTED_DECISIONS,
    Decision,
    ScheduleOutcome,
    fulfilled_message,
    picked_reason,
)
from .profile import DEFAULT_PROFILE
from .report import binding_decision, explain
from .statics import Statics
from .topologyspreadconstraints import ordered_specs


class LastRun(Protocol):
    """What the patch reads of the placement's last run (`reuse._Entry`)."""

    @property
    def policy(self) -> Any: ...
    @property
    def namespace(self) -> str | None: ...
    @property
    def policy_index(self) -> int: ...
    @property
    def bindings(self) -> tuple[Binding, ...]:
        """The input bindings of the last run."""

    @property
    def statics(self) -> Statics | None: ...
    @property
    def result(self) -> BindingSet: ...
    @property
    def final(self) -> Evaluation | None: ...
    @property
    def outcome(self) -> ScheduleOutcome: ...
    @property
    def by_cluster(self) -> Mapping[str, Binding] | None:
        """The input bindings by cluster, when the last run was patched."""

    @property
    def rejected(self) -> list[str] | None:
        """The final evaluation's rejected clusters sorted, when the last run was patched."""


@dataclass(frozen=True)
class Patched:
    """The run for this pass: its static results, converged bindings, final evaluation,
    outcome, its input bindings by cluster (the next patch compares with them) and the final
    evaluation's rejected clusters sorted (the next patch updates them)."""

    statics: Statics
    result: BindingSet
    final: Evaluation
    outcome: ScheduleOutcome
    by_cluster: Mapping[str, Binding]
    rejected: list[str]


def patch_pick_all(
    last: LastRun, bindings: tuple[Binding, ...], facts: FleetFacts, changed: Collection[str]
) -> Patched | None:
    """This pass's PickAll run from `last` (None when it cannot be patched: run the cycle)."""
    inputs = _inputs(last, bindings) if _patchable(last) else None
    if inputs is None:
        return None
    by_cluster, moved = inputs
    try:
        now = _statics(last, facts, changed)
    except ScheduleError:
        return None
    result = _copy(last.result)
    names = moved.union(changed)
    _redecide(result, names, by_cluster, facts.views, now)
    assert last.final is not None
    final = _final(last.final, now, changed, facts.views)
    rejected = _rejected(last, final, changed)
    outcome = ScheduleOutcome(
        bindings=_patched_bindings(last.outcome.bindings, result, names),
        decisions=_decisions(last, result, final, names, rejected),
        fulfilled=True,
        message=fulfilled_message(len(result.current)),
        explanations=explain(facts.clusters, result, final, False, (facts.names, facts.name_set)),
        cycles=1,
    )
    return Patched(now, result, final, outcome, by_cluster, rejected)


def _rejected(last: LastRun, final: Evaluation, changed: Collection[str]) -> list[str]:
    """`final`'s rejected clusters sorted: the last run's list updated for the changed ones."""
    before = last.rejected
    if before is None:
        assert last.final is not None
        before = sorted(last.final.filtered)
    if not changed:
        return before
    out = list(before)
    for name in changed:
        at = bisect_left(out, name)
        if at < len(out) and out[at] == name:
            del out[at]
        if name in final.filtered:
            insort(out, name)
    return out


def _patchable(last: LastRun) -> bool:
    """PickAll without spread constraints, from a run of the incremental path (after which
    no binding is obsolete and the final evaluation passes no cluster: all are picked)."""
    policy = last.policy
    return (
        getattr(policy, "placement_type", None) == "PickAll"
        and not ordered_specs(policy)
        and last.statics is not None
        and last.final is not None
        and not last.result.obsolete
    )


def _by_cluster(bindings: Sequence[Binding]) -> dict[str, Binding] | None:
    """Bindings by cluster (None when a cluster has two: the run keeps both, not patched)."""
    out = {b.cluster: b for b in bindings}
    return out if len(out) == len(bindings) else None


def _inputs(
    last: LastRun, bindings: tuple[Binding, ...]
) -> tuple[Mapping[str, Binding], set[str]] | None:
    """This run's input bindings by cluster, and the clusters whose input binding is not the
    last run's (by identity first: unchanged state keeps its binding objects)."""
    old = last.by_cluster if last.by_cluster is not None else _by_cluster(last.bindings)
    if old is None:
        return None
    if bindings is last.bindings:
        return old, set()
    new = _by_cluster(bindings)
    if new is None:
        return None
    moved = {c for c, b in new.items() if (o := old.get(c)) is not b and o != b}
    moved.update(old.keys() - new.keys())
    return new, moved


def _statics(last: LastRun, facts: FleetFacts, changed: Collection[str]) -> Statics:
    """The static Filter results for this pass, updated for the changed clusters only."""
    assert last.statics is not None
    if not changed:
        return last.statics
    info = PlacementInfo(last.policy, last.namespace)
    state = CycleState(info, facts.views, facts.clusters, frozenset(), frozenset(), {})
    made, _ = statics_.prepare(DEFAULT_PROFILE, state, False, (last.statics, changed))
    return made


def decide(
    binding: Binding | None, name: str, views: Mapping[str, ClusterView], index: int, pick: bool
) -> tuple[Binding | None, Binding | None]:
    """The run's current and unscheduled binding of one cluster: its input binding classified,
    picked when it passes the static filters (`pick`), released when obsolete, as
    `cycle.pick_all` treats it."""
    one = BindingSet.classify([binding] if binding is not None else [], views, index)
    if pick:
        one.pick(name, BindingDecision(picked_reason(name, 0, 0), 0, 0))
    one.release_obsolete()
    return one.current.get(name), one.unscheduled.get(name)


def _copy(bs: BindingSet) -> BindingSet:
    return BindingSet(bs.policy_index, dict(bs.current), dict(bs.obsolete), dict(bs.unscheduled))


def _redecide(
    result: BindingSet,
    names: Collection[str],
    bindings: Mapping[str, Binding],
    views: Mapping[str, ClusterView],
    now: Statics,
) -> None:
    """`result` with the bindings of `names` decided again."""
    for name in names:
        pick = name in views and name not in now.failed
        current, unscheduled = decide(bindings.get(name), name, views, result.policy_index, pick)
        result.current.pop(name, None)
        result.unscheduled.pop(name, None)
        if current is not None:
            result.current[name] = current
        if unscheduled is not None:
            result.unscheduled[name] = unscheduled


def _final(
    final: Evaluation, now: Statics, changed: Collection[str], views: Mapping[str, ClusterView]
) -> Evaluation:
    """The final evaluation: static rejections, every candidate already selected (all are
    current after the run), patched for the changed clusters."""
    if not changed:
        return final
    filtered = dict(final.filtered)
    already = set(final.already_selected)
    for name in changed:
        filtered.pop(name, None)
        already.discard(name)
        if name not in views:
            continue
        status = now.failed.get(name)
        if status is None or status.code is Code.ALREADY_SELECTED:
            already.add(name)
        elif status.code is Code.UNSCHEDULABLE:
            filtered[name] = status
    return Evaluation((), filtered, frozenset(already), {})


def _cluster_of(b: Binding | Decision) -> str:
    return b.cluster


def _patched_bindings(
    old: Sequence[Binding], result: BindingSet, names: Collection[str]
) -> tuple[Binding, ...]:
    """The last output bindings (sorted by cluster: one binding per cluster) with `names`
    replaced."""
    out = list(old)
    for name in sorted(names):
        lo = bisect_left(out, name, key=_cluster_of)
        hi = bisect_right(out, name, key=_cluster_of)
        mine = result.current.get(name) or result.unscheduled.get(name)
        out[lo:hi] = [mine] if mine is not None else []
    return tuple(out)


def _decisions(
    last: LastRun, result: BindingSet, final: Evaluation, names: set[str], rejected: list[str]
) -> tuple[Decision, ...]:
    """The current bindings' decisions by name (the first 1000), then the first rejected
    clusters by name that are not current, within what is left of the 20."""
    count = min(len(last.result.current), MAX_DECISIONS)
    if max(len(last.result.current), len(result.current)) <= MAX_DECISIONS:
        selected = _selected(last.outcome.decisions[:count], result, names)
    else:
        selected = _capped(last.outcome.decisions[:count], result, names)
    budget = max(min(MAX_UNSELECTED_DECISIONS, MAX_DECISIONS - len(result.current)), 0)
    known = {d.cluster: d for d in last.outcome.decisions[count:]}
    before = last.final.filtered if last.final is not None else {}
    unselected = []
    for name in rejected[:budget]:
        if name in result.current:
            continue
        status, made = final.filtered[name], known.get(name)
        if made is None or before.get(name) is not status:  # else the last run's decision
            made = Decision(name, False, str(status))
        unselected.append(made)
    return tuple(selected + unselected)


def _selected(old: Sequence[Decision], result: BindingSet, names: set[str]) -> list[Decision]:
    """Every current binding's decision by name: the last ones with `names` replaced."""
    selected = list(old)
    for name in sorted(names):
        lo = bisect_left(selected, name, key=_cluster_of)
        hi = bisect_right(selected, name, key=_cluster_of)
        b = result.current.get(name)
        selected[lo:hi] = [binding_decision(b)] if b is not None else []
    return selected


def _capped(old: Sequence[Decision], result: BindingSet, names: set[str]) -> list[Decision]:
    """The first 1000 current bindings' decisions by name (the last run's where the binding
    is the same)."""
    known = {d.cluster: d for d in old}
    out = []
    for name in sorted(result.current)[:MAX_DECISIONS]:
        made = known.get(name)
        out.append(
            made
            if made is not None and name not in names
            else binding_decision(result.current[name])
        )
    return out

"""Scheduling across passes at a cost in proportion to the clusters that changed (issue 18).

`schedule_reusing` remembers, per placement, the last run of the default profile: the policy,
namespace, policy snapshot index and prior bindings it was given, the fleet it saw
(`fleetfacts`), its static results (`statics`), the converged bindings, the final evaluation and
the outcome. On the next call with the same policy, namespace and index:

- the clusters added, removed or changed since (by their fleet-facts rows) are compared as the
  placement reads them: present or not, static Filter status, static score, topology signature
  (PickFixed: present or not, eligibility verdict). When the prior bindings are equal too:
  - nothing the placement reads changed: the outcome is reused as it is;
  - only clusters that no filter lets through changed (absent or rejected before and after, no
    binding of this placement, the same topology domains), or any unbound clusters of a PickN
    that already had its number of clusters (it picks none): the bindings are the same, so
    only the final evaluation's entries of the changed clusters, the unselected decisions and
    the explanations are made again (PickFixed: the explanations, when no named or bound
    cluster changed);
- otherwise the cycles run again from the static results updated for the changed clusters only
  (`statics.update`).

Anything else (another policy, the plain runner deciding after a plugin error, `cycle.REFERENCE`)
schedules from scratch, which gives the same bytes: the tests compare both on sequences of
added, removed and relabelled clusters. Process-wide, one entry per placement key. Called by
`reconciler.placement` and `reconciler.placememo` (`schedule_placement`).
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gitfleet.api import ClusterResourcePlacement, PlacementPolicy, ResourcePlacement
from reconciler.stagememo import StageMemo
from reconciler.state import Binding

from . import cycle
from .bindingset import BindingSet
from .classes import schedule_label_keys
from .clusters import ClusterView
from .cycle import Inputs, ScheduleOutcome, run_tracked
from .errors import ScheduleError
from .fleetfacts import FleetFacts, fleet_facts
from .framework import Code, CycleState, Evaluation, PlacementInfo
from .incremental import Incremental, supports
from .outcome import MAX_DECISIONS
from .pickallpatch import patch_pick_all
from .profile import DEFAULT_PROFILE
from .report import explain, unselected_decisions
from .statics import Statics, reads_same


@dataclass(frozen=True)
class _Entry:
    """One placement's last run."""

    policy: Any
    namespace: str | None
    policy_index: int
    bindings: tuple[Binding, ...]
    facts: FleetFacts
    statics: Statics | None
    """None for PickFixed (no plugin runs)."""
    result: BindingSet
    """The converged bindings of the run."""
    final: Evaluation | None
    outcome: ScheduleOutcome
    idle: bool
    """PickN that had its number of clusters already: it picked nothing, whatever the
    candidates (the same bindings keep it so)."""
    by_cluster: Mapping[str, Binding] | None = None
    """`bindings` by cluster, when a PickAll patch made them (`pickallpatch`)."""
    rejected: list[str] | None = None
    """The final evaluation's rejected clusters sorted, when a PickAll patch made them."""


_ENTRIES: StageMemo[_Entry] = StageMemo()


def schedule_placement(
    key: str,
    placement: ClusterResourcePlacement | ResourcePlacement,
    bindings: Sequence[Binding],
    views: Mapping[str, ClusterView],
    policy_index: int,
) -> ScheduleOutcome | str:
    """Schedule placement `key` (`schedule_reusing`); a plugin error is this placement's user
    error (the message)."""
    namespace = placement.metadata.namespace if isinstance(placement, ResourcePlacement) else None
    try:
        return schedule_reusing(
            key, placement.spec.policy, namespace or None, bindings, views, policy_index
        )
    except ScheduleError as exc:
        return f"scheduling failed: {exc}"


def schedule_reusing(
    key: str,
    policy: Any,
    namespace: str | None,
    bindings: Sequence[Binding],
    views: Mapping[str, ClusterView],
    policy_index: int,
) -> ScheduleOutcome:
    """`cycle.run_policy(policy, namespace, bindings, views, policy_index)` for placement `key`,
    reusing its last run where the changed clusters allow."""
    policy = policy if policy is not None else PlacementPolicy()
    if cycle.REFERENCE or not supports(DEFAULT_PROFILE):
        return cycle.run_policy(policy, namespace, bindings, views, policy_index)
    facts = fleet_facts(views)
    bindings = tuple(bindings)
    last = _ENTRIES.last(key)
    entry = last[1] if last is not None else None
    before = None
    if (
        entry is not None
        and entry.policy_index == policy_index
        and entry.namespace == namespace
        and entry.policy == policy
    ):
        changed = _read_changes(policy, facts.changed_since(entry.facts), entry.facts, facts)
        same = entry.bindings == bindings
        if not same or changed:
            patched = patch_pick_all(entry, bindings, facts, changed)
            if patched is not None:
                made = replace(entry, bindings=bindings, facts=facts, **vars(patched))
                _ENTRIES.put(key, (), made)
                return made.outcome
        if same:
            again = _again(entry, changed, facts)
            if again is not None:
                _ENTRIES.put(key, (), again)
                return again.outcome
        if entry.statics is not None:
            before = (entry.statics, changed)
    inputs = Inputs(policy, namespace, bindings, views, policy_index, facts.clusters, before)
    outcome, run = run_tracked(inputs)
    if run is None:
        _ENTRIES.drop(key)
        return outcome
    statics = run.fast.statics if run.fast is not None else None
    wanted = max(policy.number_of_clusters or 0, 0)
    idle = policy.placement_type == "PickN" and wanted <= run.present
    made = _Entry(
        policy,
        namespace,
        policy_index,
        bindings,
        facts,
        statics,
        run.bindings,
        run.final,
        outcome,
        idle,
    )
    _ENTRIES.put(key, (), made)
    return outcome


def _read_changes(
    policy: Any, changed: frozenset[str], old: FleetFacts, new: FleetFacts
) -> frozenset[str]:
    """The changed clusters the policy can tell from before: added, removed, or with another
    eligibility verdict, MemberCluster digest or value of a label key the default profile reads
    (its affinity terms' selectors, its spread constraints' topology keys)."""
    if not changed:
        return changed
    keys = schedule_label_keys(policy)
    out = set()
    for name in changed:
        a, b = old.rows.get(name), new.rows.get(name)
        if (
            a is None
            or b is None
            or a[:2] != b[:2]
            or any(a[2].get(k) != b[2].get(k) for k in keys)
        ):
            out.add(name)
    return frozenset(out)


def _again(entry: _Entry, changed: frozenset[str], facts: FleetFacts) -> _Entry | None:
    """The entry for this pass when the changes cannot move a binding, else None."""
    if not changed:
        return replace(entry, facts=facts)
    bound = {b.cluster for b in entry.bindings}
    if not bound.isdisjoint(changed):
        return None
    if entry.policy.placement_type == "PickFixed":
        return _fixed_again(entry, changed, facts)
    return _filtered_again(entry, changed, facts)


def _fixed_again(entry: _Entry, changed: frozenset[str], facts: FleetFacts) -> _Entry | None:
    """PickFixed reads the named clusters only; the explanations list the whole fleet."""
    if not changed.isdisjoint(entry.policy.cluster_names or []):
        return None
    info = PlacementInfo(entry.policy, entry.namespace)
    run = cycle._Run(info, facts.views, entry.result, DEFAULT_PROFILE, clusters=facts.clusters)
    names = list(entry.policy.cluster_names or [])
    explanations = cycle._fixed_explanations(run, names, (facts.names, facts.name_set))
    return replace(entry, facts=facts, outcome=replace(entry.outcome, explanations=explanations))


def _filtered_again(entry: _Entry, changed: frozenset[str], facts: FleetFacts) -> _Entry | None:
    """The entry when every changed cluster is absent or filtered out before and after (or,
    for an idle PickN, anything but bound): the same bindings, only the final evaluation's
    changed clusters made again."""
    if entry.statics is None or entry.final is None:
        return None
    result, old = entry.result, entry.statics
    if reads_same(DEFAULT_PROFILE, _state(entry, facts), old, changed):
        return replace(entry, facts=facts)  # the statics `update` would make are `old`'s
    fast = Incremental(DEFAULT_PROFILE, _state(entry, facts), old.scored, (old, changed))
    now = fast.statics
    if now.score_memo != old.score_memo:  # a fleet-wide min/max moved: every score may change
        return None
    moved = [n for n in sorted(changed) if _reads(old, n, entry.facts) != _reads(now, n, facts)]
    if not moved:
        return replace(entry, facts=facts, statics=now)
    for name in moved:
        for statics, rows in ((old, entry.facts.rows), (now, facts.rows)):
            status = statics.failed.get(name)
            if name not in rows or (status is not None and status.code is Code.UNSCHEDULABLE):
                continue
            if status is not None or not entry.idle:  # a candidate an idle PickN cannot pick
                return None
    if fast.specs and old.domains() != now.domains():
        return None
    final = _patched(entry.final, moved, fast, result)
    outcome = _outcome(entry, final, facts)
    return replace(entry, facts=facts, statics=now, final=final, outcome=outcome)


def _state(entry: _Entry, facts: FleetFacts) -> CycleState:
    """A fresh first-cycle state of `entry`'s bindings over this pass's fleet."""
    result = entry.result
    return CycleState(
        PlacementInfo(entry.policy, entry.namespace),
        facts.views,
        facts.clusters,
        result.names(),
        frozenset(result.obsolete),
        {},
    )


def _patched(
    final: Evaluation, moved: Sequence[str], fast: Incremental, result: BindingSet
) -> Evaluation:
    """`final` with the moved clusters evaluated again (none of them is bound)."""
    gone = set(moved)
    passed = [n for n in final.passed if n not in gone]
    filtered = dict(final.filtered)
    scores = dict(final.scores)
    for name in moved:
        filtered.pop(name, None)
        scores.pop(name, None)
        if name in fast.static_failed:
            filtered[name] = fast.static_failed[name]
        elif name in fast.sig:
            status, score = fast.one(name, result.current, result.obsolete)
            if status is not None:
                filtered[name] = status
                continue
            insort(passed, name)
            if score is not None:
                scores[name] = score
    return replace(final, passed=tuple(passed), filtered=filtered, scores=scores)


def _reads(statics: Statics, name: str, facts: FleetFacts) -> tuple[Any, ...]:
    """What the run reads of one cluster: present, static status, static score, signature."""
    if name not in facts.rows:
        return (False,)
    return (True, statics.failed.get(name), statics.base.get(name), statics.sig.get(name))


def _outcome(entry: _Entry, final: Evaluation, facts: FleetFacts) -> ScheduleOutcome:
    """The outcome of `entry`'s bindings with a final evaluation that differs in rejected
    clusters only: the same selected decisions, the unselected ones and explanations anew."""
    result = entry.result
    selected = min(len(result.current), MAX_DECISIONS)
    seen = set(result.current)
    slots = MAX_DECISIONS - len(result.current)
    decisions = entry.outcome.decisions[:selected] + tuple(unselected_decisions(final, seen, slots))
    ranked = entry.policy.placement_type == "PickN"
    explanations = explain(facts.clusters, result, final, ranked, (facts.names, facts.name_set))
    return replace(entry.outcome, decisions=decisions, explanations=explanations)

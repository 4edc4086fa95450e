"""Reuse of `placement.place` across passes: a placement whose inputs did not change is not
selected, scheduled or overridden again.

`place` is a pure function of the placement, its prior state, the cluster views, the resources it
selects, the overrides serving it and a few pass-wide facts. `PlaceMemo.place` keys one
placement's work by exactly those (issue 18, item 4):

- the cluster views as this placement reads them (`_same_views`, compared with the rows the
  plan was made from for only the clusters changed since): every cluster's name, eligibility
  verdict and MemberCluster without its agent heartbeats and labels, plus the values of only
  the label keys the placement can read (`label_keys`: its affinity and spread terms, the
  selectors and variables of the overrides serving it, and every Tenant's cluster selector), so
  a relabel recomputes only the placements that read that key;
- the pass-wide part (`pass_key`): the CRD scope table, the governance inputs, the per-placement
  object limit and the files that failed to load;
- the placement as declared (canonical JSON of the whole object);
- its selection: content hash plus each selected object's identity and origin, and the objects
  it matched that cannot be placed;
- the overrides serving it: key, spec hash, snapshot name and origin;
- the source commit, only when it would be recorded (the selection's hash is new);
- its prior state, by identity first (`priorparse.remember` keeps unchanged state files the very
  same object from pass to pass) and by value otherwise.

A hit returns a copy of the plan `place` returned for the same key (the later stages change
plans in place). When only clusters changed (every other part of the key and the prior state
are equal), the placement is scheduled again (`schedule.reuse`: in proportion to the changed
clusters) and its remembered plan is still reused when the schedule gives the same bindings
and no cluster it binds or bound changed as it reads them (eligibility, MemberCluster digest,
the label keys above): nothing else of `place` reads the fleet. Only the decisions,
explanations and Scheduled condition are this pass's then. Placements with history to render
(pins, staged runs of older snapshots), invalid selectors and held plans are always computed. One entry per
placement key, process-wide (like the override and parsed-source caches); a long-running hub is
what benefits. Called by `reconciler.pass_`.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from operator import is_
from typing import Any

from gitfleet.api.canonical import canonical_json
from reconciler.override.compiled import CompiledOverride
from reconciler.placement import (
    AnyPlacement,
    PassInputs,
    PlacementPlan,
    place,
    resource_id,
    select,
)
from reconciler.schedule.classes import selector_keys
from reconciler.schedule.clusteraffinity import preferred_terms, required_terms
from reconciler.schedule.clusters import ClusterView
from reconciler.schedule.fleetfacts import FleetFacts, fleet_facts
from reconciler.schedule.reuse import schedule_placement
from reconciler.schedule.topologyspreadconstraints import ordered_specs
from reconciler.select import ResourceIndex, Selection
from reconciler.stagememo import IdentityMemo, StageMemo, forget_stages
from reconciler.state import PlacementState

LabelKeys = frozenset[str] | None
"""The label keys a placement's work can read (None: any)."""


@dataclass(frozen=True)
class _Kept:
    """A plan `place` returned, with the fleet it saw and the label keys it could read."""

    plan: PlacementPlan
    facts: FleetFacts
    keys: LabelKeys


_PLANS: StageMemo[_Kept] = StageMemo()
"""Placement key -> the plan `place` returned, with its key and the prior state it came from."""
_declared_texts: IdentityMemo[str] = IdentityMemo()
"""Placement object -> its canonical JSON (`_declared`), for the last two passes."""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, eq=False)
class PassKey:
    """The pass-wide part of every placement's key. `token`: what every selection and serving
    override set is made from (`_inputs_token`); `previous`: the last pass's token object when
    it equals this one (None otherwise): a placement declared by the same object then selects
    and is served as when its `_Parts` were made under that token (`_fingerprint`)."""

    rest: tuple[Any, ...]
    token: tuple[Any, ...] | None = None
    previous: tuple[Any, ...] | None = None


def _labels(labels: Mapping[str, str], keys: list[str] | None) -> tuple[Any, ...]:
    if keys is None:
        return tuple(sorted(labels.items()))
    return tuple([labels.get(k) for k in keys])


def label_keys(
    placement: AnyPlacement, serving: Iterable[CompiledOverride], governance: Any
) -> LabelKeys:
    """Every cluster label key `place` can read for this placement: the selectors of its
    affinity terms and the keys of its spread constraints (the default scheduler profile, the
    only one), the selectors and `${MEMBER-CLUSTER-LABEL-KEY-*}` variables of its overrides'
    rules, and every Tenant's cluster selector (governance reads bound clusters' labels).
    None when a variable can read any label."""
    policy = placement.spec.policy
    keys: set[str] = set()
    if policy is not None:
        for term in required_terms(policy):
            keys.update(selector_keys(term.label_selector))
        for preferred in preferred_terms(policy):
            keys.update(selector_keys(preferred.preference.label_selector))
        keys.update(key for key, _, _ in ordered_specs(policy))
    for override in serving:
        for rule in override.rules:
            if rule.uses.all_labels:
                return None
            keys.update(rule.uses.labels)
            for term in rule.selector.cluster_selector_terms if rule.selector else ():
                keys.update(selector_keys(term.label_selector))
    for tenant in governance.tenancy.tenants.values():
        keys.update(selector_keys(tenant.spec.cluster_selector))
    return frozenset(keys)


def pass_key(views: Mapping[str, ClusterView], index: ResourceIndex, inputs: PassInputs) -> PassKey:
    """The part of every placement's key that is the same for the whole pass (a key equal to
    no other when it cannot be made: nothing is reused then, and nothing fails)."""
    try:
        return _pass_key(views, index, inputs)
    except Exception:
        return PassKey((object(),))


def _pass_key(
    views: Mapping[str, ClusterView], index: ResourceIndex, inputs: PassInputs
) -> PassKey:
    _declared_texts.next_round()
    # The whole governance value, repr'd: a field it gains later is part of the key by itself
    # (a repr that differs between equal values only costs reuse, never correctness).
    governance = repr(inputs.governance)
    rest = (
        index.scopes.content,
        _sha(repr(governance)),
        inputs.max_objects,
        tuple(sorted(inputs.broken_files)),
    )
    token = _inputs_token(rest, index, inputs)
    last = _TOKENS.last("pass")
    _TOKENS.put("pass", (), token)
    previous = last[1] if last is not None and last[1] == token else None
    return PassKey(rest, token, previous)


_TOKENS: StageMemo[tuple[Any, ...]] = StageMemo()
"""The last pass's `_inputs_token`."""


def _inputs_token(
    rest: tuple[Any, ...], index: ResourceIndex, inputs: PassInputs
) -> tuple[Any, ...]:
    """What every placement's selection and serving overrides are made from besides the
    placement: the index entries (the very objects: `select.index` keeps an unchanged
    object's entry), the skipped namespaces, each override's key, spec hash, snapshot name
    and origin, the names of the overrides' latest snapshots, and `rest`."""
    overrides = tuple((o.key, o.hash, o.snapshot, o.origin) for o in inputs.overrides.overrides)
    names = tuple(sorted(inputs.override_names.items()))
    return (rest, index.entries, index.skipped_namespaces, overrides, names)


def _declared(placement: AnyPlacement) -> str:
    """The canonical JSON of the placement as declared (made once per placement object: the
    loader keeps the object while its file is unchanged)."""
    found = _declared_texts.get(placement)
    if found is None:
        dumped = placement.model_dump(by_alias=True, exclude_none=True, mode="json")
        found = canonical_json(dumped)
        _declared_texts.put(placement, found)
    return found


def _fingerprint(
    key: str,
    placement: AnyPlacement,
    prior: PlacementState,
    index: ResourceIndex,
    inputs: PassInputs,
    whole_pass: PassKey,
) -> tuple[tuple[Any, ...] | None, Selection | None, LabelKeys]:
    """The placement's key (None when its work must be done afresh every time), its
    selection when it was made (`place` takes it rather than selecting again), and the label
    keys it reads."""
    if inputs.history.for_placement(key):
        return None, None, None
    made = _PARTS.last(key)
    if (
        made is not None
        and whole_pass.previous is not None
        and made[1].token is whole_pass.previous
        and made[1].placement is placement
    ):
        parts = made[1]
    else:
        parts = _parts(placement, index, inputs, made[1] if made is not None else None, whole_pass)
        if parts.selection.error is not None:
            _PARTS.drop(key)
            return None, parts.selection, None
    _PARTS.put(key, (), replace(parts, token=whole_pass.token))
    selection = parts.selection
    latest = prior.latest_resources()
    new_snapshot = latest is None or latest.hash != selection.hash
    commit = inputs.commit if new_snapshot else None
    return (whole_pass.rest, *parts.declared, commit), selection, parts.keys


@dataclass(frozen=True)
class _Parts:
    """What a placement's key is made of besides the pass, the cluster views and the commit:
    its declared JSON, its selection and the overrides serving it, and the label keys read;
    and the `PassKey.token` of the last pass they were made or taken under."""

    placement: AnyPlacement
    selection: Selection
    declared: tuple[Any, ...]
    keys: LabelKeys
    token: tuple[Any, ...] | None = None


_PARTS: StageMemo[_Parts] = StageMemo()
"""Placement key -> the `_Parts` made last (taken as they are while the token stays)."""


def _parts(
    placement: AnyPlacement,
    index: ResourceIndex,
    inputs: PassInputs,
    last: _Parts | None = None,
    whole_pass: PassKey | None = None,
) -> _Parts:
    """The placement's parts, selected afresh. What `last` (its parts of an earlier pass)
    made of the same placement object is taken rather than made again: its declared JSON,
    and, when it selected the very same objects and every override and pass-wide input is
    as then (the token but for the index entries, `_same_serving`), everything else too."""
    selection = select(placement, index)
    if selection.error is not None:
        return _Parts(placement, selection, (), None)
    if last is None or last.placement is not placement or not last.declared:
        text = _declared(placement)
    elif _same_selection(last.selection, selection) and _same_serving(last.token, whole_pass):
        return _Parts(placement, selection, last.declared, last.keys)
    else:
        text = last.declared[0]
    serving = inputs.overrides.for_placement(placement, selection.resources).overrides
    declared = (
        text,
        selection.hash,
        tuple(
            (r.group, r.version, r.kind, r.namespace, r.name, r.origin) for r in selection.resources
        ),
        tuple((resource_id(i.resource), i.origin) for i in selection.invalid),
        tuple((o.key, o.hash, o.snapshot, o.origin) for o in serving),
        tuple(inputs.override_names.get(o.key) for o in serving),
    )
    return _Parts(placement, selection, declared, label_keys(placement, serving, inputs.governance))


def _same_selection(before: Selection, now: Selection) -> bool:
    """The very same selected objects (and unplaceable matches) in the same order."""
    return (
        before.hash == now.hash
        and len(before.resources) == len(now.resources)
        and all(map(is_, before.resources, now.resources))
        and len(before.invalid) == len(now.invalid)
        and all(map(is_, before.invalid, now.invalid))
    )


def _same_serving(before: tuple[Any, ...] | None, whole_pass: PassKey | None) -> bool:
    """Every part of the pass's token but the index entries equals `before`'s (a token of
    `_inputs_token`): the same pass-wide inputs, skipped namespaces and overrides."""
    now = whole_pass.token if whole_pass is not None else None
    if before is None or now is None:
        return False
    return before[0] == now[0] and before[2:] == now[2:]


def copy_plan(plan: PlacementPlan) -> PlacementPlan:
    """A plan the later stages may change without touching `plan`: every mutable container is
    copied; the frozen values in them (states, manifests, conditions) are shared."""
    out = copy.copy(plan)
    out.errors = list(plan.errors)
    out.override_faults = {fault: list(cs) for fault, cs in plan.override_faults.items()}
    out.sync_errors = dict(plan.sync_errors)
    out.per_cluster = dict(plan.per_cluster)
    out.desired = dict(plan.desired)
    out.waits = dict(plan.waits)
    out.reports = dict(plan.reports)
    out.renders = dict(plan.renders)
    out.unavailable = dict(plan.unavailable)
    out.moved_to = dict(plan.moved_to)
    out.cluster_apply_strategies = dict(plan.cluster_apply_strategies)
    return out


def place_reusing(
    key: str,
    placement: AnyPlacement,
    prior: PlacementState,
    views: Mapping[str, ClusterView],
    index: ResourceIndex,
    inputs: PassInputs,
    whole_pass: PassKey,
) -> PlacementPlan:
    """`place(...)`, or a copy of its result for the same inputs in an earlier pass."""
    try:
        fingerprint, selection, keys = _fingerprint(
            key, placement, prior, index, inputs, whole_pass
        )
    except Exception:  # the key cannot be made: `place` runs (and reports what is wrong)
        fingerprint, selection, keys = None, None, None
    known = (fingerprint, prior)  # the prior compared by identity first, like every StageMemo
    last = _PLANS.last(key) if fingerprint is not None else None
    if last is not None:
        facts = fleet_facts(views)
        if last[0] == known and _same_views(last[1], facts):
            if last[1].facts is not facts:  # later passes compare with this pass's rows
                _PLANS.put(key, known, _Kept(last[1].plan, facts, keys))
            return copy_plan(last[1].plan)
        again = _rescheduled(key, placement, prior, views, known, last)
        if again is not None:
            _PLANS.put(key, known, _Kept(copy_plan(again), fleet_facts(views), keys))
            return again
    plan = place(key, placement, prior, views, index, inputs, selection)
    if fingerprint is not None:
        _PLANS.put(key, known, _Kept(copy_plan(plan), fleet_facts(views), keys))
    return plan


def _rescheduled(
    key: str,
    placement: AnyPlacement,
    prior: PlacementState,
    views: Mapping[str, ClusterView],
    known: tuple[Any, ...],
    last: tuple[tuple[Any, ...], _Kept],
) -> PlacementPlan | None:
    """The remembered plan when only clusters changed (every other input is equal) and the
    placement, scheduled again, binds the same and none of the clusters it binds or bound
    changed as it reads them: the rest of `place` reads nothing else of the fleet, so only the
    decisions, explanations and Scheduled condition are this pass's. None otherwise."""
    (before, before_prior), kept = last
    fingerprint, _ = known
    if before_prior is not prior and before_prior != prior:
        return None
    if before != fingerprint or kept.plan.held:
        return None
    index = kept.plan.state.policy_snapshots[-1].index  # equal placement and prior: same header
    outcome = schedule_placement(key, placement, prior.bindings, views, index)
    if isinstance(outcome, str) or outcome.bindings != kept.plan.state.bindings:
        return None
    facts = fleet_facts(views)
    changed = facts.changed_since(kept.facts)
    if changed:
        read = {b.cluster for b in outcome.bindings} | {b.cluster for b in prior.bindings}
        for name in changed & read:
            if _row(kept.facts, name, kept.keys) != _row(facts, name, kept.keys):
                return None
    plan = copy_plan(kept.plan)
    plan.decisions, plan.explanations = outcome.decisions, outcome.explanations
    plan.scheduled = outcome.condition() or kept.plan.scheduled
    return plan


def _same_views(kept: _Kept, facts: FleetFacts) -> bool:
    """Every cluster reads the same to the placement as when its plan was made: no cluster
    added or removed, and none changed in eligibility, MemberCluster digest or the values of
    the label keys the placement reads."""
    changed = facts.changed_since(kept.facts)
    return all(_row(kept.facts, n, kept.keys) == _row(facts, n, kept.keys) for n in changed)


def _row(facts: FleetFacts, name: str, keys: LabelKeys) -> tuple[Any, ...] | None:
    """A cluster's row as a placement reading label `keys` sees it (None: no such cluster)."""
    row = facts.rows.get(name)
    if row is None:
        return None
    reason, digest, labels = row
    return (reason, digest, _labels(labels, sorted(keys) if keys is not None else None))


def forget() -> None:
    """Drop every remembered plan and every stage's remembered results (tests compare a pass
    with and without reuse)."""
    forget_stages()

"""Reuse of `placement.place` across passes: a placement whose inputs did not change is not
selected, scheduled or overridden again (issue 18, item 4). `place_reusing` keys one
placement's work by exactly what `place` reads:

- the cluster views as it reads them (`_same_views`, for the clusters changed since only): each
  cluster's name, eligibility verdict and MemberCluster without heartbeats and labels, and the
  values of only the label keys it can read (`label_keys`: affinity and spread terms, the
  selectors and variables of its overrides, every Tenant's cluster selector);
- the pass-wide part (`pass_key`): CRD scope table, governance, object limit, broken files;
- the placement as declared (canonical JSON), its selection (hash, each object's identity and
  origin, unplaceable matches), the overrides serving it (key, spec hash, snapshot, origin),
  the source commit only when it would be recorded, and its prior state (identity first).

The parts besides the views and prior are taken as they were while the placement object is
the same and the pass's inputs are the last pass's, or differ only in index entries none of
the placement's selection lookups finds (`select.Reads`, `select.changed_lookups`) and in
overrides restricted to other placements (`passkey.served_by_changes`): a one resource edit
selects again for the placements that look it up only, a one override edit for the placement
it names only. A hit returns a copy of the remembered plan (later stages change plans in
place). When only clusters changed, the
placement is scheduled again (`schedule.reuse`) and its plan is still reused when the bindings
are the same and no cluster it binds or bound changed as it reads them; only the decisions,
explanations and Scheduled condition are this pass's then. Placements with history to render,
invalid selectors and held plans are always computed. One entry per placement key,
process-wide. Called by `reconciler.pass_`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gitfleet.api.canonical import canonical_json
from reconciler.override.compiled import CompiledOverride
from reconciler.passkey import PassKey, make_pass_key, same_serving
from reconciler.placement import (
    AnyPlacement,
    PassInputs,
    PlacementPlan,
    place,
    resource_id,
    select_read,
)
from reconciler.rollkept import frozen
from reconciler.schedule.classes import selector_keys
from reconciler.schedule.clusteraffinity import preferred_terms, required_terms
from reconciler.schedule.clusters import ClusterView
from reconciler.schedule.fleetfacts import FleetFacts, fleet_facts
from reconciler.schedule.reuse import schedule_placement
from reconciler.schedule.topologyspreadconstraints import ordered_specs
from reconciler.select import Reads, ResourceIndex, Selection
from reconciler.stagememo import IdentityMemo, StageMemo, forget_stages
from reconciler.state import Binding, PlacementState

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
_FEW_CHANGED = 8
"""Up to this many changed clusters, `_reads_same` compares their rows before any binding."""
"""Placement object -> its canonical JSON (`_declared`), for the last two passes."""


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
    """The part of every placement's key that is the same for the whole pass
    (`reconciler.passkey`; a key equal to no other when it cannot be made: nothing is reused
    then, and nothing fails)."""
    try:
        _declared_texts.next_round()
        return make_pass_key(views, index, inputs)
    except Exception:
        return PassKey((object(),))


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
    made = _PARTS.last(key)  # ((the token they were made or taken under,), parts)
    if made is not None and _still(made, placement, whole_pass):
        parts = made[1]
    else:
        parts = _parts(placement, index, inputs, made, whole_pass)
        if parts.selection.error is not None:
            _PARTS.drop(key)
            return None, parts.selection, None
    _PARTS.put(key, (whole_pass.token,), parts)
    selection = parts.selection
    latest = prior.latest_resources()
    new_snapshot = latest is None or latest.hash != selection.hash
    commit = inputs.commit if new_snapshot else None
    return (whole_pass.rest, *parts.declared, commit), selection, parts.keys


def _still(
    made: tuple[tuple[Any, ...], _Parts], placement: AnyPlacement, whole_pass: PassKey
) -> bool:
    """`made` (a `_PARTS` entry) holds for this pass: parts made of the same placement object
    under the last pass's token, none of their selection's lookups touched since and no
    override that changed may serve the placement (`PassKey`)."""
    (token,), parts = made
    return (
        parts.placement is placement
        and whole_pass.touched is not None
        and token is whole_pass.last
        and parts.reads is not None
        and not parts.reads.meets(whole_pass.touched)
        and (placement.kind, placement.namespace or "", placement.name) not in whole_pass.served
    )


@dataclass(frozen=True)
class _Parts:
    """What a placement's key is made of besides the pass, the cluster views and the commit:
    its declared JSON, its selection and the overrides serving it, and the label keys read
    (`_PARTS` keeps them with the `PassKey.token` of the last pass they were made or taken
    under)."""

    placement: AnyPlacement
    selection: Selection
    declared: tuple[Any, ...]
    keys: LabelKeys
    reads: Reads | None = None
    """The index lookups the selection made."""


_PARTS: StageMemo[_Parts] = StageMemo()
"""Placement key -> the `_Parts` made last, with the token they were made or taken under as
inputs (taken as they are while the token stays)."""


def _parts(
    placement: AnyPlacement,
    index: ResourceIndex,
    inputs: PassInputs,
    made: tuple[tuple[Any, ...], _Parts] | None = None,
    whole_pass: PassKey | None = None,
) -> _Parts:
    """The placement's parts, selected afresh. What `made` (its `_PARTS` entry of an earlier
    pass) made of the same placement object is taken rather than made again: its declared
    JSON, and, when it selected the very same objects and every override and pass-wide input
    is as then (the token but for the index entries, `passkey.same_serving`), everything else
    too."""
    selection, reads = select_read(placement, index)
    if selection.error is not None:
        return _Parts(placement, selection, (), None)
    now = whole_pass.token if whole_pass is not None else None
    last = made[1] if made is not None else None
    if made is None or last is None or last.placement is not placement or not last.declared:
        text = _declared(placement)
    elif last.selection.same_objects(selection) and same_serving(made[0][0], now):
        return _Parts(placement, selection, last.declared, last.keys, reads=reads)
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
    keys = label_keys(placement, serving, inputs.governance)
    return _Parts(placement, selection, declared, keys, reads=reads)


def copy_plan(plan: PlacementPlan) -> PlacementPlan:
    """A plan the later stages may change without touching `plan`: every mutable container is
    copied, but for `per_cluster`, which is handed on frozen (`rollkept.Frozen`: the very dict
    pass after pass, so later stages find an unchanged placement's by identity; a stage that
    changes it replaces it with its own copy, `rollkept.thawed`); the frozen values in them
    (states, manifests, conditions) are shared."""
    out = copy.copy(plan)
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
        _PLANS.put(key, known, _Kept(copy_plan(_shared(plan)), fleet_facts(views), keys))
    return plan


def _shared(plan: PlacementPlan) -> PlacementPlan:
    """`plan` with its `per_cluster` frozen, so the plan remembered and the one handed on now
    share it (and the next pass's copy is the very dict this pass's stages keyed)."""
    plan.per_cluster = frozen(plan.per_cluster)
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
    if not _reads_same(kept, fleet_facts(views), (outcome.bindings, prior.bindings)):
        return None
    plan = copy_plan(kept.plan)
    plan.decisions, plan.explanations = outcome.decisions, outcome.explanations
    plan.scheduled = outcome.condition() or kept.plan.scheduled
    return plan


def _reads_same(kept: _Kept, facts: FleetFacts, bindings: tuple[Sequence[Binding], ...]) -> bool:
    """No cluster that `bindings` name changed as the placement reads it since `kept`. A few
    changed clusters (a relabel, an added cluster) are compared first and the bindings walked
    only when one reads otherwise; many are first narrowed to those the bindings name."""
    changed = facts.changed_since(kept.facts)
    if len(changed) > _FEW_CHANGED:
        changed = changed & {b.cluster for bs in bindings for b in bs}
        return all(_row(kept.facts, n, kept.keys) == _row(facts, n, kept.keys) for n in changed)
    differ = {n for n in changed if _row(kept.facts, n, kept.keys) != _row(facts, n, kept.keys)}
    return not differ or all(b.cluster not in differ for bs in bindings for b in bs)


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

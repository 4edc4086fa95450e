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
place). A prior that changed only in what agents reported (binding conditions, deleting
bindings) takes the remembered plan with those values carried over (`placecarry`). When only
clusters changed, the plan is patched (`_rescheduled`): scheduled again (`schedule.reuse`) only
when a changed cluster may read otherwise to scheduling (`placepatch.plain_keys`, eligibility,
MemberCluster, presence) and then binding the same, no cluster it binds or bound changed as
scheduling or governance read it, and the targeted clusters that changed only in labels its
overrides read get their override results again, every other cluster's kept
(`placepatch.rerendered`: a relabel redoes that cluster's substitution only). Placements with
history to render, invalid selectors and held plans are always computed. One entry per placement
key, process-wide. Called by `reconciler.pass_`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gitfleet.api.canonical import canonical_json
from reconciler.override.compiled import CompiledOverride
from reconciler.passkey import PassKey, make_pass_key, same_serving
from reconciler.placecarry import carried_plan, copy_plan
from reconciler.placement import (
    AnyPlacement,
    PassInputs,
    PlacementPlan,
    place,
    resource_id,
    select_read,
)
from reconciler.placepatch import named, next_round, plain_keys, rerendered
from reconciler.rollkept import frozen
from reconciler.schedule.classes import selector_keys
from reconciler.schedule.clusters import ClusterView
from reconciler.schedule.fleetfacts import FleetFacts, fleet_facts
from reconciler.schedule.reuse import schedule_placement
from reconciler.select import Reads, ResourceIndex, Selection
from reconciler.stagememo import IdentityMemo, StageMemo, forget_stages
from reconciler.state import PlacementState

LabelKeys = frozenset[str] | None
"""The label keys a placement's work can read (None: any)."""


@dataclass(frozen=True)
class _Kept:
    """A plan `place` returned, with the fleet it saw, the label keys it could read and those
    of them its scheduling and governance read (`placepatch.plain_keys`; None: any)."""

    plan: PlacementPlan
    facts: FleetFacts
    keys: LabelKeys
    plain: LabelKeys = None


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
    """Every cluster label key `place` can read for this placement: those scheduling and
    governance read (`placepatch.plain_keys`: affinity and spread terms of the default
    scheduler profile, the only one, and every Tenant's cluster selector) and the selectors and
    `${MEMBER-CLUSTER-LABEL-KEY-*}` variables of its overrides' rules. None when a variable
    can read any label."""
    keys = set(plain_keys(placement, governance))
    for override in serving:
        for rule in override.rules:
            if rule.uses.all_labels:
                return None
            keys.update(rule.uses.labels)
            for term in rule.selector.cluster_selector_terms if rule.selector else ():
                keys.update(selector_keys(term.label_selector))
    return frozenset(keys)


def pass_key(views: Mapping[str, ClusterView], index: ResourceIndex, inputs: PassInputs) -> PassKey:
    """The part of every placement's key that is the same for the whole pass
    (`reconciler.passkey`; a key equal to no other when it cannot be made: nothing is reused
    then, and nothing fails)."""
    try:
        _declared_texts.next_round()
        next_round()
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
) -> tuple[tuple[Any, ...] | None, Selection | None, tuple[LabelKeys, LabelKeys]]:
    """The placement's key (None when its work must be done afresh every time), its
    selection when it was made (`place` takes it rather than selecting again), and the label
    keys it reads (all, and its scheduling's and governance's)."""
    if inputs.history.for_placement(key):
        return None, None, (None, None)
    made = _PARTS.last(key)  # ((the token they were made or taken under,), parts)
    if made is not None and _still(made, placement, whole_pass):
        parts = made[1]
    else:
        parts = _parts(placement, index, inputs, made, whole_pass)
        if parts.selection.error is not None:
            _PARTS.drop(key)
            return None, parts.selection, (None, None)
    _PARTS.put(key, (whole_pass.token,), parts)
    selection = parts.selection
    latest = prior.latest_resources()
    new_snapshot = latest is None or latest.hash != selection.hash
    commit = inputs.commit if new_snapshot else None
    return (whole_pass.rest, *parts.declared, commit), selection, (parts.keys, parts.plain)


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
    plain: LabelKeys = None
    """The label keys of `keys` scheduling and governance read (None: any)."""


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
        return _Parts(placement, selection, last.declared, last.keys, reads, last.plain)
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
    plain = plain_keys(placement, inputs.governance)
    return _Parts(placement, selection, declared, keys, reads, plain)


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
        fingerprint, selection, (keys, plain) = _fingerprint(
            key, placement, prior, index, inputs, whole_pass
        )
    except Exception:  # the key cannot be made: `place` runs (and reports what is wrong)
        fingerprint, selection, keys, plain = None, None, None, None
    known = (fingerprint, prior)  # the prior compared by identity first, like every StageMemo
    last = _PLANS.last(key) if fingerprint is not None else None
    if last is not None and last[0][1] is not prior and last[0][0] == fingerprint:
        last = _recarried(key, last, prior)
    if last is not None:
        facts = fleet_facts(views)
        if last[0] == known and _same_views(last[1], facts):
            if last[1].facts is not facts:  # later passes compare with this pass's rows
                _PLANS.put(key, known, _Kept(last[1].plan, facts, keys, plain))
            return copy_plan(last[1].plan)
        again = _rescheduled(key, placement, prior, (views, index, inputs), known, last)
        if again is not None:
            _PLANS.put(key, known, _Kept(copy_plan(again), facts, keys, plain))
            return again
    plan = place(key, placement, prior, views, index, inputs, selection)
    if fingerprint is not None:
        _PLANS.put(key, known, _Kept(copy_plan(_shared(plan)), fleet_facts(views), keys, plain))
    return plan


def _recarried(
    key: str, last: tuple[tuple[Any, ...], _Kept], prior: PlacementState
) -> tuple[tuple[Any, ...], _Kept]:
    """`last` remembered for `prior` when the priors differ only in what agents report
    (`placecarry.carried_plan`); else `last` as it is (and on any fault: `place` runs)."""
    (before, before_prior), kept = last
    try:
        plan = carried_plan(kept.plan, before_prior, prior)
    except Exception:
        return last
    if plan is None:
        return last
    now = _Kept(plan, kept.facts, kept.keys, kept.plain)
    _PLANS.put(key, (before, prior), now)
    return (before, prior), now


def _shared(plan: PlacementPlan) -> PlacementPlan:
    """`plan` with its `per_cluster` frozen, so the plan remembered and the one handed on now
    share it (and the next pass's copy is the very dict this pass's stages keyed)."""
    plan.per_cluster = frozen(plan.per_cluster)
    return plan


def _rescheduled(
    key: str,
    placement: AnyPlacement,
    prior: PlacementState,
    pass_inputs: tuple[Mapping[str, ClusterView], ResourceIndex, PassInputs],
    known: tuple[Any, ...],
    last: tuple[tuple[Any, ...], _Kept],
) -> PlacementPlan | None:
    """The remembered plan when only clusters changed (every other input is equal), patched
    for them (`_changes`): scheduled again when one may read otherwise to scheduling, and then
    binding the same; no cluster it binds or bound changed as scheduling or governance read it;
    the targeted clusters that changed only in labels its overrides read get their override
    results again (`placepatch.rerendered`). The rest of `place` reads nothing else of the
    fleet. None otherwise (`place` runs)."""
    (before, before_prior), kept = last
    fingerprint, _ = known
    if before_prior is not prior and before_prior != prior:
        return None
    if before != fingerprint or kept.plan.held:
        return None
    views = pass_inputs[0]
    bindings = kept.plan.state.bindings
    names = (named(bindings)[0], named(prior.bindings)[0])
    schedule, refused, relabelled = _changes(kept, fleet_facts(views), names)
    outcome = None
    if schedule and not refused:
        policy_index = kept.plan.state.policy_snapshots[-1].index  # equal placement and prior
        outcome = schedule_placement(key, placement, prior.bindings, views, policy_index)
        if isinstance(outcome, str) or outcome.bindings != bindings:
            return None
    per_cluster = None if refused else rerendered(kept.plan, placement, relabelled, *pass_inputs)
    if per_cluster is None:
        return None
    plan = copy_plan(kept.plan)
    if per_cluster is not kept.plan.per_cluster:
        plan.per_cluster = frozen(per_cluster)
    if outcome is not None and not isinstance(outcome, str):
        plan.decisions, plan.explanations = outcome.decisions, outcome.explanations
        plan.scheduled = outcome.condition() or kept.plan.scheduled
    return plan


def _changes(
    kept: _Kept, facts: FleetFacts, names: tuple[frozenset[str], frozenset[str]]
) -> tuple[bool, bool, list[str]]:
    """What changed since `kept` for a placement whose bindings (this pass's and the prior's)
    name `names` (the two sets, not joined: a PickAll's name ~1,000 clusters): (scheduling must
    run again: a cluster may read otherwise to it; refused: a named cluster changed as
    scheduling or governance read it; the named clusters that changed only in labels the
    overrides read, sorted). A few changed clusters are all compared; many are first narrowed
    to the named ones (scheduling runs then)."""
    changed = facts.changed_since(kept.facts)
    ours, theirs = names
    mine = {n for n in changed if n in ours or n in theirs}
    scan = changed if len(changed) <= _FEW_CHANGED else mine
    plain, keys = _order(kept.plain), _order(kept.keys)
    moved = {n for n in scan if _row(kept.facts, n, plain) != _row(facts, n, plain)}
    relabelled = sorted(
        n for n in mine if n not in moved and _row(kept.facts, n, keys) != _row(facts, n, keys)
    )
    return bool(moved) or len(scan) < len(changed), not moved.isdisjoint(mine), relabelled


def _same_views(kept: _Kept, facts: FleetFacts) -> bool:
    """Every cluster reads the same to the placement as when its plan was made: no cluster
    added or removed, and none changed in eligibility, MemberCluster digest or the values of
    the label keys the placement reads."""
    changed = facts.changed_since(kept.facts)
    if not changed:
        return True
    keys = _order(kept.keys)
    return all(_row(kept.facts, n, keys) == _row(facts, n, keys) for n in changed)


def _order(keys: LabelKeys) -> list[str] | None:
    """Label `keys` sorted (None: any), as `_row` reads them."""
    return sorted(keys) if keys is not None else None


def _row(facts: FleetFacts, name: str, keys: list[str] | None) -> tuple[Any, ...] | None:
    """A cluster's row as a placement reading label `keys` (sorted; None: any) sees it (None:
    no such cluster)."""
    row = facts.rows.get(name)
    if row is None:
        return None
    reason, digest, labels = row
    return (reason, digest, _labels(labels, keys))


def forget() -> None:
    """Drop every remembered plan and every stage's remembered results (tests compare a pass
    with and without reuse)."""
    forget_stages()

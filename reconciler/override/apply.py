"""Overrides of one placement: which apply on a cluster, and the patched object per cluster.

`PlacementOverrides` (from `OverrideIndex.for_placement`) holds the overrides that serve the
placement and select one of its resources (§3.2). `applicable(view)` lists those with a rule
matching the cluster (§3.2.3); `apply(sel, view)` runs KubeFleet's `applyOverrides` (§3.4): the
CROs on the object (or on its Namespace), then its ROs; per override the matching rules in order;
a Delete ends that override and the object stays deleted; ops go through jsonpatch on a private
copy, all-or-nothing per object. Results are memoised pass-wide in `cache.OverrideCache`: the same
object, the same matching rules and the same values of the variables those rules read give the
same `Applied` instance, so the caller serialises each distinct result once. Called by the
reconcile pass (`reconciler.placement`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gitfleet.api.canonical import canonical_json
from reconciler.override.cache import Applied, OverrideCache, OverrideFault, Plan, Planned, Route
from reconciler.override.compiled import CompiledOverride, CompiledRule, TargetKey, namespace_key
from reconciler.override.patch import apply_operation
from reconciler.override.variables import VariableError, substitute
from reconciler.schedule.clusters import ClusterView
from reconciler.select.model import SelectedResource

Facts = tuple[str, Mapping[str, str]]
"""What override variables read of a cluster: its name and its labels."""


def _object_key(sel: SelectedResource) -> tuple[str, ...]:
    raw = sel.raw or canonical_json(sel.obj)
    return (sel.group, sel.version, sel.kind, sel.namespace, sel.name, raw)


def _where(sel: SelectedResource) -> str:
    where = f'{sel.kind} "{sel.name}"'
    return f'{where} in namespace "{sel.namespace}"' if sel.namespace else where


class _Failure(Exception):
    def __init__(self, override: CompiledOverride, rule: int, op: int, reason: str) -> None:
        super().__init__(reason)
        self.override, self.rule, self.op, self.reason = override, rule, op, reason


def _run_rule(
    doc: Any,
    override: CompiledOverride,
    rule: CompiledRule,
    cluster: Facts,
    budget: tuple[int, int],
) -> Any:
    """Apply one JSONPatch rule to `doc`; raises _Failure. Variables first, as KubeFleet does,
    from `cluster` (its name and labels).

    `budget` is (ops applied so far to this object, the cap)."""
    if len(rule.ops) > budget[1] - budget[0]:
        op = rule.ops[max(budget[1] - budget[0], 0)]
        raise _Failure(
            override,
            rule.index,
            op.index,
            f"more than {budget[1]} JSON patch operations on one object (MAX_PATCH_OPS_PER_OBJECT)",
        )
    values: list[Any] = []
    for op in rule.ops:
        if op.variables.problem:
            raise _Failure(override, rule.index, op.index, op.variables.problem)
        try:
            values.append(
                None if op.op == "remove" else substitute(op.value, cluster[0], cluster[1])
            )
        except VariableError as exc:
            raise _Failure(override, rule.index, op.index, str(exc)) from None
    for op, value in zip(rule.ops, values, strict=True):
        doc, problem = apply_operation(doc, op.op, op.path, value, op.pointer)
        if problem:
            raise _Failure(override, rule.index, op.index, problem)
    return doc


def run_plan(doc: Any, sel: SelectedResource, plan: Plan, cluster: Facts, max_ops: int) -> Applied:
    """Apply the plan to `doc`, a private copy of `sel.obj` (nothing escapes on failure), with
    the variables of the cluster `cluster` (its name and labels)."""
    used = 0
    try:
        for override, match in plan:
            for i in match.rules:
                rule = override.rules[i]
                if rule.delete:
                    return Applied(obj=None, overridden=True)
                doc = _run_rule(doc, override, rule, cluster, (used, max_ops))
                used += len(rule.ops)
    except _Failure as fail:
        return Applied(
            obj=None,
            error=_message(sel, fail),
            failed_override=fail.override.key,
            fault=_fault(sel, fail),
        )
    return Applied(obj=doc, overridden=True)


def _message(sel: SelectedResource, fail: _Failure) -> str:
    ov = fail.override
    op = ov.rules[fail.rule].ops[fail.op]
    return (
        f'{ov.kind}Snapshot "{ov.snapshot}" failed to apply on {_where(sel)}: '
        f"{ov.origin.file}: rule {fail.rule}, op {fail.op} ({op.op} {op.path}): {fail.reason}"
    )


def _fault(sel: SelectedResource, fail: _Failure) -> OverrideFault:
    ov = fail.override
    op = ov.rules[fail.rule].ops[fail.op]
    name = f"{ov.namespace}/{ov.name}" if ov.namespace else ov.name
    return OverrideFault(
        ov.origin.file,
        ov.origin.doc,
        ov.origin.line,
        f"spec.policy.overrideRules[{fail.rule}].jsonPatchOverrides[{fail.op}]",
        f'{ov.kind} "{name}": {op.op} {op.path} failed on {_where(sel)}: {fail.reason}',
    )


@dataclass(frozen=True)
class PlacementOverrides:
    """The overrides relevant to one placement (see module docstring)."""

    overrides: tuple[CompiledOverride, ...]
    """Relevant overrides, CROs by name then ROs by (namespace, name)."""
    by_target: Mapping[TargetKey, tuple[CompiledOverride, ...]]
    cache: OverrideCache = field(compare=False, repr=False)
    routes: dict[TargetKey, Route] = field(default_factory=dict, compare=False, repr=False)
    """Object identity -> its route (filled lazily)."""

    def applicable(self, view: ClusterView) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(CRO keys sorted by name, RO keys sorted by (namespace, name)) kept for the cluster."""
        kept = [o for o in self.overrides if self.cache.matching_rules(o, view).rules]
        return (
            tuple(o.key for o in kept if o.is_cro),
            tuple(o.key for o in kept if not o.is_cro),
        )

    def route(self, sel: SelectedResource) -> Route:
        """The overrides targeting `sel`: CROs of the object (or of its Namespace), then ROs."""
        ident = (sel.group, sel.version, sel.kind, sel.namespace, sel.name)
        hit = self.routes.get(ident)
        if hit is None:
            if sel.namespace:
                # by_target lists are in application order; CRO targets never equal RO targets.
                hit = self.by_target.get(namespace_key(sel.namespace), ()) + self.by_target.get(
                    ident, ()
                )
            else:
                hit = self.by_target.get(ident, ())
            self.routes[ident] = hit
        return hit

    def plan(self, sel: SelectedResource, view: ClusterView) -> Plan:
        """The overrides and matching rules that apply to `sel` on this cluster, in order."""
        return self.cache.planned(self.route(sel), view).plan

    def apply(self, sel: SelectedResource, view: ClusterView) -> Applied:
        """`sel` after its overrides on this cluster (memoised, see module docstring)."""
        planned = self.cache.planned(self.route(sel), view)
        obj_key = _object_key(sel)
        named = view.name if planned.named else None
        key = (obj_key, planned.rules_key, planned.labels_key, named)
        hit = self.cache.results.get(key)
        if hit is None:
            hit = self._run(sel, planned, obj_key, (view.name, view.labels))
            self.cache.results[key] = hit
        return hit

    def apply_as(self, sel: SelectedResource, view: ClusterView, cluster: Facts) -> Applied:
        """`sel` after the overrides whose rules match `view`, their variables read from
        `cluster` instead (name templates: stand-ins for the name and labels; not memoised)."""
        planned = self.cache.planned(self.route(sel), view)
        return self._run(sel, planned, _object_key(sel), cluster)

    def _run(
        self, sel: SelectedResource, planned: Planned, obj_key: tuple[str, ...], cluster: Facts
    ) -> Applied:
        if not planned.plan:
            return Applied(sel.obj)
        doc = self._copy(obj_key, sel)
        return run_plan(doc, sel, planned.plan, cluster, self.cache.max_ops)

    def result_key(
        self, sel: SelectedResource, view: ClusterView
    ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """What the object `apply(sel, view)` makes depends on, across passes too: the object's
        content, the matching rules of each applying override with that override's key and
        content hash, the variable values read, the op limit (a new snapshot of equal content,
        an edit reverted, keeps it); and what a failure reads beyond it: the snapshot name and
        origin of each applying override (its message and fault name them)."""
        planned = self.cache.planned(self.route(sel), view)
        overrides = tuple((o.key, o.hash, m.rules) for o, m in planned.plan)
        named = view.name if planned.named else None
        key = (_object_key(sel), overrides, planned.labels_key, named, self.cache.max_ops)
        return key, tuple((o.snapshot, o.origin) for o, _ in planned.plan)

    def _copy(self, obj_key: tuple[str, ...], sel: SelectedResource) -> Any:
        """A private deep copy of `sel.obj` (json.loads of cached text: C speed, key order kept)."""
        source = self.cache.sources.get(obj_key)
        if source is None:
            source = json.dumps(sel.obj, ensure_ascii=False)
            self.cache.sources[obj_key] = source
        return json.loads(source)


def relevant_overrides(
    overrides: Sequence[CompiledOverride], candidates: set[TargetKey]
) -> tuple[CompiledOverride, ...]:
    """The overrides one of whose targets is a candidate key, in application order."""
    hits = [o for o in overrides if o.targets & candidates]
    return tuple(sorted(hits, key=CompiledOverride.sort_key))

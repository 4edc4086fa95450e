"""Overrides compiled once per pass: keys, targets, placement scope, rules and content hash.

`compile_cro` / `compile_ro` turn a validated ClusterResourceOverride / ResourceOverride into a
frozen `CompiledOverride`: the resource keys it targets (§3.2.2), which placements it may serve
(§3.2.1), its rules with their cluster selectors (§3.3) and patch ops (with the variables each
value reads, §3.4.5), and the sha256 of the canonical JSON of its spec (the override snapshot
hash). Called by `reconciler.override.index`; read by `reconciler.override.apply`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gitfleet.api import ClusterResourceOverride, ResourceOverride
from gitfleet.api.canonical import canonical_json
from gitfleet.api.override import OverrideRule
from gitfleet.api.selectors import ClusterSelector
from gitfleet.load.model import Origin
from reconciler.override.patch import compile_pointer
from reconciler.override.variables import VariableUse, scan_variables

CRO_KIND = "ClusterResourceOverride"
RO_KIND = "ResourceOverride"
CRP_KIND = "ClusterResourcePlacement"
RP_KIND = "ResourcePlacement"

TargetKey = tuple[str, str, str, str, str]
"""(group, version, kind, namespace, name) a selector names; namespace '' for CRO targets."""


def namespace_key(namespace: str) -> TargetKey:
    """The CRO key of every namespaced object in `namespace` (its core/v1 Namespace)."""
    return ("", "v1", "Namespace", "", namespace)


@dataclass(frozen=True, eq=False)
class CompiledOp:
    """One JSON patch op of a rule."""

    index: int
    op: str
    path: str
    value: Any
    """As declared (variables not replaced). Never mutated; `substitute` copies it."""
    variables: VariableUse
    pointer: Any = None
    """The parsed path (jsonpointer.JsonPointer), None when it does not parse."""


@dataclass(frozen=True, eq=False)
class CompiledRule:
    """One override rule: cluster selector, Delete or ops."""

    index: int
    selector: ClusterSelector | None
    delete: bool
    ops: tuple[CompiledOp, ...]
    uses: VariableUse = field(default_factory=VariableUse)
    """The variables of all its ops."""

    def matches(self, labels: Mapping[str, str]) -> bool:
        """KubeFleet's IsClusterMatched: nil selects none, no terms selects all, terms OR-ed."""
        if self.selector is None:
            return False
        terms = self.selector.cluster_selector_terms
        if not terms:
            return True
        return any(t.label_selector is not None and t.label_selector.matches(labels) for t in terms)


@dataclass(frozen=True, eq=False)
class CompiledOverride:
    """A CRO or RO ready to apply."""

    key: str
    """`ClusterResourceOverride/<name>` or `ResourceOverride/<ns>/<name>`."""
    kind: str
    name: str
    namespace: str
    origin: Origin
    hash: str
    targets: frozenset[TargetKey]
    placement: tuple[str, str, str] | None
    """(placement kind, namespace, name) this override is restricted to, None for any."""
    rules: tuple[CompiledRule, ...]
    snapshot: str = ""
    """Name of the latest override snapshot (`<name>-<index>`), used in error messages."""

    @property
    def is_cro(self) -> bool:
        return self.kind == CRO_KIND

    def sort_key(self) -> tuple[int, str, str]:
        """CROs by name first, then ROs by (namespace, name) (§3.2.3, §3.4.2)."""
        return (0 if self.is_cro else 1, self.namespace, self.name)

    def serves(self, kind: str, namespace: str, name: str) -> bool:
        """Whether this override may apply to the placement (kind, namespace, name)."""
        return self.placement is None or self.placement == (kind, namespace, name)


def override_key(kind: str, namespace: str, name: str) -> str:
    """The key of an override in hashes, snapshots and status."""
    return f"{kind}/{name}" if kind == CRO_KIND else f"{kind}/{namespace}/{name}"


def spec_hash(spec: Any) -> str:
    """sha256 hex of the canonical JSON of an override's spec (defaults included)."""
    dumped = spec.model_dump(by_alias=True, mode="json")
    return hashlib.sha256(canonical_json(dumped).encode()).hexdigest()


def _rule(index: int, rule: OverrideRule) -> CompiledRule:
    delete = rule.override_type == "Delete"
    ops = (
        ()
        if delete
        else tuple(
            CompiledOp(i, p.op, p.path, p.value, scan_variables(p.value), compile_pointer(p.path))
            for i, p in enumerate(rule.json_patch_overrides or [])
        )
    )
    uses = VariableUse()
    for op in ops:
        uses = uses.merge(op.variables)
    return CompiledRule(index, rule.cluster_selector, delete, ops, uses)


def compile_cro(cro: ClusterResourceOverride, origin: Origin) -> CompiledOverride:
    """A CRO: targets are cluster-scoped (group, version, kind, name); scope Cluster only."""
    spec = cro.spec
    targets = frozenset(
        (sel.group, sel.version, sel.kind, "", sel.name or "")
        for sel in spec.cluster_resource_selectors
    )
    placement = (CRP_KIND, "", spec.placement.name) if spec.placement is not None else None
    return CompiledOverride(
        key=override_key(CRO_KIND, "", cro.name),
        kind=CRO_KIND,
        name=cro.name,
        namespace="",
        origin=origin,
        hash=spec_hash(spec),
        targets=targets,
        placement=placement,
        rules=tuple(_rule(i, r) for i, r in enumerate(spec.policy.override_rules)),
    )


def compile_ro(ro: ResourceOverride, origin: Origin) -> CompiledOverride:
    """An RO: targets are in its namespace; placement Cluster -> a CRP, Namespaced -> an RP."""
    spec, namespace = ro.spec, ro.namespace or ""
    targets = frozenset(
        (sel.group, sel.version, sel.kind, namespace, sel.name) for sel in spec.resource_selectors
    )
    placement: tuple[str, str, str] | None = None
    if spec.placement is not None and spec.placement.scope == "Namespaced":
        placement = (RP_KIND, namespace, spec.placement.name)
    elif spec.placement is not None:
        placement = (CRP_KIND, "", spec.placement.name)
    return CompiledOverride(
        key=override_key(RO_KIND, namespace, ro.name),
        kind=RO_KIND,
        name=ro.name,
        namespace=namespace,
        origin=origin,
        hash=spec_hash(spec),
        targets=targets,
        placement=placement,
        rules=tuple(_rule(i, r) for i, r in enumerate(spec.policy.override_rules)),
    )

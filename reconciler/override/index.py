"""The pass-wide override index: cross-object validation, content hashes, per-placement views.

`build_override_index(fleet)` takes the ClusterResourceOverrides and ResourceOverrides that
passed their per-object webhook rules at load time and applies the cross-object rules of
kubefleet.md §3.5: at most 100 CROs and 100 ROs (a Git repository has no creation order, so the
first 100 CROs by name and the first 100 ROs by (namespace, name) are kept; each one beyond is an
error and ignored) and one override per resource (the same selector in two CROs, or in two ROs of
one namespace: the later one by name is an error and is ignored entirely, via
`gitfleet.api.check_override_conflicts`). The rest are compiled once (once per object while
a long-running hub keeps loading it as the same object, `_compile`). `OverrideIndex.hashes()`
gives each override's content hash for override snapshots; `for_placement` gives the overrides
relevant to one placement (`reconciler.override.apply.PlacementOverrides`). Called by the
reconcile pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from gitfleet.api import (
    ClusterResourceOverride,
    ClusterResourcePlacement,
    ResourceOverride,
    ResourcePlacement,
)
from gitfleet.api.errors import FieldIssue, FleetError
from gitfleet.api.override import check_override_conflicts
from gitfleet.load.model import FleetSnapshot, Origin
from reconciler.override.apply import PlacementOverrides, relevant_overrides
from reconciler.override.cache import OverrideCache
from reconciler.override.compiled import (
    CRO_KIND,
    RO_KIND,
    CompiledOverride,
    TargetKey,
    compile_cro,
    compile_ro,
    override_key,
)
from reconciler.override.envelope import target_keys, wrapped_targets
from reconciler.override.patch import MAX_PATCH_OPS_PER_OBJECT
from reconciler.override.snapshots import snapshot_name
from reconciler.select.model import SelectedResource
from reconciler.stagememo import IdentityMemo
from reconciler.state import Snapshot

MAX_CLUSTER_RESOURCE_OVERRIDES = 100
MAX_RESOURCE_OVERRIDES = 100


@dataclass(frozen=True)
class OverrideIndex:
    """Valid overrides of one pass, CROs by name then ROs by (namespace, name)."""

    overrides: tuple[CompiledOverride, ...]
    cache: OverrideCache = field(default_factory=OverrideCache, compare=False, repr=False)
    by_ref: dict[tuple[str, str, str] | None, list[CompiledOverride]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """Placement (None: any) -> the overrides restricted to it (`_serving`, filled once)."""
    made: dict[tuple[str, str, str], tuple[Sequence[SelectedResource], PlacementOverrides]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """Placement -> the selection `for_placement` last saw and what it made of it."""

    def hashes(self) -> dict[str, str]:
        """Override key -> sha256 of its spec."""
        return {o.key: o.hash for o in self.overrides}

    def with_snapshots(self, snapshots: Mapping[str, tuple[Snapshot, ...]]) -> OverrideIndex:
        """A copy naming each override's latest snapshot (`<name>-<index>`) in error messages.

        Without it, messages name snapshot index 0. Call before any `apply`. An override
        named as in the last pass is that pass's very object (`_renamed`)."""
        _renamed.next_round()
        named = tuple(
            _with_snapshot(o, snapshot_name(o.key, _latest(snapshots.get(o.key, ()))))
            for o in self.overrides
        )
        return OverrideIndex(named, OverrideCache(max_ops=self.cache.max_ops))

    def for_placement(
        self,
        placement: ClusterResourcePlacement | ResourcePlacement,
        selected: Sequence[SelectedResource],
    ) -> PlacementOverrides:
        """The overrides serving `placement` that target one of its resources (§3.2.1-2).
        Made once per placement and selection in this index (`placememo` keys a placement
        by them, then `place` applies them)."""
        kind, namespace = placement.kind, placement.namespace or ""
        ref = (kind, namespace, placement.name)
        made = self.made.get(ref)
        if made is not None and made[0] is selected:
            return made[1]
        serving = self._serving(ref)
        candidates: set[TargetKey] = set()
        for sel in selected:
            candidates.update(
                target_keys(sel.group, sel.version, sel.kind, sel.namespace, sel.name)
            )
            candidates.update(wrapped_targets(sel))
        relevant = relevant_overrides(serving, candidates)
        by_target: dict[TargetKey, list[CompiledOverride]] = {}
        for override in relevant:
            for target in sorted(override.targets):
                by_target.setdefault(target, []).append(override)
        found = PlacementOverrides(
            overrides=relevant,
            by_target={k: tuple(v) for k, v in by_target.items()},
            cache=self.cache,
        )
        self.made[ref] = (selected, found)
        return found

    def _serving(self, ref: tuple[str, str, str]) -> list[CompiledOverride]:
        """The overrides that may serve the placement `ref` (`CompiledOverride.serves`): those
        naming it and those naming none, from a table made once per index."""
        if not self.by_ref:
            for override in self.overrides:
                self.by_ref.setdefault(override.placement, []).append(override)
            self.by_ref.setdefault(None, [])
        return self.by_ref.get(ref, []) + self.by_ref[None]


def _latest(history: tuple[Snapshot, ...]) -> int:
    return history[-1].index if history else 0


def _origin(fleet: FleetSnapshot, kind: str, namespace: str, name: str) -> Origin:
    return fleet.origins.get((kind, namespace, name)) or Origin(file="", doc=0, line=0)


def _error(origin: Origin, issue: FieldIssue) -> FleetError:
    return FleetError(
        file=origin.file,
        line=origin.line or None,
        field=issue.field,
        message=issue.message,
        doc=origin.doc,
    )


def _cap_errors(
    fleet: FleetSnapshot, kind: str, beyond: Sequence[ClusterResourceOverride | ResourceOverride]
) -> list[FleetError]:
    limit, noun, order = (
        (MAX_CLUSTER_RESOURCE_OVERRIDES, "cluster resource overrides", "name")
        if kind == CRO_KIND
        else (MAX_RESOURCE_OVERRIDES, "resource overrides", "namespace and name")
    )
    message = (
        f"at most {limit} {noun} can be created; gitfleet keeps the first {limit} by {order} "
        "and ignores this one"
    )
    return [
        _error(
            _origin(fleet, kind, o.namespace or "", o.name), FieldIssue("metadata.name", message)
        )
        for o in beyond
    ]


_renamed: IdentityMemo[tuple[str, CompiledOverride]] = IdentityMemo()
"""Compiled override -> (a snapshot name, it named so), for the last two passes."""


def _with_snapshot(override: CompiledOverride, name: str) -> CompiledOverride:
    """`override` naming snapshot `name` (made once per override object and name)."""
    if override.snapshot == name:
        return override
    found = _renamed.get(override)
    if found is None or found[0] != name:
        found = (name, replace(override, snapshot=name))
    _renamed.put(override, found)
    return found[1]


_compiled: IdentityMemo[tuple[Origin, CompiledOverride]] = IdentityMemo()
"""Override object -> (its origin, what it compiled to), for the last two passes: a
long-running hub loads an unchanged file's overrides as the very same objects."""


def _compile(
    override: ClusterResourceOverride | ResourceOverride, origin: Origin
) -> CompiledOverride:
    """`compile_cro` / `compile_ro` named after snapshot 0, made once per object and origin."""
    found = _compiled.get(override)
    if found is not None and found[0] == origin:
        return found[1]
    if isinstance(override, ClusterResourceOverride):
        made = compile_cro(override, origin)
    else:
        made = compile_ro(override, origin)
    named = replace(made, snapshot=snapshot_name(made.key, 0))
    _compiled.put(override, (origin, named))
    return named


def build_override_index(
    fleet: FleetSnapshot, *, max_ops: int = MAX_PATCH_OPS_PER_OBJECT
) -> tuple[OverrideIndex, list[FleetError]]:
    """Validate across overrides, compile the valid ones (see module docstring).

    `max_ops` is the per-object op cap (MAX_PATCH_OPS_PER_OBJECT); tests lower it."""
    cros = sorted(fleet.cluster_overrides.values(), key=lambda o: o.name)
    ros = sorted(fleet.resource_overrides.values(), key=lambda o: (o.namespace or "", o.name))
    errors = _cap_errors(fleet, CRO_KIND, cros[MAX_CLUSTER_RESOURCE_OVERRIDES:])
    errors += _cap_errors(fleet, RO_KIND, ros[MAX_RESOURCE_OVERRIDES:])
    cros, ros = cros[:MAX_CLUSTER_RESOURCE_OVERRIDES], ros[:MAX_RESOURCE_OVERRIDES]
    bad: set[str] = set()
    for (kind, namespace, name), issue in check_override_conflicts(cros, ros):
        bad.add(override_key(kind, namespace, name))
        errors.append(_error(_origin(fleet, kind, namespace, name), issue))
    _compiled.next_round()
    named = tuple(
        _compile(cro, _origin(fleet, CRO_KIND, "", cro.name))
        for cro in cros
        if override_key(CRO_KIND, "", cro.name) not in bad
    ) + tuple(
        _compile(ro, _origin(fleet, RO_KIND, ro.namespace or "", ro.name))
        for ro in ros
        if override_key(RO_KIND, ro.namespace or "", ro.name) not in bad
    )
    errors.sort(key=lambda e: (e.file, e.doc or 0, e.line or 0, e.field, e.message))
    return OverrideIndex(named, OverrideCache(max_ops=max_ops)), errors

"""Fail closed when a Tenant does not load: nothing it restricted becomes unrestricted.

A Tenant that fails to load (`FleetSnapshot.unloaded_tenants`; or a file under `tenants/` that
loaded nothing, which no loaded Tenant owns) would leave the paths it owned unrestricted. While
one is broken, `closed_rules` builds `Closed`, and `Closed.problems` (called by
`tenancy.placement_problems` after selection and scheduling) holds — keeps the previous output
of, like a placement whose own file fails to load —
- every placement that no loaded Tenant owns (its file may be the broken Tenant's), and
- a loaded Tenant's placement on which an object no loaded Tenant owns acts: an override that
  names it or patches one of its objects, an eviction or update run that names it, an
  approval of such a run, a ReplicaDistribution of one of its workloads (that object may be the
  broken Tenant's).
Placements of Tenants that loaded go on normally. Called by `reconciler.govern.tenancy`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gitfleet.load.model import FleetSnapshot, Origin
from reconciler.override.compiled import CompiledOverride, compile_cro, compile_ro
from reconciler.override.envelope import target_keys, wrapped_targets

TENANT_DIR = "tenants/"
RULE = "placements not owned by a loaded Tenant keep their previous output until it loads"
MAX_SHOWN = 3
RESTRICTING = frozenset({"ClusterResourcePlacementDisruptionBudget"})
"""Kinds that only restrict a placement: they act whoever owns them."""
Owner = Callable[[Origin | None], str | None]
"""The loaded Tenant owning an object's file (None: none does)."""


def broken_tenant_files(fleet: FleetSnapshot) -> dict[str, int | None]:
    """File -> line of every Tenant that did not load. A file under `tenants/` from which
    nothing loaded and that no loaded Tenant owns counts too (it may be a Tenant that failed
    before it could be read: too large, not UTF-8, a template error)."""
    broken = dict(fleet.unloaded_tenants)
    candidates = [f for f in fleet.error_files if f.startswith(TENANT_DIR) and f not in broken]
    if candidates:
        loaded = {o.file for o in fleet.origins.values()}
        loaded |= {r.origin.file for r in fleet.resources}
        for file in candidates:
            if file not in loaded and not any(t.owns(file) for t in fleet.tenants.values()):
                broken[file] = None
    return dict(sorted(broken.items()))


@dataclass(frozen=True)
class Closed:
    """What is held while Tenant files are broken (empty `broken`: nothing)."""

    broken: Mapping[str, int | None] = field(default_factory=dict)
    named: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Placement key -> objects no loaded Tenant owns that name it."""
    overrides: tuple[CompiledOverride, ...] = ()
    """Overrides no loaded Tenant owns that may patch any placement's objects."""
    workloads: Mapping[tuple[str, str, str], str] = field(default_factory=dict)
    """(namespace, kind, name) -> the ReplicaDistribution no loaded Tenant owns that scales it."""

    def where(self) -> str:
        shown = [f"{f}:{line}" if line else f for f, line in self.broken.items()]
        more = len(shown) - MAX_SHOWN
        return ", ".join(shown[:MAX_SHOWN]) + (f" (+{more} more)" if more > 0 else "")

    def problems(
        self, tenant: str | None, key: str, selected: Sequence[Any]
    ) -> list[tuple[str, str]]:
        """(field, message) holding the placement `key` of `tenant`, none when it goes on."""
        if not self.broken:
            return []
        cause = f"Tenant file {self.where()} failed to load"
        if tenant is None:
            return [("", f"keeps its previous output: {cause}: {RULE}")]
        acting = [*self.named.get(key, ()), *self._acting(selected)]
        return [
            (
                "",
                f"keeps its previous output: {what}, which no loaded Tenant owns, acts on it "
                f"while {cause} (it may be the broken Tenant's)",
            )
            for what in sorted(set(acting))[:MAX_SHOWN]
        ]

    def _acting(self, selected: Sequence[Any]) -> Iterable[str]:
        if not self.overrides and not self.workloads:
            return
        candidates = set()
        for sel in selected:
            candidates.update(
                target_keys(sel.group, sel.version, sel.kind, sel.namespace, sel.name)
            )
            candidates.update(wrapped_targets(sel))
            found = self.workloads.get((sel.namespace, sel.kind, sel.name))
            if found is not None:
                yield found
        for override in self.overrides:
            if override.targets & candidates:
                yield f"{override.kind} {override.key.split('/', 1)[1]} ({override.origin.file})"


def _show(kind: str, ns: str, name: str, origin: Origin | None) -> str:
    at = f" ({origin.file})" if origin is not None else ""
    return f"{kind} {ns + '/' if ns else ''}{name}{at}"


def _named(fleet: FleetSnapshot, owner: Owner, references: Iterable[Any]) -> dict[str, list[str]]:
    """Placement key -> un-owned objects of the `references` slots that name it."""
    named: dict[str, list[str]] = {}
    for slot, kind, target_of in references:
        for key, obj in getattr(fleet, slot).items():
            ns, name = key if isinstance(key, tuple) else ("", key)
            origin = fleet.origins.get((kind, ns, name))
            target = target_of(obj, ns)
            if target is not None and owner(origin) is None:
                named.setdefault(target, []).append(_show(kind, ns, name, origin))
    return named


def _overrides(
    fleet: FleetSnapshot, owner: Owner, named: dict[str, list[str]], key_of: Callable[..., str]
) -> list[CompiledOverride]:
    """Un-owned overrides: those naming a placement go to `named`, the others are returned."""
    loose = []
    entries: list[tuple[str, str, str, Any]] = [
        *(("ClusterResourceOverride", "", n, o) for n, o in fleet.cluster_overrides.items()),
        *(("ResourceOverride", k[0], k[1], o) for k, o in fleet.resource_overrides.items()),
    ]
    for kind, ns, name, override in entries:
        origin = fleet.origins.get((kind, ns, name))
        if owner(origin) is not None or origin is None:
            continue
        ref = override.spec.placement
        if ref is not None:
            target = key_of(ref.name, ns if ref.scope == "Namespaced" else "")
            named.setdefault(target, []).append(_show(kind, ns, name, origin))
        elif kind == "ClusterResourceOverride":
            loose.append(compile_cro(override, origin))
        else:
            loose.append(compile_ro(override, origin))
    return loose


def _approvals(fleet: FleetSnapshot, key_of: Callable[..., str]) -> list[Any]:
    """Approval requests as references: the placement of the update run they approve."""
    cluster_runs = {n: key_of(r.spec.placement_name) for n, r in fleet.update_runs.items()}
    runs = {k: key_of(r.spec.placement_name, k[0]) for k, r in fleet.staged_update_runs.items()}
    return [
        (
            "approvals",
            "ClusterApprovalRequest",
            lambda o, _: cluster_runs.get(o.spec.parent_stage_rollout),
        ),
        (
            "staged_approvals",
            "ApprovalRequest",
            lambda o, ns: runs.get((ns, o.spec.parent_stage_rollout)),
        ),
    ]


def closed_rules(
    fleet: FleetSnapshot, owner: Owner, references: Iterable[Any], key_of: Callable[..., str]
) -> Closed:
    """The holds of this revision (`Closed()` when every Tenant loaded). `references`:
    (snapshot slot, kind, placement key the object acts on) as `tenancy.REFERENCES`."""
    broken = broken_tenant_files(fleet)
    if not broken:
        return Closed()
    acting = [r for r in references if r[1] not in RESTRICTING]
    named = _named(fleet, owner, [*acting, *_approvals(fleet, key_of)])
    loose = _overrides(fleet, owner, named, key_of)
    workloads = {}
    for (ns, name), rd in fleet.distributions.items():
        origin = fleet.origins.get(("ReplicaDistribution", ns, name))
        if owner(origin) is None:
            ref = rd.spec.workload
            workloads[(ns, ref.kind, ref.name)] = _show("ReplicaDistribution", ns, name, origin)
    return Closed(
        broken,
        {k: tuple(sorted(v)) for k, v in sorted(named.items())},
        tuple(loose),
        dict(sorted(workloads.items())),
    )

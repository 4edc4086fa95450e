"""Tenants in the pass: which files each tenant owns, and what the objects there may do.

`govern_fleet` runs first in the pass (static rules): a file owned by two tenants, a payload
object of a kind or namespace its tenant may not place, a ResourcePlacement in a foreign
namespace, an override that does not name one of its tenant's placements (or an allowed
`spec.overrideTargets` one), an eviction, disruption budget or update run of a placement that is
not the tenant's, a ReplicaDistribution in a foreign namespace, or a MemberCluster, approval or
ClusterGroupUpgrade declared by a tenant is an error naming the file, line, field and tenant rule; that object is left out and its file counts as failed, so a
placement that placed it keeps its previous output. `placement_problems` runs in
`reconciler.placement.place` after selection and scheduling: a tenant's placement that selects
an object it may not place or would reach a cluster outside the tenant's `spec.clusterSelector`
is refused (an error, its previous output kept), like an Argo CD AppProject refusing an
Application. Files no tenant owns are not restricted; without any Tenant nothing changes. While
a Tenant fails to load, what no loaded Tenant owns is held (`reconciler.govern.closed`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from gitfleet.api.errors import FleetError
from gitfleet.api.tenant import Tenant
from gitfleet.load.model import FleetSnapshot, Origin, Resource
from reconciler.govern.closed import Closed, broken_tenant_files, closed_rules
from reconciler.output import placement_key
from reconciler.select.scope import ScopeTable, build_scope_table

REFUSED_KINDS = frozenset({"MemberCluster", "ClusterProfile"})
"""Fleet kinds a tenant's paths may not declare (they are dropped)."""
ADVISED_KINDS = frozenset({"Fleet", "Tenant"})
"""Fleet kinds a tenant's paths should not declare: an error, but they still act (leaving them
out would lift the rules they set)."""
MAX_SHOWN = 5


@dataclass(frozen=True)
class Tenancy:
    """The pass's tenants and which placements belong to which of them."""

    tenants: Mapping[str, Tenant] = field(default_factory=dict)
    placements: Mapping[str, str] = field(default_factory=dict)
    """placement key -> name of the tenant that owns its file."""
    scopes: ScopeTable = field(default_factory=ScopeTable)
    closed: Closed = field(default_factory=Closed)
    """What is held while a Tenant file fails to load (`reconciler.govern.closed`)."""

    def tenant_of_placement(self, key: str) -> Tenant | None:
        name = self.placements.get(key)
        return self.tenants.get(name) if name is not None else None


NO_TENANCY = Tenancy()


def owners(tenants: Mapping[str, Tenant], path: str) -> list[str]:
    """Names of the tenants whose paths hold `path`, sorted."""
    return sorted(name for name, t in tenants.items() if t.owns(path))


def _error(origin: Origin, field_path: str, message: str) -> FleetError:
    return FleetError(origin.file, origin.line, field_path, message, origin.doc)


def _show(kind: str, namespace: str, name: str) -> str:
    return f"{kind} {namespace + '/' if namespace else ''}{name}"


def resource_problem(tenant: Tenant, res: Resource | Any, cluster_scoped: bool) -> tuple[str, str]:
    """(field, rule) the object breaks, ('', '') when the tenant may place it."""
    problem = tenant.kind_problem(res.group, res.kind, cluster_scoped, res.name)
    if problem is not None:
        return "kind", problem
    if not cluster_scoped and not tenant.namespace_allowed(res.namespace):
        rule = f"tenant {tenant.name} may not place into namespace {res.namespace!r}"
        return "metadata.namespace", f"{rule} (spec.namespaces: {tenant.spec.namespaces})"
    return "", ""


@dataclass
class _Check:
    fleet: FleetSnapshot
    tenants: Mapping[str, Tenant]
    errors: list[FleetError] = field(default_factory=list)
    failed: set[str] = field(default_factory=set)
    owned: dict[str, str | None] = field(default_factory=dict)

    def owner(self, origin: Origin | None) -> str | None:
        """The tenant owning the file; a file two tenants own fails (one error)."""
        if origin is None:
            return None
        if origin.file not in self.owned:
            names = owners(self.tenants, origin.file)
            self.owned[origin.file] = names[0] if len(names) == 1 else None
            if len(names) > 1:
                message = (
                    f"the file is owned by more than one tenant ({', '.join(names)}): "
                    "each path must belong to one tenant (spec.paths); its objects are left out"
                )
                self.errors.append(FleetError(origin.file, None, "", message))
                self.failed.add(origin.file)
        return self.owned[origin.file]

    def refuse(self, origin: Origin, field_path: str, message: str) -> None:
        self.errors.append(_error(origin, field_path, message))
        self.failed.add(origin.file)


def _check_resources(check: _Check, scopes: ScopeTable) -> tuple[Resource, ...]:
    kept: list[Resource] = []
    for res in check.fleet.resources:
        name = check.owner(res.origin)
        if name is None:
            if res.origin.file not in check.failed:
                kept.append(res)
            continue
        scoped = scopes.is_cluster_scoped(res.group, res.kind)
        where, rule = resource_problem(check.tenants[name], res, scoped)
        if rule:
            check.refuse(res.origin, where, f"{_show(res.kind, res.namespace, res.name)}: {rule}")
            continue
        kept.append(res)
    return tuple(kept)


def _placement_keys(fleet: FleetSnapshot) -> Iterable[tuple[str, str, str, Origin | None]]:
    for name in fleet.placements:
        origin = fleet.origins.get(("ClusterResourcePlacement", "", name))
        yield placement_key(name), "", name, origin
    for ns, name in fleet.resource_placements:
        origin = fleet.origins.get(("ResourcePlacement", ns, name))
        yield placement_key(name, ns), ns, name, origin


def _check_placements(check: _Check) -> tuple[dict[str, str], set[str]]:
    """placement key -> tenant; the keys of refused placements."""
    owned: dict[str, str] = {}
    refused: set[str] = set()
    for key, ns, _name, origin in _placement_keys(check.fleet):
        tenant = check.owner(origin)
        if origin is not None and tenant is None and origin.file in check.failed:
            refused.add(key)
        if tenant is None or origin is None:
            continue
        owned[key] = tenant
        rules = check.tenants[tenant]
        if ns and not rules.namespace_allowed(ns):
            message = (
                f"tenant {tenant} may not place into namespace {ns!r} "
                f"(spec.namespaces: {rules.spec.namespaces})"
            )
            check.refuse(origin, "metadata.namespace", message)
            refused.add(key)
    return owned, refused


def _override_problem(
    tenant: Tenant, placements: Mapping[str, str], target: str | None
) -> str | None:
    if target is None:
        return (
            f"tenant {tenant.name}: an override must name one of the tenant's placements "
            "in spec.placement (it would otherwise patch every placement's objects)"
        )
    allowed = tenant.spec.override_targets
    if allowed is not None:
        if any(fnmatch.fnmatchcase(target, p) for p in allowed):
            return None
        return f"tenant {tenant.name} may not patch placement {target} (spec.overrideTargets: {allowed})"
    if placements.get(target) == tenant.name:
        return None
    return (
        f"tenant {tenant.name} may not patch placement {target}: it is not declared under the "
        "tenant's paths (spec.overrideTargets lists others it may patch)"
    )


Problem = Callable[[Tenant, Any, str], tuple[str, str] | None]
"""(tenant, object, its namespace) -> (field, message) when the tenant may not declare it."""


def _kept(check: _Check, slot: str, kind: str, problem_of: Problem) -> dict[Any, Any]:
    """The objects of one snapshot slot a tenant may declare; the others are refused (an object
    whose file failed under a tenant's paths is dropped too)."""
    kept = {}
    for key, obj in getattr(check.fleet, slot).items():
        ns, name = key if isinstance(key, tuple) else ("", key)
        origin = check.fleet.origins.get((kind, ns, name))
        tenant = check.owner(origin)
        if tenant is not None and origin is not None:
            problem = problem_of(check.tenants[tenant], obj, ns)
            if problem is not None:
                check.refuse(origin, *problem)
                continue
        elif origin is not None and origin.file in check.failed:
            continue
        kept[key] = obj
    return kept


def _check_overrides(check: _Check, placements: Mapping[str, str]) -> dict[str, Any]:
    def problem_of(tenant: Tenant, override: Any, ns: str) -> tuple[str, str] | None:
        ref = override.spec.placement
        target = None
        if ref is not None:
            target = placement_key(ref.name, ns if ref.scope == "Namespaced" else "")
        problem = _override_problem(tenant, placements, target)
        return None if problem is None else ("spec.placement", problem)

    return {
        slot: _kept(check, slot, kind, problem_of)
        for slot, kind in (
            ("cluster_overrides", "ClusterResourceOverride"),
            ("resource_overrides", "ResourceOverride"),
        )
    }


REFERENCES: tuple[tuple[str, str, Callable[[Any, str], str | None]], ...] = (
    # (snapshot slot, kind, the placement key the object acts on; None: no placement)
    (
        "evictions",
        "ClusterResourcePlacementEviction",
        lambda o, _: placement_key(o.spec.placement_name),
    ),
    ("budgets", "ClusterResourcePlacementDisruptionBudget", lambda o, _: placement_key(o.name)),
    ("update_runs", "ClusterStagedUpdateRun", lambda o, _: placement_key(o.spec.placement_name)),
    (
        "staged_update_runs",
        "StagedUpdateRun",
        lambda o, ns: placement_key(o.spec.placement_name, ns),
    ),
    ("distributions", "ReplicaDistribution", lambda o, ns: None),
    ("approvals", "ClusterApprovalRequest", lambda o, ns: None),
    ("staged_approvals", "ApprovalRequest", lambda o, ns: None),
    ("group_upgrades", "ClusterGroupUpgrade", lambda o, ns: None),
)
NOT_FOR_TENANTS = frozenset({"ClusterApprovalRequest", "ApprovalRequest", "ClusterGroupUpgrade"})
"""Kinds that act across placements: refused under a tenant's paths (the platform declares them)."""


def _reference_problem(
    tenant: Tenant, kind: str, target: str | None, ns: str, placements: Mapping[str, str]
) -> tuple[str, str] | None:
    if kind in NOT_FOR_TENANTS:
        return (
            "kind",
            f"tenant {tenant.name}'s paths may not declare a {kind} (it is the platform's)",
        )
    if kind == "ReplicaDistribution" and not tenant.namespace_allowed(ns):
        rule = f"tenant {tenant.name} may not place into namespace {ns!r}"
        return "metadata.namespace", f"{rule} (spec.namespaces: {tenant.spec.namespaces})"
    if target is not None and placements.get(target) != tenant.name:
        return (
            "spec",
            f"tenant {tenant.name} may not act on placement {target}: it is not the tenant's",
        )
    return None


def _reference_of(
    target_of: Callable[[Any, str], str | None],
    kind: str,
    placements: Mapping[str, str],
    tenant: Tenant,
    obj: Any,
    ns: str,
) -> tuple[str, str] | None:
    return _reference_problem(tenant, kind, target_of(obj, ns), ns, placements)


def _check_references(check: _Check, placements: Mapping[str, str]) -> dict[str, Any]:
    """Evictions, budgets, update runs and distributions of a tenant act on its own only."""
    return {
        slot: _kept(check, slot, kind, partial(_reference_of, target_of, kind, placements))
        for slot, kind, target_of in REFERENCES
    }


def _check_fleet_kinds(check: _Check) -> dict[str, Any]:
    clusters = {}
    for name, cluster in check.fleet.clusters.items():
        origin = check.fleet.origins.get(("MemberCluster", "", name))
        tenant = check.owner(origin)
        if tenant is not None and origin is not None:
            message = f"tenant {tenant}'s paths may not declare clusters (MemberCluster {name})"
            check.refuse(origin, "kind", message)
            continue
        clusters[name] = cluster
    for (kind, _ns, name), origin in check.fleet.origins.items():
        tenant = check.owner(origin) if kind in ADVISED_KINDS else None
        if tenant is not None:
            message = (
                f"{kind} {name} is declared under tenant {tenant}'s paths: tenants must not edit "
                "fleet settings or tenant rules; move it out of spec.paths (it still applies)"
            )
            check.errors.append(_error(origin, "kind", message))
    return {"clusters": clusters}


def govern_fleet(fleet: FleetSnapshot) -> tuple[FleetSnapshot, Tenancy]:
    """The fleet with what its tenants may not declare left out (and reported)."""
    if not fleet.tenants and not broken_tenant_files(fleet):
        return fleet, NO_TENANCY
    scopes, _ = build_scope_table(fleet.resources)
    check = _Check(fleet, fleet.tenants)
    resources = _check_resources(check, scopes)
    owned, refused = _check_placements(check)
    overrides = _check_overrides(check, owned)
    fleet_kinds = _check_fleet_kinds(check)
    references = _check_references(check, owned)
    governed = replace(
        fleet,
        resources=resources,
        placements={k: v for k, v in fleet.placements.items() if placement_key(k) not in refused},
        resource_placements={
            k: v
            for k, v in fleet.resource_placements.items()
            if placement_key(k[1], k[0]) not in refused
        },
        errors=tuple(sorted(set(fleet.errors) | set(check.errors))),
        error_files=fleet.error_files | frozenset(check.failed),
        **overrides,
        **fleet_kinds,
        **references,
    )
    closed = closed_rules(governed, check.owner, REFERENCES, placement_key)
    return governed, Tenancy(dict(fleet.tenants), owned, scopes, closed)


def placement_problems(
    tenancy: Tenancy,
    key: str,
    selected: Sequence[Any],
    clusters: Iterable[str],
    labels: Mapping[str, Mapping[str, str]],
) -> list[tuple[str, str]]:
    """(field, message) of every rule a tenant's placement breaks after selection (`selected`:
    its SelectedResources) and scheduling (`clusters` it targets, their labels)."""
    tenant = tenancy.tenant_of_placement(key)
    held = tenancy.closed.problems(tenant.name if tenant else None, key, selected)
    if held or tenant is None:  # a Tenant file is broken: fail closed
        return held
    out: list[tuple[str, str]] = []
    for res in selected:
        scoped = tenancy.scopes.is_cluster_scoped(res.group, res.kind)
        _, rule = resource_problem(tenant, res, scoped)
        if rule:
            out.append(
                (
                    "spec.resourceSelectors",
                    f"selects {_show(res.kind, res.namespace, res.name)}: {rule}",
                )
            )
    outside = [c for c in sorted(clusters) if not tenant.cluster_allowed(dict(labels.get(c, {})))]
    for cluster in outside[:MAX_SHOWN]:
        out.append(
            (
                "spec.policy",
                f"would reach cluster {cluster}, outside tenant {tenant.name}'s "
                "spec.clusterSelector: the placement is refused and keeps its previous output",
            )
        )
    if len(outside) > MAX_SHOWN:
        out.append(("spec.policy", f"... and {len(outside) - MAX_SHOWN} more cluster(s)"))
    return out[: MAX_SHOWN * 2 + 1]

"""Warnings about accepted input that probably does not do what its author meant.

Nothing is silently ignored: `lint` lists, as `FleetError`s located at the field's line,
- placements whose named selector (or label selector) finds no object in `resources/`;
- resources in a namespace that no Namespace object in `resources/` declares;
- PickFixed `clusterNames` that are not clusters of the fleet;
- a directory holding no fleet object at all (probably not a fleet repository's root);
- accepted fields whose behaviour gitfleet does not implement (`UNIMPLEMENTED_FIELDS`, a table:
  whoever implements a field deletes its row);
- a Tenant path that owns no file.
`gitfleet validate` prints them as `warning:` lines (exit 0; `--strict` makes them errors).
Called by `gitfleet.load.snapshot.build_snapshot`; pure.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gitfleet.api import ClusterResourcePlacement, ResourcePlacement
from gitfleet.api.errors import FleetError
from gitfleet.api.meta import KubeObject
from gitfleet.api.tenant import path_glob_regex
from gitfleet.load.model import FleetSnapshot, Origin, Resource, SourceDoc
from gitfleet.load.yamlio import locate

_UNSET = object()


@dataclass(frozen=True)
class Unimplemented:
    """An accepted field that does nothing yet: warn when it is set to anything but `unless`."""

    kinds: tuple[str, ...]
    path: str
    message: str
    unless: Any = _UNSET


_PLACEMENTS = ("ClusterResourcePlacement", "ResourcePlacement")

UNIMPLEMENTED_FIELDS: tuple[Unimplemented, ...] = (
    Unimplemented(
        _PLACEMENTS,
        "spec.strategy.resourceSnapshotIndex",
        "this field is not implemented: the placement rolls out its latest resource snapshot; "
        "to roll back, annotate the placement with gitfleet.io/resource-snapshot-index "
        "(RollingUpdate) or set a staged update run's spec.resourceSnapshotIndex (External)",
    ),
    Unimplemented(
        _PLACEMENTS,
        "spec.strategy.deleteStrategy.propagationPolicy",
        "Abandon is not implemented: removing a placement always deletes its resources from "
        "the member clusters",
        unless="Delete",
    ),
    Unimplemented(
        _PLACEMENTS,
        "spec.strategy.reportBackStrategy.type",
        "Mirror is not implemented: status is reported on the output branch (status/) only",
        unless="Disabled",
    ),
    Unimplemented(
        _PLACEMENTS,
        "spec.statusReportingScope",
        "NamespaceAccessible is not implemented: no ClusterResourcePlacementStatus object is "
        "written; the status is on the output branch under status/placements/",
        unless="ClusterScopeOnly",
    ),
    Unimplemented(
        ("MemberCluster",),
        "spec.heartbeatPeriodSeconds",
        "is not used: an agent's heartbeat period is its --heartbeat option (default 60s) and "
        "the hub judges heartbeats by the Fleet's spec.heartbeatTimeout",
        unless=60,
    ),
    Unimplemented(
        ("MemberCluster",),
        "spec.identity",
        "is not used: agents authenticate to the Git remote, not to a hub API server",
    ),
    Unimplemented(
        ("MemberCluster",),
        "spec.deleteOptions",
        "is not used: a cluster leaves the fleet when its file is deleted, without validation",
    ),
)
"""Field path -> why it does nothing. Rollout, staged-update and cluster-group-upgrade fields
are owned by the helpers implementing them and are not listed here."""


def lint(snapshot: FleetSnapshot, docs: Sequence[SourceDoc]) -> tuple[FleetError, ...]:
    """Every warning about `snapshot`, sorted; `docs` locate fields on their lines."""
    where = _Locator(docs)
    found = [
        *_empty_directory(snapshot),
        *_undeclared_namespaces(snapshot, where),
        *_placement_warnings(snapshot, where),
        *_unimplemented(snapshot, where),
        *_idle_tenant_paths(snapshot, docs, where),
    ]
    return tuple(sorted(set(found)))


def _idle_tenant_paths(
    snapshot: FleetSnapshot, docs: Sequence[SourceDoc], where: _Locator
) -> list[FleetError]:
    """A Tenant path that owns no file (a typo lets that team's files go unrestricted)."""
    files = sorted({d.file for d in docs})
    out = []
    for name, tenant in snapshot.tenants.items():
        origin = snapshot.origins.get(("Tenant", "", name))
        for i, pattern in enumerate(tenant.spec.paths):
            regex = path_glob_regex(pattern)
            if origin is not None and not any(regex.fullmatch(f) for f in files):
                message = f'"{pattern}" owns no file of the repository'
                out.append(where.at(origin, f"spec.paths[{i}]", message))
    return out


class _Locator:
    def __init__(self, docs: Sequence[SourceDoc]) -> None:
        self.docs = {(d.file, d.doc, d.line): d for d in docs}

    def at(self, origin: Origin, field: str, message: str) -> FleetError:
        doc = self.docs.get((origin.file, origin.doc, origin.line))
        full = f"{doc.path}.{field}" if doc is not None and doc.path else field
        line = locate(doc.text, doc.doc, full) if doc is not None and doc.text else None
        return FleetError(origin.file, line or origin.line, full, message, origin.doc)


def _empty_directory(snapshot: FleetSnapshot) -> list[FleetError]:
    if snapshot.origins or snapshot.resources or snapshot.errors:
        return []
    return [
        FleetError(
            "",
            None,
            "",
            "no fleet here: no Fleet, MemberCluster, placement or resource was found "
            "(is this the root of a fleet repository?)",
        )
    ]


def _undeclared_namespaces(snapshot: FleetSnapshot, where: _Locator) -> list[FleetError]:
    declared = {r.name for r in snapshot.resources if (r.group, r.kind) == ("", "Namespace")}
    first: dict[str, Resource] = {}
    counts: dict[str, int] = {}
    for res in snapshot.resources:
        if res.namespace and res.namespace not in declared:
            first.setdefault(res.namespace, res)
            counts[res.namespace] = counts.get(res.namespace, 0) + 1
    return [
        where.at(
            res.origin,
            "metadata.namespace",
            f'namespace "{ns}" is not declared by any Namespace in resources/ '
            f"({counts[ns]} object(s) use it): a placement selecting the namespace finds "
            "nothing, and member clusters need it to exist already",
        )
        for ns, res in sorted(first.items())
    ]


def _placements(snapshot: FleetSnapshot) -> Iterator[ClusterResourcePlacement | ResourcePlacement]:
    yield from snapshot.placements.values()
    yield from snapshot.resource_placements.values()


def _origin(snapshot: FleetSnapshot, obj: KubeObject, namespaced: bool) -> Origin | None:
    return snapshot.origins.get((obj.kind, (obj.namespace or "") if namespaced else "", obj.name))


def _placement_warnings(snapshot: FleetSnapshot, where: _Locator) -> list[FleetError]:
    by_kind: dict[tuple[str, str], list[Resource]] = {}
    names: set[tuple[str, str, str, str]] = set()
    for res in snapshot.resources:
        by_kind.setdefault((res.group, res.kind), []).append(res)
        names.add((res.group, res.kind, res.namespace, res.name))
        names.add((res.group, res.kind, "*", res.name))
    out: list[FleetError] = []
    for placement in _placements(snapshot):
        rp = isinstance(placement, ResourcePlacement)
        origin = _origin(snapshot, placement, rp)
        if origin is None:
            continue
        out += _fixed_clusters(snapshot, placement, origin, where)
        for i, term in enumerate(placement.spec.resource_selectors):
            if term.name is not None:
                namespace = (placement.namespace or "") if rp else "*"
                found = (term.group, term.kind, namespace, term.name) in names
            else:
                candidates = by_kind.get((term.group, term.kind), [])
                if rp:
                    candidates = [r for r in candidates if r.namespace == placement.namespace]
                selector = term.label_selector
                found = any(
                    selector is None or selector.matches(_labels(r.obj)) for r in candidates
                )
            if not found:
                out.append(
                    where.at(origin, f"spec.resourceSelectors[{i}]", _nothing_selected(term, rp))
                )
    return out


def _nothing_selected(term: Any, rp: bool) -> str:
    kind = f"{term.group}/{term.kind}" if term.group else term.kind
    scope = " in the placement's namespace" if rp else ""
    if term.name is not None:
        what = f'{kind} "{term.name}"'
    elif term.label_selector is not None:
        what = f"{kind} matching the label selector"
    else:
        what = kind
    return f"selects nothing: resources/ holds no {what}{scope}"


def _fixed_clusters(
    snapshot: FleetSnapshot,
    placement: ClusterResourcePlacement | ResourcePlacement,
    origin: Origin,
    where: _Locator,
) -> list[FleetError]:
    policy = placement.spec.policy
    if policy.placement_type != "PickFixed":
        return []
    return [
        where.at(
            origin,
            f"spec.policy.clusterNames[{i}]",
            f'cluster "{name}" is not a member of the fleet (no MemberCluster or '
            "ClusterProfile declares it): nothing is placed there",
        )
        for i, name in enumerate(policy.cluster_names or [])
        if name not in snapshot.clusters
    ]


def _labels(obj: Mapping[str, Any]) -> dict[str, str]:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    if not isinstance(labels, Mapping):
        return {}
    return {str(k): str(v) for k, v in labels.items()}


def _lookup(body: Mapping[str, Any], path: str) -> Any:
    node: Any = body
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _UNSET
        node = node[part]
    return node


def _fleet_objects(snapshot: FleetSnapshot) -> Iterator[tuple[KubeObject, bool]]:
    for cluster in snapshot.clusters.values():
        yield cluster, False
    yield from ((p, False) for p in snapshot.placements.values())
    yield from ((p, True) for p in snapshot.resource_placements.values())


def _unimplemented(snapshot: FleetSnapshot, where: _Locator) -> list[FleetError]:
    out: list[FleetError] = []
    for obj, namespaced in _fleet_objects(snapshot):
        rows = [row for row in UNIMPLEMENTED_FIELDS if obj.kind in row.kinds]
        origin = _origin(snapshot, obj, namespaced) if rows else None
        if origin is None:
            continue
        written = obj.model_dump(by_alias=True, exclude_unset=True, mode="json")
        for row in rows:
            value = _lookup(written, row.path)
            if value is not _UNSET and (row.unless is _UNSET or value != row.unless):
                out.append(where.at(origin, row.path, row.message))
    return out

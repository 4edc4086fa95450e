"""The per-pass resource index that every placement's selection reads.

`build_index` runs once per reconcile pass over all payload objects from `resources/`: it decides
each object's scope (built-in table + CRDs), strips it (§7.2) and encodes it to canonical JSON once,
precomputes its snapshot sort key and its selection filters (disabled kind, never propagated,
being deleted), and indexes it by identity, by kind and by namespace so selection never scans
the whole list. Objects that cannot be placed (scope mistakes, bad envelopes, bad labels,
duplicates) are collected as `ResourceIssue`s and are never selected. A pass whose entries are
the very same objects as the last pass's (nothing changed in `resources/`) gets the last index
itself; one whose resources differ from the last pass's in a few objects edited in place gets
the last index patched (`reconciler.select.indexpatch`; anything else builds it in full).
Pure: no I/O.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitfleet.api.canonical import canonical_json
from gitfleet.api.errors import FieldIssue
from reconciler.select.envelope import check_envelope, is_envelope, unwrap_envelope
from reconciler.select.indexpatch import Built, patch_index
from reconciler.select.model import ResourceIssue, SelectedResource
from reconciler.select.order import SortKey, sort_key
from reconciler.select.policy import (
    is_being_deleted,
    is_disabled,
    is_reserved_namespace,
    never_propagated,
)
from reconciler.select.scope import GroupKind, ScopeTable, build_scope_table
from reconciler.select.strip import strip_object
from reconciler.stagememo import IdentityMemo, StageMemo

if TYPE_CHECKING:
    from gitfleet.load.model import Resource

IdentityKey = tuple[str, str, str, str]
"""(group, kind, namespace, name): one object whatever version it is written in."""


@dataclass(frozen=True, eq=False)
class IndexEntry:
    """One payload object with everything selection needs, computed once per pass."""

    resource: Resource
    selected: SelectedResource | None
    """The stripped object as a selection returns it (None if it cannot be encoded)."""
    labels: dict[str, str]
    cluster_scoped: bool
    namespace: str
    """Where selection looks the object up: '' for cluster-scoped kinds, else its namespace."""
    disabled: bool
    """A kind the hub never selects (§7.1 deny list)."""
    skipped: bool
    """Never propagated (§7.1) or written with a deletionTimestamp."""
    issues: tuple[ResourceIssue, ...]
    sort_key: SortKey

    @property
    def valid(self) -> bool:
        return not self.issues and self.selected is not None


@dataclass(frozen=True, eq=False)
class ResourceIndex:
    """All payload objects of one pass, indexed for selection; shared by every placement."""

    scopes: ScopeTable
    entries: tuple[IndexEntry, ...]
    issues: tuple[ResourceIssue, ...]
    """Per-resource errors, in resource order; report them with `ResourceIssue.to_error()`."""
    skipped_namespaces: frozenset[str] = frozenset()
    by_key: Mapping[IdentityKey, IndexEntry] = field(default_factory=dict)
    by_kind: Mapping[tuple[str, str, str], tuple[IndexEntry, ...]] = field(default_factory=dict)
    """(group, kind, namespace) -> entries."""
    by_namespace: Mapping[str, tuple[IndexEntry, ...]] = field(default_factory=dict)
    """namespace -> entries of namespaced kinds in it."""

    def get(self, group: str, kind: str, namespace: str, name: str) -> IndexEntry | None:
        return self.by_key.get((group, kind, namespace, name))

    def of_kind(self, group: str, kind: str, namespace: str) -> tuple[IndexEntry, ...]:
        return self.by_kind.get((group, kind, namespace), ())

    def in_namespace(self, namespace: str) -> tuple[IndexEntry, ...]:
        return self.by_namespace.get(namespace, ())

    def is_reserved_namespace(self, name: str) -> bool:
        return is_reserved_namespace(name, self.skipped_namespaces)

    def unwrap(self, sel: SelectedResource) -> tuple[list[dict[str, Any]], list[str]]:
        """`unwrap_envelope` with this pass's scope table."""
        return unwrap_envelope(sel, self.scopes)


def build_index(
    resources: Sequence[Resource],
    *,
    extra_cluster_scoped: Iterable[GroupKind] = (),
    skipped_namespaces: Iterable[str] = (),
) -> ResourceIndex:
    """Index `resources` (the snapshot's payload objects) for this pass's selections."""
    resources = tuple(resources)
    args = (tuple(extra_cluster_scoped), frozenset(skipped_namespaces))
    patched = patch_index(_BASES.last("bases"), resources, args, _fresh_entry)
    if patched is not None:
        _remember(patched)
        return patched.index
    _entries.next_round()
    scopes, crd_issues = build_scope_table(resources, args[0])
    services = {(r.namespace, r.name) for r in resources if (r.group, r.kind) == ("", "Service")}
    entries: list[IndexEntry] = []
    first_seen: dict[IdentityKey, Resource] = {}
    for pos, res in enumerate(resources):
        key = (res.group, res.kind, _lookup_namespace(res, scopes), res.name)
        duplicate = None
        if key in first_seen:
            other = first_seen[key].origin
            duplicate = FieldIssue(
                "metadata.name",
                f"duplicate object: {_describe(res)} is also declared at {other.file}:{other.line}",
            )
        else:
            first_seen[key] = res
        has_service = (res.namespace, res.name) in services
        entries.append(_entry_of(res, scopes, crd_issues.get(pos), duplicate, has_service))
    index = _indexed(scopes, tuple(entries), args[1])
    _remember(Built(resources, args, frozenset(services), index, 0))
    return index


_BASES: StageMemo[tuple[Built, ...]] = StageMemo()
"""The last two indexes built with what they were built from: the next pass patches the one
its resources differ from in a few objects (`indexpatch`). Two, so that an index of older
resources built in between (`reconciler.history`) does not push the pass's own out."""


def _fresh_entry(res: Resource, scopes: ScopeTable, has_service: bool) -> IndexEntry:
    """The entry of a changed object in a patched index: not a CRD (no CRD issue), no
    duplicate (the patched index had none and keeps every lookup key)."""
    return _entry_of(res, scopes, None, None, has_service)


def _remember(built: Built) -> None:
    last = _BASES.last("bases")
    kept = tuple(b for b in (last[1] if last else ()) if b.index is not built.index)
    _BASES.put("bases", (), (*kept[-1:], built))


_LAST: StageMemo[ResourceIndex] = StageMemo()
"""The last index built: a pass whose entries are the very same objects (nothing changed in
`resources/`) gets that index again instead of indexing them anew."""


def _indexed(
    scopes: ScopeTable, entries: tuple[IndexEntry, ...], skipped: frozenset[str]
) -> ResourceIndex:
    last = _LAST.last("index")
    if last is not None:
        index = last[1]
        same = index.entries == entries and index.skipped_namespaces == skipped
        if same and index.scopes.content == scopes.content:
            return index
    made = _assemble(scopes, list(entries), skipped)
    _LAST.put("index", (), made)
    return made


_entries: IdentityMemo[tuple[tuple[Any, ...], IndexEntry]] = IdentityMemo()
"""Payload object -> (what else its entry was made from, the entry). A long-running hub loads
unchanged files as the very same objects (`renderers.plain`), so their entries (and selected
copies) are made once. The `Resource` around the object is new every load: it is compared by
value (its origin may move), the scope table by its content."""


def _entry_of(
    res: Resource,
    scopes: ScopeTable,
    crd_issue: FieldIssue | None,
    duplicate: FieldIssue | None,
    has_service: bool,
) -> IndexEntry:
    """The entry of `res`: its CRD issue first, then the rules it breaks, then `duplicate`
    (remembered: the rules are checked again only when something it was made from changed)."""
    made_from = (res, scopes.content, crd_issue, duplicate, has_service)
    hit = _entries.get(res.obj)
    if hit is not None and hit[0] == made_from:
        return hit[1]
    found = _object_issues(res, scopes)
    if crd_issue is not None:
        found.insert(0, crd_issue)
    if duplicate is not None:
        found.append(duplicate)
    entry = _entry(res, scopes, found, has_service)
    _entries.put(res.obj, (made_from, entry))
    return entry


def _assemble(
    scopes: ScopeTable, entries: list[IndexEntry], skipped: frozenset[str]
) -> ResourceIndex:
    by_key: dict[IdentityKey, IndexEntry] = {}
    by_kind: defaultdict[tuple[str, str, str], list[IndexEntry]] = defaultdict(list)
    by_namespace: defaultdict[str, list[IndexEntry]] = defaultdict(list)
    for entry in entries:
        res = entry.resource
        by_key.setdefault((res.group, res.kind, entry.namespace, res.name), entry)
        by_kind[(res.group, res.kind, entry.namespace)].append(entry)
        if not entry.cluster_scoped and entry.namespace:
            by_namespace[entry.namespace].append(entry)
    return ResourceIndex(
        scopes=scopes,
        entries=tuple(entries),
        issues=tuple(issue for entry in entries for issue in entry.issues),
        skipped_namespaces=skipped,
        by_key=by_key,
        by_kind={key: tuple(value) for key, value in by_kind.items()},
        by_namespace={key: tuple(value) for key, value in by_namespace.items()},
    )


def _lookup_namespace(res: Resource, scopes: ScopeTable) -> str:
    return "" if scopes.is_cluster_scoped(res.group, res.kind) else res.namespace


def _describe(res: Resource) -> str:
    where = f"{res.namespace}/" if res.namespace else ""
    return f"{res.api_version} {res.kind} {where}{res.name}"


def _object_issues(res: Resource, scopes: ScopeTable) -> list[FieldIssue]:
    """Scope, label and envelope rules one object breaks."""
    issues: list[FieldIssue] = []
    cluster_scoped = scopes.is_cluster_scoped(res.group, res.kind)
    if cluster_scoped and res.namespace:
        issues.append(
            FieldIssue(
                "metadata.namespace",
                f"{_describe(res)}: {res.kind} is "
                "cluster-scoped and must not set metadata.namespace",
            )
        )
    elif not cluster_scoped and not res.namespace:
        issues.append(
            FieldIssue(
                "metadata.namespace",
                f"{_describe(res)}: {res.kind} is "
                "namespaced and needs metadata.namespace (otherwise it would land "
                "in whatever namespace the agent defaults to)",
            )
        )
    issues.extend(_label_issues(res.obj))
    if is_envelope(res.group, res.kind):
        issues.extend(check_envelope(res.obj, res.kind, res.namespace, scopes))
    return issues


def _label_issues(obj: Mapping[str, Any]) -> list[FieldIssue]:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    if labels is None:
        return []
    if not isinstance(labels, Mapping):
        return [FieldIssue("metadata.labels", "must be a map of strings")]
    return [
        FieldIssue(f"metadata.labels.{key}", "label keys and values must be strings")
        for key, value in labels.items()
        if not isinstance(key, str) or not isinstance(value, str)
    ]


def _labels(obj: Mapping[str, Any]) -> dict[str, str]:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    if not isinstance(labels, Mapping):
        return {}
    return {k: v for k, v in labels.items() if isinstance(k, str) and isinstance(v, str)}


def _entry(
    res: Resource, scopes: ScopeTable, found: list[FieldIssue], has_service: bool
) -> IndexEntry:
    selected: SelectedResource | None = None
    stripped = strip_object(res.obj)
    try:
        raw = canonical_json(stripped)
    except (TypeError, ValueError) as exc:
        found.append(FieldIssue("", f"object cannot be encoded as JSON ({type(exc).__name__})"))
    else:
        selected = SelectedResource(
            res.group, res.version, res.kind, res.namespace, res.name, stripped, res.origin, raw
        )
    skipped = is_being_deleted(res.obj) or never_propagated(
        res.group, res.version, res.kind, res.obj, has_service
    )
    return IndexEntry(
        resource=res,
        selected=selected,
        labels=_labels(res.obj),
        cluster_scoped=scopes.is_cluster_scoped(res.group, res.kind),
        namespace=_lookup_namespace(res, scopes),
        disabled=is_disabled(res.group, res.version, res.kind),
        skipped=skipped,
        issues=tuple(ResourceIssue(res, i.field, i.message, res.origin) for i in found),
        sort_key=sort_key(res.group, res.version, res.kind, res.namespace, res.name),
    )

"""Resource selection for one placement (KubeFleet's `gatherSelectedResource`, kubefleet.md §7.1).

`select_resources(placement, index)` evaluates a ClusterResourcePlacement's or
ResourcePlacement's `spec.resourceSelectors` against the pass's `ResourceIndex` and returns a
`Selection`: the selected objects in snapshot order (§7.3) with their hash (§7.4), or the user
error KubeFleet reports as `Scheduled=False, reason InvalidResourceSelectors`. Called by the
reconcile pass once per placement (`select_reading` also says which index lookups it made,
so `placememo` can tell whether changed index entries can change the selection). Pure: no I/O,
no clock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import is_

from reconciler.select.index import IndexEntry, ResourceIndex
from reconciler.select.model import ResourceIssue, SelectedResource, Selection
from reconciler.select.order import SortKey
from reconciler.select.policy import is_disabled
from reconciler.select.protocols import PlacementLike, SelectorTermLike

NAMESPACE_ONLY = "NamespaceOnly"
NAMESPACE_WITH_RESOURCES = "NamespaceWithResources"
NAMESPACE_WITH_RESOURCE_SELECTORS = "NamespaceWithResourceSelectors"
USER_ERROR_PREFIX = "failed to process the request due to a client error: "
INVALID_SELECTORS_PREFIX = "The resource selectors are invalid: "


class SelectionError(Exception):
    """A user error in a placement's resource selectors (message is KubeFleet's)."""


@dataclass(frozen=True)
class Reads:
    """The index lookups one selection made: identity keys (group, kind, namespace, name),
    kinds (group, kind, namespace) and namespaces (`ResourceIndex.get`, `of_kind`,
    `in_namespace`). An entry none of them finds cannot change the selection."""

    keys: frozenset[tuple[str, str, str, str]]
    kinds: frozenset[tuple[str, str, str]]
    namespaces: frozenset[str]

    def meets(self, other: Reads) -> bool:
        """Any key, kind or namespace in both."""
        return not (
            self.keys.isdisjoint(other.keys)
            and self.kinds.isdisjoint(other.kinds)
            and self.namespaces.isdisjoint(other.namespaces)
        )


NO_READS = Reads(frozenset(), frozenset(), frozenset())


def changed_lookups(old: Sequence[IndexEntry], new: Sequence[IndexEntry]) -> Reads:
    """Every lookup that finds an entry of `old` or `new` between their longest common start
    and end (the very same entry objects, compared in C): the lookups whose answer (or its
    order) can differ between indexes built from them (same scopes and skipped namespaces)."""
    head = _same_run(old, new)
    tail = _same_run(old[head:][::-1], new[head:][::-1])
    between = [*old[head : len(old) - tail], *new[head : len(new) - tail]]
    return Reads(
        frozenset(
            (e.resource.group, e.resource.kind, e.namespace, e.resource.name) for e in between
        ),
        frozenset((e.resource.group, e.resource.kind, e.namespace) for e in between),
        frozenset(e.namespace for e in between),
    )


def _same_run(old: Sequence[IndexEntry], new: Sequence[IndexEntry]) -> int:
    same = list(map(is_, old, new))
    return same.index(False) if False in same else len(same)


@dataclass
class _Gather:
    """Mutable state of one selection: what was picked, in term order, and what was refused."""

    index: ResourceIndex
    name: str
    namespace: str
    picked: dict[tuple[str, str, str, str], IndexEntry] = field(default_factory=dict)
    invalid: dict[ResourceIssue, None] = field(default_factory=dict)
    keys: set[tuple[str, str, str, str]] = field(default_factory=set)
    kinds: set[tuple[str, str, str]] = field(default_factory=set)
    namespaces: set[str] = field(default_factory=set)

    @property
    def key(self) -> str:
        """Go's `types.NamespacedName.String()` of the placement."""
        return f"{self.namespace}/{self.name}"

    def add(self, entries: list[IndexEntry]) -> None:
        for entry in entries:
            if not entry.valid or entry.selected is None:
                for issue in entry.issues:
                    self.invalid[issue] = None
                continue
            sel = entry.selected
            ident = (sel.group, sel.kind, sel.namespace, sel.name)
            if ident in self.picked:
                raise SelectionError(f"found duplicate resource {_go_identifier(sel)}")
            self.picked[ident] = entry


def select_resources(placement: PlacementLike, index: ResourceIndex) -> Selection:
    """What `placement` selects from `index` (see module docstring)."""
    return select_reading(placement, index)[0]


def select_reading(placement: PlacementLike, index: ResourceIndex) -> tuple[Selection, Reads]:
    """`select_resources`, and the index lookups it made."""
    selection, state = _gathered(placement, index)
    return selection, Reads(
        frozenset(state.keys), frozenset(state.kinds), frozenset(state.namespaces)
    )


def _gathered(placement: PlacementLike, index: ResourceIndex) -> tuple[Selection, _Gather]:
    namespace = getattr(placement.metadata, "namespace", None) or ""
    state = _Gather(index, placement.metadata.name, namespace)
    terms = list(placement.spec.resource_selectors)
    try:
        scoped_ns = "" if namespace else _selector_namespace(state, terms)
        for term in terms:
            state.add(_select_term(state, term, scoped_ns))
    except SelectionError as exc:
        message = f"{INVALID_SELECTORS_PREFIX}{USER_ERROR_PREFIX}{exc}"
        return Selection(resources=(), hash="", error=message), state
    chosen = [e.selected for e in sorted(state.picked.values(), key=_order) if e.selected]
    invalid = sorted(state.invalid, key=lambda i: (i.origin.file, i.origin.doc, i.field))
    selection = Selection(
        resources=tuple(chosen), hash=hash_selection(chosen), invalid=tuple(invalid)
    )
    return selection, state


def hash_selection(resources: list[SelectedResource] | tuple[SelectedResource, ...]) -> str:
    """sha256 hex of the canonical JSON of `{"selectedResources": [stripped objects]}`."""
    body = '{"selectedResources":[' + ",".join(res.raw for res in resources) + "]}"
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _order(entry: IndexEntry) -> SortKey:
    return entry.sort_key


def _is_namespace_term(term: SelectorTermLike) -> bool:
    return term.group == "" and term.kind == "Namespace"


def _selector_namespace(state: _Gather, terms: list[SelectorTermLike]) -> str:
    """First pass: the one namespace of a NamespaceWithResourceSelectors term ('' if none)."""
    for term in terms:
        if _is_namespace_term(term) and term.selection_scope == NAMESPACE_WITH_RESOURCE_SELECTORS:
            names = [e.resource.name for e in _namespace_objects(state, term)]
            prefix = (
                f"invalid clusterResourcePlacement {state.name}: NamespaceWithResource"
                "Selectors mode requires exactly one namespace, but"
            )
            if not names:
                raise SelectionError(f"{prefix} no namespaces were selected")
            if len(names) > 1:
                raise SelectionError(f"{prefix} {len(names)} namespaces were selected")
            return names[0]
    return ""


def _select_term(state: _Gather, term: SelectorTermLike, scoped_ns: str) -> list[IndexEntry]:
    """Second pass: the entries one term selects (valid or not), or a SelectionError."""
    if is_disabled(term.group, term.version, term.kind):
        return []
    if _is_namespace_term(term):
        if state.namespace:
            raise SelectionError(
                f"invalid placement {state.key}: cannot select cluster-scoped "
                "resource Namespace in a resourcePlacement"
            )
        namespaces = _namespace_objects(state, term)
        if term.selection_scope in (NAMESPACE_ONLY, NAMESPACE_WITH_RESOURCE_SELECTORS):
            return namespaces
        return [e for ns in namespaces for e in [ns, *_namespace_contents(state, ns)]]
    cluster_scoped = state.index.scopes.is_cluster_scoped(term.group, term.kind)
    if state.namespace:
        if cluster_scoped:
            gvr = state.index.scopes.resource_string(term.group, term.version, term.kind)
            raise SelectionError(
                f"invalid placement {state.key}: cannot select cluster-scoped "
                f"resource {gvr} in a resourcePlacement"
            )
        return _fetch(state, term, state.namespace)
    if cluster_scoped:
        return _fetch(state, term, "")
    if scoped_ns:
        return _fetch(state, term, scoped_ns)
    raise SelectionError(
        f"invalid clusterResourcePlacement {state.name}: cannot select namespace-scoped resource "
        f"{term.group}/{term.kind} without a selected namespace (either missing "
        "NamespaceWithResourceSelectors mode or namespace selector matched no namespaces)"
    )


def _fetch(state: _Gather, term: SelectorTermLike, namespace: str) -> list[IndexEntry]:
    """Objects of the term's kind in `namespace` ('' = cluster scope) by name, label or all."""
    index = state.index
    if term.name:
        state.keys.add((term.group, term.kind, namespace, term.name))
        entry = index.get(term.group, term.kind, namespace, term.name)
        candidates: tuple[IndexEntry, ...] = (entry,) if entry is not None else ()
    else:
        state.kinds.add((term.group, term.kind, namespace))
        candidates = index.of_kind(term.group, term.kind, namespace)
        selector = term.label_selector
        if selector is not None:
            candidates = tuple(e for e in candidates if selector.matches(e.labels))
    return [e for e in candidates if not e.skipped]


def _namespace_objects(state: _Gather, term: SelectorTermLike) -> list[IndexEntry]:
    """Namespace objects a Namespace term selects; a reserved namespace is an error in every
    selection scope (KubeFleet checks it only for NamespaceWithResources, §9.16)."""
    if term.name and state.index.is_reserved_namespace(term.name):
        raise _reserved(state, term.name)
    found = sorted(_fetch(state, term, ""), key=lambda e: e.resource.name)
    for entry in found:
        if state.index.is_reserved_namespace(entry.resource.name):
            raise _reserved(state, entry.resource.name)
    return found


def _reserved(state: _Gather, namespace: str) -> SelectionError:
    return SelectionError(
        f"invalid clusterResourcePlacement {state.name}: namespace {namespace} "
        "is not allowed to propagate"
    )


def _namespace_contents(state: _Gather, namespace: IndexEntry) -> list[IndexEntry]:
    """Every selectable namespaced object in a namespace (NamespaceWithResources)."""
    state.namespaces.add(namespace.resource.name)
    return [
        e
        for e in state.index.in_namespace(namespace.resource.name)
        if not e.disabled and not e.skipped
    ]


def _go_identifier(sel: SelectedResource) -> str:
    """Go's `%+v` of a ResourceIdentifier, as in KubeFleet's duplicate-resource message."""
    return (
        f"{{Group:{sel.group} Version:{sel.version} Kind:{sel.kind} Name:{sel.name} "
        f"Namespace:{sel.namespace} Envelope:<nil>}}"
    )

"""Patching the last pass's resource index when only a few objects changed in place.

A long-running hub's loader hands unchanged files' `Resource`s as the very same objects pass
after pass (`gitfleet.load.patch`), so an edit of one resource differs from the last pass's
resources at one position. `patch_index` finds the positions whose object is another one (in C,
from both ends) and, when every change is provably local, swaps just those entries into a copy
of the last index instead of indexing all objects again. Local means: the same number of
objects; each changed object keeps its group, kind, namespace and name (so the scope table,
the lookup keys, the order and the Services other objects look for stay); none is a
CustomResourceDefinition (the scope table); the last index had no issues (duplicates name
another object's origin) and the new entries have none. Anything else returns None: the caller builds
the index in full. Called by `reconciler.select.index.build_index`. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from operator import is_
from typing import TYPE_CHECKING, Any, TypeVar

from reconciler.select.scope import CRD_GROUP, CRD_KIND, ScopeTable

if TYPE_CHECKING:
    from gitfleet.load.model import Resource
    from reconciler.select.index import IndexEntry, ResourceIndex

K = TypeVar("K")
MAX_CHANGED = 64
"""More changed objects than this: indexing them all is about as cheap."""


@dataclass(frozen=True, eq=False)
class Built:
    """One index with exactly what it was built from."""

    resources: tuple[Resource, ...]
    args: tuple[Any, ...]
    """(extra cluster-scoped kinds, skipped namespaces) as `build_index` was given them."""
    services: frozenset[tuple[str, str]]
    """(namespace, name) of every Service among `resources`."""
    index: ResourceIndex
    made: int
    """Entries patches made since the last full build: each stays in the entry memo until the
    next full build (which starts a memo round), so at most as many as there are objects."""


def patch_index(
    bases: tuple[tuple[Any, ...], tuple[Built, ...]] | None,
    resources: tuple[Resource, ...],
    args: tuple[Any, ...],
    make: Callable[[Resource, ScopeTable, bool], IndexEntry],
) -> Built | None:
    """The index of `resources` patched from a remembered one; None when no remembered index
    differs from it only locally. `make(resource, scopes, has_service)`
    makes an entry (with the remembered scope table: it is unchanged)."""
    if bases is None:
        return None
    made = bases[1][-1].made  # whichever base is patched: the memo holds what all patches made
    for base in reversed(bases[1]):
        if base.args != args or len(base.resources) != len(resources):
            continue
        span = _changed_span(base.resources, resources)
        if span is None:
            return replace(base, resources=resources, made=made)
        olds, news = base.resources[span[0] : span[1]], resources[span[0] : span[1]]
        if len(news) > MAX_CHANGED or made + len(news) > len(resources):
            continue
        if base.index.issues or not all(map(_local, olds, news)):
            continue
        patched = _patched(base, span, news, make)
        if patched is not None:
            return Built(resources, args, base.services, patched, made + len(news))
    return None


def _changed_span(old: tuple[Any, ...], new: tuple[Any, ...]) -> tuple[int, int] | None:
    """[first, last + 1) of the positions whose objects differ; None if none does."""
    same = list(map(is_, old, new))
    if False not in same:
        return None
    return same.index(False), len(same) - same[::-1].index(False)


def _local(old: Resource, new: Resource) -> bool:
    if (old.group, old.kind, old.namespace, old.name) != (
        new.group,
        new.kind,
        new.namespace,
        new.name,
    ):
        return False
    return (old.group, old.kind) != (CRD_GROUP, CRD_KIND)


def _patched(
    base: Built,
    span: tuple[int, int],
    news: tuple[Resource, ...],
    make: Callable[[Resource, ScopeTable, bool], IndexEntry],
) -> ResourceIndex | None:
    index = base.index
    olds = index.entries[span[0] : span[1]]
    made = tuple(
        old
        if old.resource == res
        else make(res, index.scopes, (res.namespace, res.name) in base.services)
        for old, res in zip(olds, news, strict=True)
    )
    if all(map(is_, made, olds)):
        return index
    if any(entry.issues for entry in made):
        return None
    swap = {id(old): entry for old, entry in zip(olds, made, strict=True)}
    by_key = dict(index.by_key)
    for entry in made:
        res = entry.resource
        by_key[(res.group, res.kind, entry.namespace, res.name)] = entry
    kinds = {(e.resource.group, e.resource.kind, e.namespace) for e in made}
    spaces = {e.namespace for e in made if not e.cluster_scoped and e.namespace}
    return replace(
        index,
        entries=index.entries[: span[0]] + made + index.entries[span[1] :],
        by_key=by_key,
        by_kind=_swapped(index.by_kind, kinds, swap),
        by_namespace=_swapped(index.by_namespace, spaces, swap),
    )


def _swapped(
    groups: Mapping[K, tuple[IndexEntry, ...]], keys: set[K], swap: dict[int, IndexEntry]
) -> dict[K, tuple[IndexEntry, ...]]:
    out = dict(groups)
    for key in keys:
        out[key] = tuple(swap.get(id(entry), entry) for entry in groups[key])
    return out

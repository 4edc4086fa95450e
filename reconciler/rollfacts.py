"""What the rollout key of one placement reads about its clusters, carried over from the pass
before while none of its clusters changed.

`rollmemo.rollout_inputs` keys a placement's rollout by, among others, its clusters' report
entries about it, whether every cluster it binds is still declared, and which of them are
assumed ready. Read afresh these cost a step per binding of every placement every pass (200
placements of 400 bindings: ~85,000 dict lookups to find that nothing changed). `facts` keeps,
per placement, the facts with the report entries table and cluster sets they were read from;
the next pass diffs those with its own once per pass (`Changes`: `stagememo.changed_keys` on
the table, which compares each cluster's entries by identity in C, and a symmetric difference
of the sets) and hands the placement the very same facts again when no cluster of its bindings
is among the changed ones. A fact whose clusters changed is read again, so the result is the
one a fresh read gives. The entries table is trusted only as `rollview.report_entries` built
it (`rollview.EntryTable`: per cluster, one dict per report object, never changed afterwards);
any other mapping is read afresh. Called by `rollmemo`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from operator import is_
from typing import Any, Generic, NamedTuple, TypeVar

from reconciler.rollview import EntryTable, ReportEntries
from reconciler.stagememo import StageMemo, changed_keys

S = TypeVar("S")
NO_ENTRIES: Mapping[str, Any] = {}
_KEPT = 64
"""Diffs a `Changes` keeps (one per older object a placement's facts were read from)."""


class Changes(Generic[S]):
    """The clusters that differ between an older object and a newer one, computed once per pair
    (both held while remembered, so their identities stand for them)."""

    def __init__(self, diff: Callable[[S, S], set[str] | frozenset[str]]) -> None:
        self._diff = diff
        self._known: dict[tuple[int, int], tuple[S, S, frozenset[str]]] = {}

    def between(self, old: S, new: S) -> frozenset[str]:
        if old is new:
            return frozenset()
        found = self._known.get((id(old), id(new)))
        if found is None or found[0] is not old or found[1] is not new:
            if len(self._known) >= _KEPT:
                self._known = {}
            found = (old, new, frozenset(self._diff(old, new)))
            self._known[(id(old), id(new))] = found
        return found[2]


def _set_diff(old: frozenset[str], new: frozenset[str]) -> frozenset[str]:
    return old.symmetric_difference(new)


_TABLES: Changes[EntryTable] = Changes(changed_keys)
_SETS: Changes[frozenset[str]] = Changes(_set_diff)


class Facts(NamedTuple):
    """A placement's facts about its clusters, with what they were read from."""

    names: tuple[str, ...]
    entries: EntryTable | None
    clusters: frozenset[str]
    assume: frozenset[str]
    reports: tuple[Any, ...]
    declared: bool | frozenset[str]
    assumed: frozenset[str]


_FACTS: StageMemo[Facts] = StageMemo()


def _reports(key: str, names: tuple[str, ...], entries: ReportEntries) -> tuple[Any, ...]:
    entry, empty = entries.get, NO_ENTRIES
    return tuple([entry(c, empty).get(key) for c in names]) if entries else ()


def facts(
    key: Hashable,
    names: tuple[str, ...],
    named: frozenset[str],
    entries: ReportEntries,
    clusters: frozenset[str],
    assume: frozenset[str],
) -> Facts:
    """The report entries about placement `key` of each cluster of `names` (in order; () when
    there are no entries at all), `clusters.issuperset(named) or named.difference(clusters)`
    and `assume.intersection(named)`: last pass's objects for each whose clusters are unchanged."""
    table = entries if isinstance(entries, EntryTable) else None
    last = _FACTS.last(key)
    was = last[1] if last is not None else None
    if was is None or was.names is not names:
        made = Facts(
            names,
            table,
            clusters,
            assume,
            _reports(str(key), names, entries),
            clusters.issuperset(named) or named.difference(clusters),
            assume.intersection(named),
        )
    else:
        made = _carried(str(key), was, named, table, entries, clusters, assume)
    if made is not was:
        _FACTS.put(key, (), made)
    return made


def _carried(
    key: str,
    was: Facts,
    named: frozenset[str],
    table: EntryTable | None,
    entries: ReportEntries,
    clusters: frozenset[str],
    assume: frozenset[str],
) -> Facts:
    """`was` brought to this pass's table and sets: each fact read again only when one of its
    clusters changed (or the table is not one `report_entries` built)."""
    reports = was.reports
    if (
        table is None
        or was.entries is None
        or bool(table) != bool(was.entries)  # () without any entries, a tuple with some
        or not _TABLES.between(was.entries, table).isdisjoint(named)
    ):
        reports = _reports(key, was.names, entries)
    declared = was.declared
    if not _SETS.between(was.clusters, clusters).isdisjoint(named):
        declared = clusters.issuperset(named) or named.difference(clusters)
    assumed = was.assumed
    if not _SETS.between(was.assume, assume).isdisjoint(named):
        assumed = assume.intersection(named)
    made = Facts(was.names, table, clusters, assume, reports, declared, assumed)
    if all(map(is_, made, was)):
        return was  # nothing to remember anew
    return made

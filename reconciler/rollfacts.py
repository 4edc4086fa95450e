"""What the rollout key of one placement reads about its clusters, carried over from the pass
before while none of its clusters changed.

`rollmemo.rollout_inputs` keys a placement's rollout by, among others, its clusters' report
entries about it, whether every cluster it binds is still declared, and which of them are
assumed ready. Read afresh these cost a step per binding of every placement every pass (200
placements of 400 bindings: ~85,000 dict lookups to find that nothing changed). Each pass's
report entries table and cluster sets make an `_Epoch`, which knows the clusters that changed
since the epoch before (once per pass: `stagememo.changed_keys` on the table, comparing each
cluster's entries by identity in C, and symmetric differences of the sets). `facts` keeps, per
placement, its facts with the epoch they hold at; in the next epoch a placement none of whose
clusters changed gets the very same facts again for a dict lookup and a few identity checks,
and one with a changed cluster reads them afresh, so the result is always a fresh read's. The
entries table is trusted only as `rollview.report_entries` built it (`rollview.EntryTable`: per
cluster, one dict per report object, never changed afterwards); any other mapping is read
afresh every time. Called by `rollmemo`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, NamedTuple

from reconciler.rollview import EntryTable, ReportEntries
from reconciler.stagememo import StageMemo, changed_keys

NO_ENTRIES: Mapping[str, Any] = {}


class _Epoch:
    """One pass's sources, and the clusters that changed since the epoch before (None: any)."""

    def __init__(
        self,
        table: EntryTable,
        clusters: frozenset[str],
        assume: frozenset[str],
        before: _Epoch | None,
    ) -> None:
        self.table, self.clusters, self.assume = table, clusters, assume
        self.before = before
        self.moved: frozenset[str] | None = None
        if before is not None:
            before.before = None  # only the epoch just before is ever compared with
            self.moved = _moved(before, self)


def _moved(old: _Epoch, new: _Epoch) -> frozenset[str] | None:
    if bool(old.table) != bool(new.table):  # () without any entries, a tuple with some
        return None
    table = changed_keys(old.table, new.table) if old.table is not new.table else set()
    clusters = old.clusters.symmetric_difference(new.clusters)
    return frozenset(table).union(clusters, old.assume.symmetric_difference(new.assume))


_current: list[_Epoch] = []


def _epoch(table: EntryTable, clusters: frozenset[str], assume: frozenset[str]) -> _Epoch:
    """The epoch of these very objects: the current one, or a new one after it."""
    now = _current[-1] if _current else None
    same = now is not None and now.table is table and now.clusters is clusters
    if same and now is not None and now.assume is assume:
        return now
    made = _Epoch(table, clusters, assume, now)
    _current[:] = [made]
    return made


class Facts(NamedTuple):
    """A placement's facts about the clusters of its bindings (`names`)."""

    names: tuple[str, ...]
    reports: tuple[Any, ...]
    declared: bool | frozenset[str]
    assumed: frozenset[str]


_FACTS: StageMemo[tuple[Facts, _Epoch]] = StageMemo()


def _read(
    key: str,
    names: tuple[str, ...],
    named: frozenset[str],
    entries: ReportEntries,
    clusters: frozenset[str],
    assume: frozenset[str],
) -> Facts:
    entry, empty = entries.get, NO_ENTRIES
    return Facts(
        names,
        tuple([entry(c, empty).get(key) for c in names]) if entries else (),
        clusters.issuperset(named) or named.difference(clusters),
        named if named <= assume else assume.intersection(named),  # no new set: the common case
    )


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
    and `assume.intersection(named)` (`named`: the set of `names`), last pass's very objects
    when none of its clusters changed since."""
    if not isinstance(entries, EntryTable):
        return _read(str(key), names, named, entries, clusters, assume)
    epoch = _epoch(entries, clusters, assume)
    last = _FACTS.last(key)
    if last is not None:
        was, at = last[1]
        if was.names is names or was.names == names:
            if at is epoch:
                return was
            moved = epoch.moved
            if at is epoch.before and moved is not None and named.isdisjoint(moved):
                _FACTS.put(key, (), (was, epoch))
                return was
    made = _read(str(key), names, named, entries, clusters, assume)
    _FACTS.put(key, (), (made, epoch))
    return made

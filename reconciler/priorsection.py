"""The `index` part of a placement's `state/prior/` record (`reconciler.priorstate`), kept
from pass to pass and patched where a cluster's row or binding changed.

A row that is exactly what the cluster's binding implies (`implied_row`, under the header most
of the placement's rows share) is the cluster's name alone; any other row is written whole. A
placement bound to one more cluster changes one row out of ~1,000: `index_section` redoes only
the clusters whose row or binding is another object than last time (`stagememo.changed_keys`;
the bindings by `shardpatch.changed_bindings`, which looks only at where they differ)
and inserts or removes their names in the kept list with its lines (`keptgroups.Names`), unless
the most common header changed (then every cell is looked at again, reusing the ones it can).
Called by `priorstate`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import chain
from operator import is_
from typing import Any, Protocol

from gitfleet.api.canonical import canonical_json
from gitfleet.load.yamlemit import Pieces
from reconciler.keptgroups import Names, unlined
from reconciler.shardpatch import Keyed, changed_bindings, keyed
from reconciler.stagememo import StageMemo, changed_keys

HEADER_FIELDS = ("name", "namespace", "applyStrategy")


class BindingLike(Protocol):
    """What a row implied by a binding reads of it (`reconciler.state.Binding`)."""

    @property
    def cluster(self) -> str: ...
    @property
    def policy_index(self) -> int: ...
    @property
    def resource_index(self) -> int | None: ...
    @property
    def content(self) -> str | None: ...


def implied_row(key: str, header: Mapping[str, Any], b: BindingLike) -> dict[str, Any] | None:
    """The ClusterIndex row the binding `b` implies (None: it names no content)."""
    if b.content is None or b.resource_index is None:
        return None
    row = {
        **header,
        "key": key,
        "resourceSnapshotIndex": b.resource_index,
        "policySnapshotIndex": b.policy_index,
        "contentHash": b.content,
    }
    return dict(sorted(row.items()))


def _header_text(row: Mapping[str, Any]) -> str:
    """The canonical JSON of a row's (name, namespace, apply strategy)."""
    return canonical_json({f: row[f] for f in HEADER_FIELDS if f in row})


def _own_headers(rows: Mapping[str, Mapping[str, Any]], kept: dict[str, _Cell]) -> dict[str, str]:
    """cluster -> its row's own header text (the kept cell's for the very row): made once
    for a run of rows whose header values are the very objects of the row before (a
    placement's rows share its name and namespace, and copies of one apply strategy)."""
    own: dict[str, str] = {}
    last: tuple[list[Any], str] | None = None
    for cluster, row in rows.items():
        found = kept.get(cluster)
        if found is not None and found[0] is row:
            own[cluster] = found[3]
            continue
        values = _header_values(row)
        if last is None or len(values) != len(last[0]) or not all(map(is_, values, last[0])):
            last = (values, _header_text(row))
        own[cluster] = last[1]
    return own


def _header_values(row: Mapping[str, Any]) -> list[Any]:
    """The objects a row's header text is made of: the same objects, the same text."""
    values = [row.get(f, _ABSENT) for f in HEADER_FIELDS]
    strategy = values[-1]
    if type(strategy) is dict:
        values[-1:] = chain.from_iterable(strategy.items())
    return values


_ABSENT = object()


def _best(counts: Counter[str]) -> str | None:
    """The most common header text (ties: the first in canonical order)."""
    return min(counts.items(), key=lambda item: (-item[1], item[0]))[0] if counts else None


_Cell = tuple[Mapping[str, Any], Any, str | None, str, dict[str, Any] | None, list[Any]]
"""(row, binding, header text, the row's own header text, its entry (None: implied), the
entry's emitted lines once written)."""


@dataclass(frozen=True)
class _Index:
    """A placement's last index section: the rows and bindings it was made from, how many
    rows have each own header text, the header, each cluster's cell, the implied clusters
    (with their lines) and the entries, in cluster order."""

    rows: Mapping[str, Mapping[str, Any]]
    bindings: Keyed
    counts: Counter[str]
    text: str | None
    cells: dict[str, _Cell]
    clusters: Names
    entries: dict[str, dict[str, Any]]


_CELLS: StageMemo[_Index] = StageMemo()
"""Placement key -> its last index section: a section whose placement changed on one cluster
re-checks that cluster's row only (rows and bindings by identity, `changed_keys`: the parsed
index rows are shared objects, never changed)."""


def index_section(
    key: str,
    rows: Mapping[str, Mapping[str, Any]],
    bindings: tuple[BindingLike, ...],
    pieces: Pieces,
) -> tuple[dict[str, Any], Callable[[int], str | None]]:
    """The `index` part of a placement's prior record: the clusters whose rows its bindings
    imply under the most common header, and the other rows whole (their line slots go in
    `pieces`); with the text of its clusters at an indent. Patched from the last section
    where a row or binding is another object (`_patched_index`), else made afresh."""
    last = _CELLS.last(key)
    index = _patched_index(key, last[1], rows, bindings) if last is not None else None
    if index is None:
        index = _full_index(key, last[1] if last is not None else None, rows, bindings)
    _CELLS.put(key, (), index)
    entries = list(index.entries.values())
    pieces.update((id(entry), index.cells[c][5]) for c, entry in index.entries.items())
    section: dict[str, Any] = {"clusters": index.clusters.names}
    if index.clusters.names and index.text is not None:
        section["header"] = json.loads(index.text)
    if entries:
        section["entries"] = entries
    return section, index.clusters.block


def _full_index(
    key: str,
    before: _Index | None,
    rows: Mapping[str, Mapping[str, Any]],
    bindings: tuple[BindingLike, ...],
) -> _Index:
    """Every cluster's cell (the last one kept where its row, binding and header are)."""
    made = keyed(bindings)
    lookup = made.lookup()
    kept = before.cells if before is not None else {}
    own = _own_headers(rows, kept)
    counts = Counter(own.values())
    text = _best(counts)
    header = json.loads(text) if text is not None else None
    cells: dict[str, _Cell] = {}
    names = Names([], unlined())
    entries: dict[str, dict[str, Any]] = {}
    for cluster, row in sorted(rows.items()):
        found = _cell(
            key,
            cluster,
            row,
            lookup.get(cluster),
            (text, header),
            own[cluster],
            kept.get(cluster),
        )
        cells[cluster] = found
        if found[4] is None:
            names.insert(cluster)
        else:
            entries[cluster] = found[4]
    return _Index(rows, made, counts, text, cells, names, entries)


def _patched_index(
    key: str,
    before: _Index,
    rows: Mapping[str, Mapping[str, Any]],
    bindings: tuple[BindingLike, ...],
) -> _Index | None:
    """`_full_index` made from `before` by redoing the clusters whose row or binding is
    another object (`shardpatch.changed_bindings`); None when the most common header changed
    (every cell reads it)."""
    moved, made = changed_bindings(before.bindings, bindings)
    changed = changed_keys(before.rows, rows) | moved
    counts, own = before.counts.copy(), {}
    for cluster in changed:
        found, row = before.cells.get(cluster), rows.get(cluster)
        if found is not None:
            counts[found[3]] -= 1
        if row is not None:
            own[cluster] = found[3] if found is not None and found[0] is row else _header_text(row)
            counts[own[cluster]] += 1
    counts = +counts
    if _best(counts) != before.text:
        return None
    header = json.loads(before.text) if before.text is not None else None
    cells, entries = dict(before.cells), dict(before.entries)
    names = Names(
        list(before.clusters.names), (before.clusters.lined[0], list(before.clusters.lined[1]))
    )
    lookup = made.lookup()
    for cluster in sorted(changed):
        found = cells.pop(cluster, None)
        if found is not None and found[4] is None:
            names.remove(cluster)
        entries.pop(cluster, None)
        row = rows.get(cluster)
        if row is None:
            continue
        binding = lookup.get(cluster)
        found = _cell(key, cluster, row, binding, (before.text, header), own[cluster], found)
        cells[cluster] = found
        if found[4] is None:
            names.insert(cluster)
        else:
            entries[cluster] = found[4]
    entries = dict(sorted(entries.items()))
    return _Index(rows, made, counts, before.text, cells, names, entries)


def _cell(
    key: str,
    cluster: str,
    row: Mapping[str, Any],
    binding: Any,
    best: tuple[str | None, dict[str, Any] | None],
    own: str,
    found: _Cell | None,
) -> _Cell:
    """One cluster's cell: `found` when made from the very row and binding under the same
    header, else the row implied (None) or whole (an entry)."""
    text, header = best
    if found is not None and found[0] is row and found[1] is binding and found[2] == text:
        return found
    implied = None if binding is None or header is None else implied_row(key, header, binding)
    entry = None
    if implied is None or implied != row:
        entry = {"cluster": cluster, **{k: v for k, v in row.items() if k != "key"}}
    return (row, binding, text, own, entry, [])

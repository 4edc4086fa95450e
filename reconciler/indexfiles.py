"""The index files of the output tree: each cluster's ClusterIndex (`clusters/<c>/index.yaml`)
and, per placement on it, its PlacementIndex (`clusters/<c>/<key>/index.yaml`).

A placement index is serialised once per distinct object list in a pass (most clusters of a
placement share one), a row's pieces once per row object (clusters given the same manifests
share one, `layoutcells`), and a ClusterIndex item once per row but for its content hash (a
template the hash is written into). Each cluster keeps last pass's pieces per placement key: the row it was
made from, the row's ClusterIndex list item and its PlacementIndex bytes. A row equal to the
remembered one (the very object when the assembly reuses an unchanged placement's rows,
`reconciler.assemble`; an equal copy when a rollout keeps a cluster's previous entry, or when
the rows arrive in another order) reuses its pieces; a cluster whose rows are all reused keeps
last pass's very files (nothing serialised, nothing compared when composing). Otherwise only
the changed rows are serialised, the ClusterIndex is joined again from its pieces, and the new
files unit names the paths that changed (`unitfiles.patched_unit`). Rows listed where last
pass's were are compared by identity in C first, so a cluster with one placement's row changed
costs that row; a row compared by value compares its objects' identity fields, remembered per
object list for three passes (`same_listing` also tells `assembleheld` whether a kept row lists
what the row laid out there last pass lists). A cluster with two rows of
one placement key (never made by the assembly) is laid out afresh. Called by `assemble`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import compress
from operator import is_, not_
from typing import Any

from gitfleet.api.indexrow import APPLY_STRATEGY_FIELD, DEFAULT_APPLY_STRATEGY, written_row
from gitfleet.api.output import (
    IDENTITY_FIELDS,
    cluster_index_doc,
    cluster_index_path,
    placement_index_doc,
    placement_index_path,
)
from reconciler.assemblememo import ThreeRounds
from reconciler.output import yaml_bytes
from reconciler.priorindex import placement_objects
from reconciler.priorparse import remember
from reconciler.stagememo import StageMemo, changed_keys
from reconciler.unitfiles import patched_unit


@dataclass(frozen=True)
class Piece:
    """One placement's row on one cluster, with what the index files hold of it."""

    entry: dict[str, Any]
    """The row it was made from (kept alive: compared by identity first, then by value)."""
    order: tuple[str, str]
    """Where the ClusterIndex lists it (namespace, name)."""
    row: dict[str, Any]
    """The row without its objects (what the ClusterIndex lists, its apply strategy in full:
    what reading the file back gives, `indexrow.read_row`)."""
    item: bytes
    """The row's ClusterIndex list item."""
    listing: bytes
    """The row's PlacementIndex file."""
    ident: tuple[Any, ...]
    """What the PlacementIndex file is made of: the key and each object's identity fields."""


@dataclass(frozen=True)
class Written:
    """One cluster's index files, with the pieces they were joined from and their bytes."""

    files: dict[str, bytes]
    entries: tuple[dict[str, Any], ...]
    """The rows they were made from (kept alive: compared by identity first)."""
    pieces: dict[str, Piece] | None
    """None: laid out afresh (rows repeating a placement key), never patched."""
    size: int


_CLUSTERS: StageMemo[Written] = StageMemo()
"""Cluster -> its last index files and pieces."""


class _Listings:
    """Placement index bytes of one pass, per distinct (placement, object identities), and
    ClusterIndex item templates, per distinct row but for its content hash."""

    def __init__(self) -> None:
        self.emitted: dict[tuple[Any, ...], bytes] = {}
        self.templates: dict[tuple[Any, ...], tuple[Any, bytes]] = {}
        self.pieces: dict[int, Piece] = {}
        """id of a row -> its pieces (holding it): clusters given the same manifests share a
        row (`layoutcells.clean_layout`)."""

    def ident(self, key: str, objects: list[dict[str, Any]]) -> tuple[Any, ...]:
        """The placement key and each object's identity fields (all a listing depends on)."""
        return (key, _object_idents(objects))

    def listing(self, ident: tuple[Any, ...], objects: list[dict[str, Any]]) -> bytes:
        """The PlacementIndex file of `ident` (`self.ident(key, objects)`)."""
        listed = self.emitted.get(ident)
        if listed is None:
            doc = placement_index_doc(ident[0], objects)
            listed = self.emitted[ident] = yaml_bytes(doc)
            remember(listed, "placement-index", placement_objects(doc))
        return listed

    def item(self, row: Mapping[str, Any]) -> bytes:
        """The row's ClusterIndex list item, `yaml_bytes([written_row(row)])`: emitted once per
        row shape (the row without its objects and content hash, the apply strategy the default
        or else that very dict, kept alive) with a stand-in hash, which the row's is written
        over (the emitter writes a `sha256:<hex>` digest as it is wherever it stands). The
        clusters of a placement share one shape: their rows differ by content hash alone."""
        content = row.get(CONTENT_HASH)
        strategy = row.get(APPLY_STRATEGY_FIELD, _ABSENT)
        if type(content) is not str or _DIGEST.fullmatch(content) is None:
            return yaml_bytes([written_row(row)])
        given = strategy == DEFAULT_APPLY_STRATEGY or strategy is _ABSENT
        fields = [(k, type(v), v) for k, v in row.items() if k not in _NOT_SHAPE]
        shape = (tuple(fields), None if given else id(strategy))
        try:
            found = self.templates.get(shape)
        except TypeError:  # a value that is no plain scalar
            return yaml_bytes([written_row(row)])
        if found is None:
            made = yaml_bytes([written_row({**row, CONTENT_HASH: _STAND_IN})])
            if made.count(_STAND_IN_BYTES) != 1:
                return yaml_bytes([written_row(row)])
            found = self.templates[shape] = (strategy, made)
        return found[1].replace(_STAND_IN_BYTES, content.encode())


CONTENT_HASH = "contentHash"
_NOT_SHAPE = frozenset({"objects", CONTENT_HASH, APPLY_STRATEGY_FIELD})
_DIGEST = re.compile("sha256:[0-9a-f]{64}")
_STAND_IN = "sha256:" + "0" * 64
"""Stands for a row's content hash in its item's template."""
_STAND_IN_BYTES = _STAND_IN.encode()
_ABSENT = object()


def _object_idents(objects: list[dict[str, Any]]) -> tuple[tuple[Any, ...], ...]:
    """Each object's identity fields, remembered by the very list for three passes (`_IDENTS`,
    holding the list: its id stays its own): a rollout's kept rows share one parsed list per
    PlacementIndex, and a cluster laid out from the same content as two passes ago gets that
    pass's very list (`layoutcells.checked_once`)."""
    if not objects:
        return ()
    found = _IDENTS.get(id(objects))
    if found is not None and found[0] is objects:
        return found[1]
    idents = tuple([tuple(map(o.get, IDENTITY_FIELDS)) for o in objects])
    _IDENTS.put(id(objects), (objects, idents))
    return idents


_IDENTS: ThreeRounds[tuple[list[dict[str, Any]], tuple[tuple[Any, ...], ...]]] = ThreeRounds()
"""id of an index row's object list -> (the list, its objects' identity fields)."""


def _piece(entry: dict[str, Any], listings: _Listings) -> Piece:
    """The pieces of one row: its ClusterIndex list item (the row without its objects) and its
    PlacementIndex file; once per row object in a pass."""
    found = listings.pieces.get(id(entry))
    if found is not None and found.entry is entry:
        return found
    piece = listings.pieces[id(entry)] = _made_piece(entry, listings)
    return piece


def _made_piece(entry: dict[str, Any], listings: _Listings) -> Piece:
    row = _header(entry)
    order = (str(entry.get("namespace", "")), str(entry["name"]))
    objects = entry.get("objects") or []
    ident = listings.ident(str(entry["key"]), objects)
    item = listings.item(entry)  # the default apply strategy left out
    return Piece(entry, order, row, item, listings.listing(ident, objects), ident)


def _header(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The row without its objects (what the ClusterIndex lists)."""
    return {k: v for k, v in entry.items() if k != "objects"}


def _same(found: Piece, entry: dict[str, Any], listings: _Listings) -> bool:
    """Whether `entry` makes the very pieces `found` holds: the same object or an equal row,
    or (a row whose objects carry other fields, e.g. a rollout's kept row read back from the
    output) the same row without its objects and the same object identities."""
    if found.entry is entry or found.entry == entry:
        return True
    objects = entry.get("objects") or []
    return found.row == _header(entry) and found.ident == listings.ident(found.ident[0], objects)


def same_listing(row: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Whether two rows of one placement make the same index files: the same row without its
    objects (the ClusterIndex item) and the same object identities (the PlacementIndex)."""
    return _header(row) == _header(other) and _object_idents(
        row.get("objects") or []
    ) == _object_idents(other.get("objects") or [])


def _index_bytes(cluster: str, pieces: Iterable[Piece]) -> bytes:
    """The ClusterIndex file (`cluster_index_doc`'s bytes). Block YAML of a mapping is its keys'
    blocks in order and a block list is its items one after the other, so the file is the
    header's YAML, `placements:` and each row's list item in the document's order: the same
    bytes as emitting the document whole (the golden fleets and the unit tests check it)."""
    header = cluster_index_doc(cluster, [])
    ordered = sorted(pieces, key=lambda p: p.order)  # stable: equal places keep their order
    if not ordered:
        data = yaml_bytes(header)
    else:
        del header["placements"]  # the last key: the emitter sorts them
        items = b"".join(p.item for p in ordered)
        data = yaml_bytes(header) + b"placements:\n" + items
    remember(data, "cluster-index", {str(p.entry["key"]): p.row for p in ordered})
    return data


def _reused(
    entries: Sequence[dict[str, Any]], before: Mapping[str, Piece], listings: _Listings
) -> tuple[dict[str, Piece], list[dict[str, Any]]]:
    """Last pass's piece of each row that makes the same pieces, and the rows that do not."""
    out: dict[str, Piece] = {}
    fresh = []
    for entry in entries:
        key = entry["key"]
        found = before.get(key)
        if found is not None and (found.entry is entry or _same(found, entry, listings)):
            out[key] = found
        else:
            fresh.append(entry)
    return out, fresh


def _reused_in_place(
    entries: tuple[dict[str, Any], ...],
    last: Written,
    before: Mapping[str, Piece],
    listings: _Listings,
) -> tuple[dict[str, Piece], list[dict[str, Any]]]:
    """`_reused` for rows listed where last pass's were (as many): the rows that are last
    pass's very objects in their place are found in C and keep their pieces unlooked-at, so a
    cluster with one placement's row changed among forty costs that row."""
    moved = list(map(not_, map(is_, entries, last.entries)))
    out = dict(before)
    for old in compress(last.entries, moved):
        out.pop(old["key"], None)
    fresh = []
    for entry in compress(entries, moved):
        key = entry["key"]
        found = before.get(key)
        if found is not None and _same(found, entry, listings):
            out[key] = found
        else:
            fresh.append(entry)
    return out, fresh


def _cluster_files(
    cluster: str, entries: Sequence[dict[str, Any]], listings: _Listings, last: Written | None
) -> Written:
    """The cluster's index files, patched from `last` (its files of the last pass)."""
    if last is not None and last.pieces is None:
        last = None
    now = tuple(entries)  # the very tuple when `entries` is one
    if last is not None and last.entries == now:  # mostly identity checks, at C speed
        return last
    before = last.pieces if last is not None and last.pieces is not None else {}
    if last is not None and len(now) == len(last.entries):
        reused, fresh = _reused_in_place(now, last, before, listings)
    else:
        reused, fresh = _reused(now, before, listings)
    if last is not None and not fresh and len(reused) == len(now) == len(before):
        return replace(last, entries=now)  # the same files: compared by identity next pass
    made = {e["key"]: _piece(e, listings) for e in fresh}
    pieces = {**reused, **made}
    if len(pieces) != len(now):  # rows repeating a key (never made by the assembly)
        return _afresh(cluster, now, listings)
    changes: dict[str, bytes | None] = {
        cluster_index_path(cluster): _index_bytes(cluster, pieces.values())
    }
    for key, piece in made.items():
        changes[placement_index_path(cluster, key)] = piece.listing
    gone = [placement_index_path(cluster, k) for k in before if k not in pieces]
    changes.update(dict.fromkeys(gone))
    files = patched_unit(last.files, changes) if last is not None else _fresh(changes)
    return Written(files, now, pieces, sum(map(len, files.values())))


def _fresh(changes: Mapping[str, bytes | None]) -> dict[str, bytes]:
    return {path: data for path, data in changes.items() if data is not None}


def _afresh(cluster: str, entries: Sequence[dict[str, Any]], listings: _Listings) -> Written:
    """Index files of rows that may repeat a placement key (the later row's PlacementIndex
    file wins, every row is listed)."""
    made = [_piece(e, listings) for e in entries]
    files = {cluster_index_path(cluster): _index_bytes(cluster, made)}
    for piece in made:
        files[placement_index_path(cluster, str(piece.entry["key"]))] = piece.listing
    return Written(files, tuple(entries), None, sum(map(len, files.values())))


def write_indexes(
    clusters: list[str],
    index: Mapping[str, Sequence[dict[str, Any]]],
    units: dict[str, Mapping[str, bytes]],
) -> dict[str, int]:
    """Every cluster's ClusterIndex and PlacementIndex files into `units` (one unit per cluster,
    `index/<cluster>`: the same dict while its rows are); returns their bytes per cluster (the
    very dict of the last call when no cluster changed). A cluster whose rows are the very
    tuple its last files were made from keeps them unlooked-at (`reconciler.indexrows` hands
    unchanged clusters last pass's tuple): with the clusters of the last call and rows in
    tuples (never changed in place), only the clusters whose rows are other objects are looked
    at (`changed_keys`, in C)."""
    last = _ALL.last("")
    _ALL.drop("")
    _IDENTS.next_round()
    index = dict(index)  # the caller's mapping may change later: its rows tuples may not
    if last is not None and last[1][0] == clusters and not set(map(type, index.values())) - _ROWS:
        _, before, mine, sizes = last[1]
        todo: Iterable[str] = sorted(changed_keys(before, index))  # in the clusters' order
        if todo:
            mine, sizes = dict(mine), dict(sizes)
    else:
        mine, sizes, todo = {}, {}, clusters
    listings = _Listings()
    for cluster in todo:
        mine["index/" + cluster], sizes[cluster] = _cluster_unit(cluster, index, listings)
    units.update(mine)
    _ALL.put("", (), (list(clusters), index, mine, sizes))
    return sizes


def _cluster_unit(
    cluster: str, index: Mapping[str, Sequence[dict[str, Any]]], listings: _Listings
) -> tuple[Mapping[str, bytes], int]:
    """The cluster's index files unit and its bytes."""
    last = _CLUSTERS.last(cluster)
    entries = index.get(cluster, ())
    if last is not None and last[1].entries is entries and last[1].pieces is not None:
        return last[1].files, last[1].size
    written = _cluster_files(cluster, entries, listings, last[1] if last else None)
    if last is None or written is not last[1]:
        _CLUSTERS.put(cluster, (), written)
    return written.files, written.size


_ROWS = {tuple}
_ALL: StageMemo[
    tuple[
        list[str],
        dict[str, Sequence[dict[str, Any]]],
        dict[str, Mapping[str, bytes]],
        dict[str, int],
    ]
] = StageMemo()
"""The last call's clusters and rows, its units (`index/<cluster>` -> files) and bytes per
cluster (never changed once returned: a call that changes them copies them first)."""

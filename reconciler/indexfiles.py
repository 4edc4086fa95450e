"""The index files of the output tree: each cluster's ClusterIndex (`clusters/<c>/index.yaml`)
and, per placement on it, its PlacementIndex (`clusters/<c>/<key>/index.yaml`).

A placement index is serialised once per distinct object list in a pass (most clusters of a
placement share one). A cluster whose index rows are the very rows of the last pass (the
assembly reuses an unchanged placement's rows, `reconciler.assemble`) gets that pass's bytes
without serialising anything (`reconciler.stagememo`); in a cluster where some rows changed, only
those rows are serialised. Called by `assemble`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitfleet.api.output import (
    IDENTITY_FIELDS,
    cluster_index_doc,
    cluster_index_path,
    placement_index_doc,
    placement_index_path,
)
from reconciler.output import yaml_bytes
from reconciler.priorindex import placement_objects
from reconciler.priorparse import remember
from reconciler.stagememo import StageMemo

Pieces = dict[int, tuple[bytes, bytes]]
"""id(row) -> (its ClusterIndex list item, its PlacementIndex file), for the rows of one call."""
_CLUSTERS: StageMemo[tuple[dict[str, bytes], Pieces]] = StageMemo()
"""Cluster -> its index files and each row's pieces, with the rows they were made from."""


class _Listings:
    """Placement index bytes of one pass, per distinct (placement, object identities)."""

    def __init__(self) -> None:
        self.emitted: dict[tuple[Any, ...], bytes] = {}
        self.idents: dict[tuple[str, int], tuple[Any, ...]] = {}  # object lists clusters share

    def listing(self, key: str, objects: list[dict[str, Any]]) -> bytes:
        ident = self.idents.get((key, id(objects))) if objects else None
        if ident is None:
            ident = (key, *(tuple(o.get(f) for f in IDENTITY_FIELDS) for o in objects))
            self.idents[(key, id(objects))] = ident
        listed = self.emitted.get(ident)
        if listed is None:
            doc = placement_index_doc(key, objects)
            listed = self.emitted[ident] = yaml_bytes(doc)
            remember(listed, "placement-index", placement_objects(doc))
        return listed


def _pieces(entry: dict[str, Any], row: dict[str, Any], listings: _Listings) -> tuple[bytes, bytes]:
    """The YAML list item of one ClusterIndex row (`row`: `entry` without its objects) and
    the row's PlacementIndex file."""
    return yaml_bytes([row]), listings.listing(str(entry["key"]), entry.get("objects") or [])


def _cluster_files(
    cluster: str, entries: list[dict[str, Any]], listings: _Listings, before: Pieces
) -> tuple[dict[str, bytes], Pieces]:
    """The ClusterIndex file (`cluster_index_doc`'s bytes) and its PlacementIndex files. Block
    YAML of a mapping is its keys' blocks in order and a block list is its items one after the
    other, so the file is the header's YAML, `placements:` and each row's list item: the same
    bytes as emitting the document whole (the golden fleets check it). Rows that are last
    pass's very rows (`before`; unchanged placements hand them over) are not emitted again."""
    header = cluster_index_doc(cluster, [])
    del header["placements"]  # the last key: the emitter sorts them
    order = sorted(range(len(entries)), key=lambda i: _order(entries[i]))  # as the doc sorts
    rows = [{k: v for k, v in entries[i].items() if k != "objects"} for i in order]
    pieces: Pieces = {}
    for i, row in zip(order, rows, strict=True):
        entry = entries[i]
        found = before.get(id(entry))
        pieces[id(entry)] = found if found is not None else _pieces(entry, row, listings)
    if rows:
        items = b"".join(pieces[id(entries[i])][0] for i in order)
        data = yaml_bytes(header) + b"placements:\n" + items
    else:
        data = yaml_bytes({**header, "placements": []})
    remember(data, "cluster-index", {str(e["key"]): e for e in rows})
    out = {cluster_index_path(cluster): data}
    for entry in entries:
        out[placement_index_path(cluster, str(entry["key"]))] = pieces[id(entry)][1]
    return out, pieces


def _order(entry: Mapping[str, Any]) -> tuple[str, str]:
    return (entry.get("namespace", ""), entry["name"])


def write_indexes(
    clusters: list[str],
    index: Mapping[str, list[dict[str, Any]]],
    units: dict[str, Mapping[str, bytes]],
) -> dict[str, int]:
    """Every cluster's ClusterIndex and PlacementIndex files into `units` (one unit per cluster,
    `index/<cluster>`: the same dict while its rows are); returns their bytes per cluster."""
    listings = _Listings()
    sizes = {}
    for cluster in clusters:
        entries = index.get(cluster, [])
        inputs = tuple(entries)  # the rows themselves: compared by identity when reused
        last = _CLUSTERS.last(cluster)
        if last is not None and last[0] == inputs:
            written = last[1][0]
        else:  # the last rows are alive in `last`, so their ids are not reused
            written, pieces = _cluster_files(cluster, entries, listings, last[1][1] if last else {})
            _CLUSTERS.put(cluster, inputs, (written, pieces))
        units["index/" + cluster] = written
        sizes[cluster] = sum(map(len, written.values()))
    return sizes

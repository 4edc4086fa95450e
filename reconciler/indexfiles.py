"""The index files of the output tree: each cluster's ClusterIndex (`clusters/<c>/index.yaml`)
and, per placement on it, its PlacementIndex (`clusters/<c>/<key>/index.yaml`).

A placement index is serialised once per distinct object list in a pass (most clusters of a
placement share one). A cluster whose index rows are the very rows of the last pass (the
assembly reuses an unchanged placement's rows, `reconciler.assemble`) gets that pass's bytes
without serialising anything (`reconciler.stagememo`). Called by `assemble`.
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
from reconciler.stagememo import IdentityMemo, StageMemo

_CLUSTERS: StageMemo[dict[str, bytes]] = StageMemo()
"""Cluster -> its index files, with the rows they were made from."""


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


_rows: IdentityMemo[bytes] = IdentityMemo()
"""Index row -> its YAML as one item of `placements`."""


def _row_bytes(entry: dict[str, Any], row: dict[str, Any]) -> bytes:
    """The YAML list item of one ClusterIndex row (`row`: `entry` without its objects),
    emitted once per row object (unchanged placements hand over the very same rows)."""
    data = _rows.get(entry)
    if data is None:
        data = yaml_bytes([row])
        _rows.put(entry, data)
    return data


def _index_bytes(cluster: str, entries: list[dict[str, Any]]) -> tuple[bytes, list[dict[str, Any]]]:
    """The ClusterIndex file and its rows (`cluster_index_doc`'s). Block YAML of a mapping is
    its keys' blocks in order and a block list is its items one after the other, so the file is
    the header's YAML, `placements:` and each row's list item: the same bytes as emitting the
    document whole (the golden fleets check it), with only new rows emitted."""
    header = cluster_index_doc(cluster, [])
    del header["placements"]  # the last key: the emitter sorts them
    order = sorted(range(len(entries)), key=lambda i: _order(entries[i]))  # as the doc sorts
    rows = [{k: v for k, v in entries[i].items() if k != "objects"} for i in order]
    if not rows:
        return yaml_bytes({**header, "placements": []}), rows
    items = [_row_bytes(entries[i], row) for i, row in zip(order, rows, strict=True)]
    return yaml_bytes(header) + b"placements:\n" + b"".join(items), rows


def _order(entry: Mapping[str, Any]) -> tuple[str, str]:
    return (entry.get("namespace", ""), entry["name"])


def _cluster_files(
    cluster: str, entries: list[dict[str, Any]], listings: _Listings
) -> dict[str, bytes]:
    data, rows = _index_bytes(cluster, entries)
    remember(data, "cluster-index", {str(e["key"]): e for e in rows})
    out = {cluster_index_path(cluster): data}
    for entry in entries:
        key = str(entry["key"])
        out[placement_index_path(cluster, key)] = listings.listing(key, entry.get("objects") or [])
    return out


def write_indexes(
    clusters: list[str], index: Mapping[str, list[dict[str, Any]]], files: dict[str, bytes]
) -> dict[str, int]:
    """Every cluster's ClusterIndex and PlacementIndex files into `files`; returns their bytes
    per cluster."""
    listings = _Listings()
    _rows.next_round()
    sizes = {}
    for cluster in clusters:
        entries = index.get(cluster, [])
        inputs = tuple(entries)  # the rows themselves: compared by identity when reused
        written = _CLUSTERS.get(cluster, inputs)
        if written is None:
            written = _cluster_files(cluster, entries, listings)
            _CLUSTERS.put(cluster, inputs, written)
        files.update(written)
        sizes[cluster] = sum(map(len, written.values()))
    return sizes

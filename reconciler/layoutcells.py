"""One placement's files and index row on each cluster, reused per cluster across passes.

A placement recomputed because one cluster was added, removed or relabelled gives every other
cluster the very same manifest tuple as last pass (`reconciler.manifestmemo`). For a cluster
whose objects may all be written as rendered, its files and ClusterIndex row depend only on
that tuple, the placement's index header and the cluster's apply strategy: `CleanLayouts`
hands back last pass's files, row and byte count while those are unchanged, so only changed
clusters make paths and rows again, and the row is the very object `reconciler.indexfiles`
emitted last pass. Called by `reconciler.assemble`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitfleet.api.output import object_path
from reconciler.manifests import Manifest
from reconciler.stagememo import StageMemo

_Cell = tuple[
    tuple[Manifest, ...], dict[str, Any], dict[str, Any], dict[str, Any], dict[str, bytes], int
]
"""(manifests, header, apply strategy, index row, files, their bytes)."""
_CELLS: StageMemo[dict[str, _Cell]] = StageMemo()
"""Placement key -> each cluster's last clean layout."""


class CleanLayouts:
    """The clean layouts of one placement's `_write_one` call (`done` remembers them)."""

    def __init__(self, key: str) -> None:
        self.key = key
        last = _CELLS.last(key)
        self._before = last[1] if last is not None else {}
        self._made: dict[str, _Cell] = {}

    def layout(
        self,
        cluster: str,
        mine: tuple[Manifest, ...],
        header: Mapping[str, Any],
        strategy: dict[str, Any],
        clean: tuple[list[dict[str, Any]], str],
    ) -> tuple[dict[str, Any], dict[str, bytes], int]:
        """(index row, files, their bytes) of `mine` on `cluster`; `clean`: the index objects
        and content hash of `mine` (determined by it)."""
        found = self._before.get(cluster)
        if found is None or found[0] is not mine or found[1] != header or found[2] != strategy:
            prefix = object_path(cluster, self.key, "")
            files = {prefix + m.file: m.data for m in mine}
            objects, content = clean
            row = {**header, "applyStrategy": strategy, "contentHash": content, "objects": objects}
            found = (mine, dict(header), strategy, row, files, sum(map(len, files.values())))
        self._made[cluster] = found
        return found[3], found[4], found[5]

    def done(self) -> None:
        _CELLS.put(self.key, (), self._made)

"""The rows of every placement in a new output tree's cluster indexes, for `state/prior/`.

`placement_rows(output, clusters)` gives placement key -> cluster -> ClusterIndex row, read from
the `clusters/<c>/index.yaml` files the pass just wrote (each derived once per distinct content,
`reconciler.priorparse`). A long-running hub writes the same index bytes object again for an
unchanged cluster, so only clusters whose index file is another object are looked at, and only
the placements on them get new row mappings; the others keep last pass's mapping objects, which
lets `priorstate.prior_files` compare them by identity. Called by `reconciler.state`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from gitfleet.api.output import cluster_index_path
from reconciler.priorparse import derive_own
from reconciler.priorstate import READ_ERRORS, index_entries
from reconciler.stagememo import StageMemo

Rows = dict[str, dict[str, dict[str, Any]]]
"""placement key -> cluster -> ClusterIndex row."""
_LAST_ROWS: StageMemo[tuple[dict[str, tuple[bytes, Any]], Rows]] = StageMemo()
"""The last `placement_rows`: each cluster's index file (the bytes object) with its entries, and
the rows made of them."""


def placement_rows(
    output: Mapping[str, bytes], clusters: Iterable[str] | None = None
) -> Rows | None:
    """placement key -> cluster -> ClusterIndex row of an output tree; None when a row cannot
    be recorded (an unreadable index, or an older-shape row that lists its objects).
    `clusters`: the clusters with an index file (else every path is looked at). A cluster
    whose index file is the very bytes object of the last call keeps its rows without a look
    (`_patched_rows`); the result is shared: read it, never change it."""
    files: dict[str, tuple[bytes, Any]] = {}
    last = _LAST_ROWS.last("")
    before = last[1][0] if last is not None else {}
    for cluster, path in _cluster_indexes(output, clusters):
        data = output[path]
        found = before.get(cluster)
        if found is not None and found[0] is data:
            files[cluster] = found
            continue
        try:
            entries = derive_own(output, path, "cluster-index", index_entries)
        except READ_ERRORS:
            _LAST_ROWS.drop("")
            return None
        if any("objects" in row for row in entries.values()):
            _LAST_ROWS.drop("")
            return None
        files[cluster] = (data, entries)
    out = _patched_rows(last[1], files) if last is not None else _all_rows(files)
    _LAST_ROWS.put("", (), (files, out))
    return out


def _all_rows(files: Mapping[str, tuple[bytes, Any]]) -> Rows:
    out: Rows = {}
    for cluster, (_, entries) in files.items():
        for key, row in entries.items():
            out.setdefault(key, {})[cluster] = row
    return out


def _patched_rows(
    last: tuple[dict[str, tuple[bytes, Any]], Rows], files: Mapping[str, tuple[bytes, Any]]
) -> Rows:
    """`_all_rows(files)` made from the last rows by redoing the clusters whose entries are
    another object than last time (unchanged placements keep their very rows mapping)."""
    before, rows = last
    changed = [c for c, found in files.items() if before.get(c, (None, None))[1] is not found[1]]
    changed += [c for c in before if c not in files]
    if not changed:
        return rows
    out = dict(rows)
    copied: set[str] = set()
    for cluster in changed:
        old: Mapping[str, Any] = before[cluster][1] if cluster in before else {}
        new: Mapping[str, Any] = files[cluster][1] if cluster in files else {}
        for key in {*old, *new}:
            if key not in copied:
                copied.add(key)
                out[key] = dict(out.get(key, {}))
            if key in new:
                out[key][cluster] = new[key]
            else:
                out[key].pop(cluster, None)
    for key in copied:
        if not out[key]:
            del out[key]
    return out


def _cluster_indexes(
    output: Mapping[str, bytes], clusters: Iterable[str] | None
) -> Iterator[tuple[str, str]]:
    """(cluster, path) of every `clusters/<cluster>/index.yaml` in `output`."""
    if clusters is not None:
        for cluster in clusters:
            path = cluster_index_path(cluster)
            if path in output:
                yield cluster, path
        return
    for path in output:
        if path.startswith("clusters/") and path.endswith("/index.yaml"):
            parts = path.split("/")
            if len(parts) == 3:
                yield parts[1], path

"""The rows of every placement in a new output tree's cluster indexes, for `state/prior/`.

`placement_rows(output, clusters)` gives placement key -> cluster -> ClusterIndex row, read from
the `clusters/<c>/index.yaml` files the pass just wrote (each derived once per distinct content,
`reconciler.priorparse`). A long-running hub writes the same index bytes object again for an
unchanged cluster, so only clusters whose index file is another object are looked at (found by
identity in C, `changed_keys`: 1,000 clusters cost no Python step each; with the assembly's
`since`, only the index paths it names are looked up at all), and only the placements
whose row on them is another object get new row mappings; the others keep last pass's mapping
objects, which lets `priorstate.prior_files` compare them by identity. Called by
`reconciler.state`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from itertools import repeat
from operator import contains
from typing import Any

from gitfleet.api.output import cluster_index_path
from reconciler.priorparse import derive_own
from reconciler.priorstate import READ_ERRORS, index_entries
from reconciler.stagememo import StageMemo, changed_keys

Rows = dict[str, dict[str, dict[str, Any]]]
"""placement key -> cluster -> ClusterIndex row."""
Since = tuple[Mapping[str, bytes], AbstractSet[str]] | None
"""An assembly's `since` (`reconciler.output.Since`): an earlier assembly, the paths it may
differ from it in."""
Entries = dict[str, Mapping[str, Any]]
"""cluster -> its index file's entries (placement key -> row)."""
_LAST_ROWS: StageMemo[tuple[dict[str, bytes | None], Entries, Rows]] = StageMemo()
"""The last `placement_rows`: each cluster's index file (the bytes object, None: absent), the
entries read from them, and the rows made of them."""
_LAST_SOURCE: StageMemo[tuple[Mapping[str, bytes], list[str]]] = StageMemo()
"""The assembly the last `placement_rows` was told its index files came from, and its clusters."""
_PATHS: StageMemo[list[str]] = StageMemo()
"""The index paths of the last clusters asked for (the assembly hands an equal list each pass)."""


def placement_rows(
    output: Mapping[str, bytes],
    clusters: Iterable[str] | None = None,
    assembly: tuple[Mapping[str, bytes], Since] | None = None,
) -> Rows | None:
    """placement key -> cluster -> ClusterIndex row of an output tree; None when a row cannot
    be recorded (an unreadable index, or an older-shape row that lists its objects).
    `clusters`: the clusters with an index file (else every path is looked at). A cluster
    whose index file is the very bytes object of the last call keeps its rows without a look
    (`_patched_rows`); the result is shared: read it, never change it. `assembly`: the
    assembly whose index files `output` has (no later file is an index file) and its `since`;
    when the last call named that `since`'s earlier assembly and the same clusters, only the
    index paths `since` names are looked up (`_looked_up`)."""
    names, paths = _indexes(output, clusters)
    last = _LAST_ROWS.last("")
    now = _looked_up(output, names, paths, assembly, last[1][0] if last is not None else None)
    if assembly is None:
        _LAST_SOURCE.drop("")
    else:
        _LAST_SOURCE.put("", (), (assembly[0], names))
    before, entries = (last[1][0], dict(last[1][1])) if last is not None else ({}, {})
    for cluster in changed_keys(before, now):
        data = now.get(cluster)
        if data is None:
            entries.pop(cluster, None)
            continue
        try:
            found = derive_own(output, cluster_index_path(cluster), "cluster-index", index_entries)
        except READ_ERRORS:
            _LAST_ROWS.drop("")
            return None
        if any(map(contains, found.values(), repeat("objects"))):  # in C: ~40 rows a file
            _LAST_ROWS.drop("")
            return None
        entries[cluster] = found
    out = _patched_rows(last[1][1], last[1][2], entries) if last is not None else _all_rows(entries)
    _LAST_ROWS.put("", (), (now, entries, out))
    return out


def _looked_up(
    output: Mapping[str, bytes],
    names: list[str],
    paths: list[str],
    assembly: tuple[Mapping[str, bytes], Since] | None,
    before: dict[str, bytes | None] | None,
) -> dict[str, bytes | None]:
    """cluster -> its index file in `output`: the last call's files patched on the index paths
    `since` names when the last call's assembly is `since`'s earlier one and its clusters are
    these (every other index file is then the very object of the last call's)."""
    source = _LAST_SOURCE.last("")
    since = assembly[1] if assembly is not None else None
    if before is None or source is None or since is None or source[1][0] is not since[0]:
        return dict(zip(names, map(output.get, paths), strict=True))
    if source[1][1] != names:
        return dict(zip(names, map(output.get, paths), strict=True))
    now = dict(before)
    for path in filter(since[1].__contains__, paths):  # in C: 1,000 paths, a small set
        now[path.split("/")[1]] = output.get(path)
    return now


def _indexes(
    output: Mapping[str, bytes], clusters: Iterable[str] | None
) -> tuple[list[str], list[str]]:
    """The clusters and their index paths (every `clusters/<c>/index.yaml` of `output` when
    `clusters` is None); the last paths again for an equal list of clusters."""
    if clusters is None:
        found = list(_cluster_indexes(output))
        return [c for c, _ in found], [p for _, p in found]
    names = list(clusters)
    paths = _PATHS.get("", (names,))
    if paths is None:
        paths = list(map(cluster_index_path, names))
        _PATHS.put("", (names,), paths)
    return names, paths


def _all_rows(entries: Entries) -> Rows:
    out: Rows = {}
    for cluster, found in entries.items():
        for key, row in found.items():
            out.setdefault(key, {})[cluster] = row
    return out


def _patched_rows(before: Entries, rows: Rows, entries: Entries) -> Rows:
    """`_all_rows(entries)` made from the last rows by redoing the clusters whose entries are
    another object than `before`'s, and there only the placements whose row is another object
    (unchanged placements keep their very rows mapping)."""
    changed = changed_keys(before, entries)
    if not changed:
        return rows
    out = dict(rows)
    copied: set[str] = set()
    for cluster in changed:
        old: Mapping[str, Any] = before.get(cluster, {})
        new: Mapping[str, Any] = entries.get(cluster, {})
        for key in changed_keys(old, new):
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


def _cluster_indexes(output: Mapping[str, bytes]) -> Iterator[tuple[str, str]]:
    """(cluster, path) of every `clusters/<cluster>/index.yaml` in `output`."""
    for path in output:
        if path.startswith("clusters/") and path.endswith("/index.yaml"):
            parts = path.split("/")
            if len(parts) == 3:
                yield parts[1], path

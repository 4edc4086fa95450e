"""Each cluster's index rows, joined from the placements' rows in the order they were laid out.

The assembly hands one mapping (cluster -> rows) per placement: held placements first, then the
live ones by key, then the failed ones. A long-running hub hands mostly the very mappings of the
last pass (`reconciler.assemble` reuses an unchanged placement's layout), so `joined_rows`
compares them by identity in C and joins again only the clusters that a changed mapping has
(before or now); the other clusters keep last pass's very rows tuple, which the index files
reuse without looking at it (`reconciler.indexfiles`). Many changed mappings: joined in full.
The mappings are never changed once handed over. Called by `assemble`. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain
from operator import is_
from typing import Any

from reconciler.stagememo import StageMemo

Rows = Mapping[str, Sequence[dict[str, Any]]]
"""One placement's rows: cluster -> its index rows there."""
Joined = dict[str, tuple[dict[str, Any], ...]]

MAX_CHANGED = 16
"""More changed mappings than this: joining every cluster is about as cheap."""

_LAST: StageMemo[Joined] = StageMemo()
"""The last join, with the mappings it was made from (in order)."""


def joined_rows(parts: Sequence[Rows]) -> Joined:
    """cluster -> the rows of every mapping in `parts` that has the cluster, in order (a
    cluster some mapping has with no rows is there, with none)."""
    now = tuple(parts)
    last = _LAST.last("rows")
    if last is not None and len(last[0]) == len(now):
        changed = [i for i, same in enumerate(map(is_, last[0], now)) if not same]
        if not changed:
            return last[1]
        if len(changed) <= MAX_CHANGED:
            joined = _rejoined(last[1], now, [last[0][i] for i in changed], changed)
            _LAST.put("rows", now, joined)
            return joined
    joined = _joined(now)
    _LAST.put("rows", now, joined)
    return joined


def _joined(parts: tuple[Rows, ...]) -> Joined:
    lists: dict[str, list[dict[str, Any]]] = {}
    for part in parts:
        for cluster, rows in part.items():
            found = lists.get(cluster)
            if found is None:
                lists[cluster] = list(rows)
            else:
                found += rows
    return {cluster: tuple(rows) for cluster, rows in lists.items()}


def _rejoined(
    last: Joined, parts: tuple[Rows, ...], olds: list[Rows], changed: list[int]
) -> Joined:
    """`last` with the clusters of the changed mappings (old or new) joined again."""
    clusters = {c for part in olds for c in part} | {c for i in changed for c in parts[i]}
    out = dict(last)
    for cluster in clusters:
        found = [part[cluster] for part in parts if cluster in part]
        if found:
            out[cluster] = tuple(chain.from_iterable(found))
        else:
            out.pop(cluster, None)
    return out

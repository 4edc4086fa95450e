"""Bytes per cluster of the `clusters/` files, summed from the parts they were laid out in
(one part per files unit: a placement's live or kept files, the index files) by patching last
pass's totals: a part that is the very object of the last pass costs nothing, a recomputed one
is taken out and added again. A pass that changed one placement so sums that placement's
clusters, not every (placement, cluster) pair of the fleet. Parts must not change once handed
over (the assembly hands over new dicts, or the very ones it reuses). Called by `assemble`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from reconciler.stagememo import StageMemo

Parts = dict[str, Mapping[str, int]]
"""Part name -> bytes per cluster."""
_LAST: StageMemo[tuple[Parts, dict[str, int]]] = StageMemo()
"""The parts of the last call and their totals."""


def summed(parts: Parts) -> dict[str, int]:
    """Bytes per cluster over every part (a cluster may be listed with 0 bytes). The result is
    the caller's to read, never to change."""
    last = _LAST.last("")
    if last is None:
        totals: dict[str, int] = {}
        _add(totals, parts.values())
    else:
        old_parts, before = last[1]
        totals = dict(before)
        gone = [old for name, old in old_parts.items() if parts.get(name) is not old]
        for old in gone:
            for cluster, size in old.items():
                totals[cluster] -= size
        _add(totals, [new for name, new in parts.items() if old_parts.get(name) is not new])
    _LAST.put("", (), (dict(parts), totals))
    return totals


def _add(totals: dict[str, int], parts: Iterable[Mapping[str, int]]) -> None:
    for part in parts:
        for cluster, size in part.items():
            totals[cluster] = totals.get(cluster, 0) + size

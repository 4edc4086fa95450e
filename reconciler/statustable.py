"""A placement's kept per-cluster status entries, patched in place where clusters changed
(`reconciler.statusentries` keeps one per placement from pass to pass).

With each cluster's entry (`statusentries._Made`) the table keeps what the status document
needs of all of them: the slot of each entry's emitted lines by the entry's id (`dump_yaml`'s
`pieces`) and how many entries have each condition summary (by the summary's id: one object per
distinct summary). `patch` replaces the entries of the clusters that changed and drops those
that left, and adjusts both in proportion to them: a placement of 1,000 clusters where one came
costs no step per cluster (the ids in `pieces` are those of entries the table holds, so none
is stale). The caller owns a table it took (it patches it in place): a pass that does not finish
leaves none behind. Called by `reconciler.statusentries`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

_SUMMARY, _ENTRY, _LINES = itemgetter(1), itemgetter(3), itemgetter(5)


class Table:
    """Cluster -> its kept entry, with the entries' line slots and summaries counted."""

    def __init__(self, names: Sequence[str], mades: Sequence[tuple[Any, ...]]) -> None:
        """The table of `mades`, the entries of `names` (a name twice: the last entry is
        kept by name, every entry counted and given its slot)."""
        self.made: dict[str, tuple[Any, ...]] = dict(zip(names, mades, strict=True))
        self.pieces: dict[int, list[Any]] = dict(
            zip(map(id, map(_ENTRY, mades)), map(_LINES, mades), strict=True)
        )
        summaries = list(map(_SUMMARY, mades))
        self._objects: dict[int, Any] = dict(zip(map(id, summaries), summaries, strict=True))
        self._counts: Counter[int] = Counter(map(id, summaries))
        self._held = list(mades) if len(self.made) != len(mades) else []
        """With a name twice, every entry counted (so that their ids stay theirs)."""

    def patch(self, gone: Iterable[str], new: Mapping[str, tuple[Any, ...]]) -> None:
        """The entries of `gone` dropped and those of `new` put in (each name once in the
        table: a table made from unique names)."""
        for name in (*gone, *new):
            old = self.made.pop(name, None)
            if old is not None:
                del self.pieces[id(old[3])]
                self._uncount(old[1])
        for name, made in new.items():
            self.made[name] = made
            self.pieces[id(made[3])] = made[5]
            self._counts[id(made[1])] += 1
            self._objects[id(made[1])] = made[1]

    def _uncount(self, summary: Any) -> None:
        left = self._counts[id(summary)] - 1
        if left:
            self._counts[id(summary)] = left
        else:
            del self._counts[id(summary)], self._objects[id(summary)]

    def summaries(self) -> Counter[Any]:
        """How many entries have each summary (summaries equal in value counted as one)."""
        out: Counter[Any] = Counter()
        for key, count in self._counts.items():
            out[self._objects[key]] += count
        return out

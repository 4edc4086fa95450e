"""Per-binding results of one placement's rollout carried over from the call before, by position.

A placement recomputed because one cluster joined or left, or one binding changed, hands the
rollout a bindings tuple that is last pass's tuple with one item inserted, removed or replaced:
the items before and after it are the very same objects, in the same places. `runs` finds those
two runs in C (pointer comparisons: the objects themselves are not read, so cold objects cost
nothing), and only the items between are looked at in Python:

- `Column`: a value per item made from the item alone (e.g. a binding's cluster name), as a list
  spliced from the last call's list for the same placement (the memo holds last call's items, so
  an identical object is never a new one at a reused address);
- `Rows`: a result per cluster made from a row of inputs alone (the binding and the facts it
  reads), reused where this call's row equals last call's row for the same cluster position;
  rows of the runs compare in C (each wrapped in a 1-tuple: identical first, then equal), the
  clusters between are matched by name. A row that must never be reused (its result read the clock) is stored as `NEVER`.

Results are reused only for equal inputs, so any alignment gives the from-scratch result; the
runs only make the common case cheap. Called by `reconciler.rollview`, `reconciler.rollmemo`,
`reconciler.rollsync`, `reconciler.rollclass` and `reconciler.rollstage`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from itertools import compress
from operator import eq, is_, not_
from typing import Any, Generic, TypeVar

from reconciler.stagememo import StageMemo, leading

T = TypeVar("T")

__all__ = ["NEVER", "Column", "Rows", "runs"]


class _Never:
    """A row that equals nothing (a result made from it is never reused)."""

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return 0


NEVER: Any = _Never()


def runs(
    old: Sequence[Any], new: Sequence[Any], same: Callable[[Any, Any], Any] = is_
) -> tuple[int, int]:
    """(head, tail): how many items from the start, then from the end of what is left, are
    `same` in `old` and `new` (identical by default), in C; head + tail <= both lengths."""
    n = min(len(old), len(new))
    head = leading(map(same, old, new), n)
    rest = n - head
    if not rest:
        return head, 0
    return head, leading(map(same, reversed(old), reversed(new)), rest)


class Column(Generic[T]):
    """Placement key -> the last items and `make(item)` of each, spliced from the last call."""

    def __init__(self, make: Callable[[Any], T] | None = None) -> None:
        self._make = make
        self._memo: StageMemo[tuple[tuple[Any, ...], list[T], object]] = StageMemo()

    def of(
        self,
        key: Hashable,
        items: tuple[Any, ...],
        context: object = None,
        make: Callable[[Any], T] | None = None,
    ) -> list[T]:
        """`[make(x) for x in items]` (the caller must not change the list). `make` (else the
        column's own) must give the same value for the same object while `context` is the
        very same object (a new context makes every value again)."""
        made = make if make is not None else self._make
        if made is None:
            raise TypeError("a Column without its own make needs one")
        last = self._memo.last(key)
        if last is None or last[1][2] is not context:
            values = list(map(made, items))
        else:
            old, was, _ = last[1]
            if old is items:
                return was
            head, tail = runs(old, items)
            values = was[:head]
            values += map(made, items[head : len(items) - tail])
            if tail:
                values += was[len(was) - tail :]
        self._memo.put(key, (), (items, values, context))
        return values


class _Entry(Generic[T]):
    __slots__ = ("names", "results", "rows", "where")

    def __init__(self, names: list[str], rows: list[Any], results: list[T]) -> None:
        self.names, self.rows, self.results = names, rows, results
        self.where: dict[str, int] | None = None

    def at(self, cluster: str) -> int | None:
        if self.where is None:
            self.where = dict(zip(self.names, range(len(self.names)), strict=True))
        return self.where.get(cluster)


class Rows(Generic[T]):
    """Placement key -> last call's cluster names, rows and results (lists by position)."""

    def __init__(self) -> None:
        self._memo: StageMemo[_Entry[T]] = StageMemo()

    def lookup(self, key: Hashable, names: Sequence[str], rows: Sequence[Any]) -> list[T | None]:
        """For each cluster of `names`, last call's result when its row equals `rows[i]`."""
        last = self._memo.last(key)
        if last is None:
            return [None] * len(names)
        was = last[1]
        head, tail = runs(was.names, names)  # the names of the same bindings are the same objects
        n, m = len(names), len(was.names)
        out: list[T | None] = list(was.results[:head])
        for i in compress(range(head), map(not_, map(eq, zip(was.rows[:head]), zip(rows[:head])))):
            out[i] = None
        between = dict(zip(was.names[head : m - tail], range(head, m - tail), strict=True))
        for i in range(head, n - tail):
            j = between.get(names[i])
            old = was.rows[j] if j is not None else NEVER
            out.append(was.results[j] if j is not None and _same(old, rows[i]) else None)
        if tail:
            out += was.results[m - tail :]
            misses = map(not_, map(eq, zip(was.rows[m - tail :]), zip(rows[n - tail :])))
            for i in compress(range(n - tail, n), misses):
                out[i] = None
        return out

    def end(
        self, key: Hashable, names: Sequence[str], rows: Sequence[Any], results: Sequence[T]
    ) -> None:
        """Remember this call's rows and results as the placement's entries."""
        if not len(names) == len(rows) == len(results):
            raise ValueError("names, rows and results differ in length")
        self._memo.put(key, (), _Entry(list(names), list(rows), list(results)))

    def peek(self, key: Hashable, cluster: str, row: Any) -> T | None:
        """Last call's result for one cluster when its row equals `row` (outside a round)."""
        last = self._memo.last(key)
        if last is None:
            return None
        j = last[1].at(cluster)
        if j is None or not _same(last[1].rows[j], row):
            return None
        return last[1].results[j]


def _same(old: Any, new: Any) -> bool:
    return old is not NEVER and (old is new or bool(old == new))

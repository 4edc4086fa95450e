"""Per-cluster results of one placement's rollout step, looked up in bulk.

The rollout stage observes, hashes and views every binding of a placement recomputed because one
cluster joined or left (`rollview`). Each result depends on one row of inputs (the binding, and
the facts it reads for that cluster); `Cells` keeps last pass's rows and results per placement
and hands back, for this pass's rows, the result of every row equal to last pass's (the very
objects mostly: a tuple of identical objects compares without calling `__eq__`), so only the
changed clusters are computed again. A lookup takes the whole placement at once (a list in,
a list out) instead of a call per cluster. A round (`lookup` ... `end`) replaces the placement's
entries with this pass's rows, so clusters that left drop out; a result that must not be reused
(it read the pass's clock) is stored under a row that never compares equal. Called by
`reconciler.rollview`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Generic, TypeVar

from reconciler.stagememo import StageMemo

T = TypeVar("T")


class _Never:
    """A row that equals nothing (a result made from it is never reused)."""

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return 0


NEVER: Any = _Never()


class Cells(Generic[T]):
    """Placement key -> cluster -> (the row a result was made from, the result)."""

    def __init__(self) -> None:
        self._memo: StageMemo[dict[str, tuple[Any, T]]] = StageMemo()

    def lookup(self, key: Hashable, names: Sequence[str], rows: Sequence[Any]) -> list[T | None]:
        """For each cluster of `names`, last pass's result when its row equals `rows[i]`."""
        last = self._memo.last(key)
        if last is None:
            return [None] * len(names)
        olds = map(last[1].get, names)
        return [
            None if o is None or (o[0] is not r and o[0] != r) else o[1]
            for o, r in zip(olds, rows, strict=False)
        ]

    def end(
        self, key: Hashable, names: Sequence[str], rows: Sequence[Any], results: Sequence[T]
    ) -> None:
        """Remember this pass's rows and results as the placement's entries."""
        self._memo.put(key, (), dict(zip(names, zip(rows, results, strict=True), strict=True)))

    def peek(self, key: Hashable, cluster: str, row: Any) -> T | None:
        """Last pass's result for one cluster when its row equals `row` (outside a round)."""
        last = self._memo.last(key)
        found = last[1].get(cluster) if last is not None else None
        if found is None or (found[0] is not row and found[0] != row):
            return None
        return found[1]

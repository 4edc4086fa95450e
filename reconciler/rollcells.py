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
    """Placement key -> (cluster -> the row its result was made from, cluster -> the result)."""

    def __init__(self) -> None:
        self._memo: StageMemo[tuple[dict[str, Any], dict[str, T]]] = StageMemo()

    def lookup(self, key: Hashable, names: Sequence[str], rows: Sequence[Any]) -> list[T | None]:
        """For each cluster of `names`, last pass's result when its row equals `rows[i]`."""
        last = self._memo.last(key)
        if last is None:
            return [None] * len(names)
        old_rows, old_results = last[1]
        olds = map(old_rows.get, names)
        return [
            None if o is None or o is NEVER or (o is not r and o != r) else old_results[c]
            for c, o, r in zip(names, olds, rows, strict=False)
        ]

    def end(
        self, key: Hashable, names: Sequence[str], rows: Sequence[Any], results: Sequence[T]
    ) -> None:
        """Remember this pass's rows and results as the placement's entries."""
        entries = (dict(zip(names, rows, strict=True)), dict(zip(names, results, strict=True)))
        self._memo.put(key, (), entries)

    def peek(self, key: Hashable, cluster: str, row: Any) -> T | None:
        """Last pass's result for one cluster when its row equals `row` (outside a round)."""
        last = self._memo.last(key)
        if last is None:
            return None
        found = last[1][0].get(cluster)
        if found is None or found is NEVER or (found is not row and found != row):
            return None
        return last[1][1][cluster]

"""Per-cluster reuse inside one placement's rollout, so that a placement recomputed because one
cluster was added or removed, or one binding changed, costs the rollout only what changed.

A `ClusterMemo` keeps, per placement key (a `reconciler.stagememo` StageMemo, cleared with every
other stage memo), one entry per cluster: the object a result was made from (a binding, a
manifests tuple) - compared by identity, which is safe because the entry holds it -, the other
facts it read for that cluster - compared by value -, and the result. A round (`start` ... `end`)
rebuilds the placement's entries from the ones it looked up or made, so clusters that left the
placement drop out. The rollout stage's long-running inputs are the very same objects from pass
to pass (`priorparse.remember`, `state.canonical_state`, `manifestmemo`), so a hit is a few
identity checks.

Callers never remember a result that read the pass's clock (`rollview.observe` keeps only
results whose conditions are all the binding's own objects, `statusentries.kept_times`'s rule):
a remembered result is then a pure function of its key and holds at any later time.
Called by `reconciler.rollview`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Generic, TypeVar

from reconciler.stagememo import StageMemo

T = TypeVar("T")
Entry = tuple[object, Any, T]
"""(the object the result was made from, the facts it read, the result)."""


class ClusterRound(Generic[T]):
    """One placement's lookups in one pass; `end` makes them the placement's entries."""

    def __init__(self, memo: StageMemo[dict[str, Entry[T]]], key: Hashable) -> None:
        last = memo.last(key)
        self._memo, self._key = memo, key
        self._last: dict[str, Entry[T]] = last[1] if last is not None else {}
        self._made: dict[str, Entry[T]] = {}

    def get(self, cluster: str, source: object, facts: Any) -> T | None:
        """The result made last time from the very `source` and equal `facts` (kept for the
        next pass too), else None."""
        found = self._last.get(cluster)
        if found is None or found[0] is not source or found[1] != facts:
            return None
        self._made[cluster] = found
        return found[2]

    def keep(self, cluster: str, source: object, facts: Any, result: T) -> None:
        """Remember `result`, made from `source` and `facts` only."""
        self._made[cluster] = (source, facts, result)

    def end(self) -> None:
        """The entries of this round replace the placement's (clusters not looked up go)."""
        self._memo.put(self._key, (), self._made)


class ClusterMemo(Generic[T]):
    """Per placement key, per cluster: the last result with what it was made from."""

    def __init__(self) -> None:
        self._memo: StageMemo[dict[str, Entry[T]]] = StageMemo()

    def start(self, key: Hashable) -> ClusterRound[T]:
        return ClusterRound(self._memo, key)

    def peek(self, key: Hashable, cluster: str, source: object, facts: Any) -> T | None:
        """A lookup outside a round (it does not carry the entry over)."""
        last = self._memo.last(key)
        found = last[1].get(cluster) if last is not None else None
        if found is None or found[0] is not source or found[1] != facts:
            return None
        return found[2]

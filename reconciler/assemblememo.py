"""Values the assembly remembers for the current pass and the two before (`ThreeRounds`).

A placement whose override flips between two values each pass (or whose rollout moves half its
clusters one pass and the rest the next) lays a cluster out from the same content every other
pass, while in between that cluster keeps its previous row: a memo of the last two passes
(`stagememo.RoundMemo`) has always just dropped it. Called by `layoutcells` (manifest checks
by content) and `indexfiles` (object identities of an index row's object list).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

from reconciler.stagememo import StageMemo

T = TypeVar("T")


class ThreeRounds(Generic[T]):
    """key -> value, for the current round and the two before (`next_round()` once a pass):
    what three passes that used it did not use is dropped (a pass that used nothing is no
    round). Cleared with the other memos
    (`stagememo.forget_stages`: its generations live in a StageMemo)."""

    def __init__(self) -> None:
        self._gens: StageMemo[tuple[dict[Hashable, T], ...]] = StageMemo()

    def _rounds(self) -> tuple[dict[Hashable, T], ...]:
        found = self._gens.last("")
        if found is None:
            rounds: tuple[dict[Hashable, T], ...] = ({}, {}, {})
            self._gens.put("", (), rounds)
            return rounds
        return found[1]

    def get(self, key: Hashable) -> T | None:
        """The value for `key` of this round or the two before (carried into this round)."""
        now, last, older = self._rounds()
        found = now.get(key)
        if found is None:
            found = last.get(key)
            if found is None:
                found = older.get(key)
            if found is not None:
                now[key] = found
        return found

    def put(self, key: Hashable, value: T) -> None:
        self._rounds()[0][key] = value

    def next_round(self) -> None:
        now, last, _ = self._rounds()
        if now:  # else the round used nothing: no round (`stagememo.IdentityMemo`)
            self._gens.put("", (), ({}, now, last))

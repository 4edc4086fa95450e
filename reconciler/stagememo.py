"""One remembered result per placement for a stage of the pass, reused while the stage's inputs
compare equal to the ones it was computed from.

A long-running hub hands a stage mostly the very same objects pass after pass: `placememo`
reuses unchanged placements' plans (their manifests, decisions and selections), the state files
keep their first-parsed object (`priorparse.remember`), and `state.canonical_state` gives equal
placement states one object. Comparing a stage's inputs as a tuple is then mostly identity checks
(Python's containers compare identical elements without calling `__eq__`); unequal inputs only
cost the stage's own work. Process-wide and bounded, like the other caches of the pass; `forget`
clears every StageMemo (tests compare passes with and without reuse). `IdentityMemo` remembers
values derived from objects for the last two passes only. Called by `statusdocs`,
`statusentries`, `clusterstatus`, `state`, `assemble`, `layoutcells`, `indexfiles`, `priorstate`,
`priorindex`, `rollmemo`, `rollview`, `rollbind`, `placememo`, `manifestmemo`, `sealing` and
`select`.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

T = TypeVar("T")
MAX_KEYS = 50_000
"""Keys a memo remembers; beyond it the memo starts afresh."""

_memos: list[StageMemo[Any] | IdentityMemo[Any]] = []
_lock = threading.Lock()


class StageMemo(Generic[T]):
    """key -> (inputs, result) of the last computation for that key."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, tuple[tuple[Any, ...], T]] = {}
        with _lock:
            _memos.append(self)

    def get(self, key: Hashable, inputs: tuple[Any, ...]) -> T | None:
        """The result remembered for `key` when its inputs equal `inputs`, else None."""
        found = self._entries.get(key)
        if found is None or found[0] != inputs:
            return None
        return found[1]

    def last(self, key: Hashable) -> tuple[tuple[Any, ...], T] | None:
        """The inputs and result last remembered for `key`, whatever they were (a stage that
        can reuse parts of its last result when only some inputs changed)."""
        return self._entries.get(key)

    def put(self, key: Hashable, inputs: tuple[Any, ...], result: T) -> None:
        with _lock:
            if len(self._entries) >= MAX_KEYS:
                self._entries.clear()
            self._entries[key] = (inputs, result)

    def drop(self, key: Hashable) -> None:
        with _lock:
            self._entries.pop(key, None)

    def clear(self) -> None:
        with _lock:
            self._entries.clear()


def forget_stages() -> None:
    """Clear every StageMemo and IdentityMemo."""
    for memo in list(_memos):
        memo.clear()


class IdentityMemo(Generic[T]):
    """Values derived from objects, remembered by the object's identity for the current round
    and the one before (`next_round()` starts a round, once per pass): what the last two passes
    did not use is dropped, so the memo never holds more than the objects of two passes."""

    def __init__(self) -> None:
        self._now: dict[int, tuple[Any, T]] = {}
        self._last: dict[int, tuple[Any, T]] = {}
        with _lock:
            _memos.append(self)

    def get(self, obj: Any) -> T | None:
        hit = self._now.get(id(obj))
        if hit is None:
            hit = self._last.get(id(obj))
            if hit is not None and hit[0] is obj:
                self._now[id(obj)] = hit
        return hit[1] if hit is not None and hit[0] is obj else None

    def put(self, obj: Any, value: T) -> None:
        self._now[id(obj)] = (obj, value)

    def next_round(self) -> None:
        self._last, self._now = self._now, {}

    def clear(self) -> None:
        self._last, self._now = {}, {}

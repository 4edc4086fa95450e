"""One remembered result per placement for a stage of the pass, reused while the stage's inputs
compare equal to the ones it was computed from.

A long-running hub hands a stage mostly the very same objects pass after pass: `placememo`
reuses unchanged placements' plans (their manifests, decisions and selections), the state files
keep their first-parsed object (`priorparse.remember`), and `state.canonical_state` gives equal
placement states one object. Comparing a stage's inputs as a tuple is then mostly identity checks
(Python's containers compare identical elements without calling `__eq__`); unequal inputs only
cost the stage's own work. Process-wide and bounded, like the other caches of the pass; `forget`
clears every StageMemo (tests compare passes with and without reuse). `IdentityMemo` remembers
values derived from objects for the last two passes that used it only, `RoundMemo` values by a
key that determines them likewise. `ClusterMemo` keeps, per placement, one result per
cluster with the object it was made from (compared by identity, safe because the entry holds it)
and the other facts it read (compared by value): a placement recomputed because one cluster was
added, removed or changed redoes that cluster's part only; a round (`start` ... `end`) rebuilds
the placement's entries from the ones it looked up or made, so clusters that left drop out (the
rollout stage looks a placement up in bulk instead: `reconciler.rollsplice`). `changed_keys`
diffs two mappings by identity in C, so a placement's 1,000 rows cost no Python step each when
one changed (`leading`: how long a run of identical items is, found in C with no list built).
`single_pass()` makes every StageMemo keep nothing for its duration, for a process that runs one
pass and exits (`gitfleet validate`, `render`, `explain`): no later pass would read what they
keep, and what they keep outlives the placements it came from (fleet-1k: peak RSS 816 -> 576
MiB, the pass's time unchanged). A stage never reads back in a pass what it put in that pass
(the golden fleets render byte for byte the same under `single_pass`, `tests/golden`).
Callers never remember a result that read the pass's clock, unless they key it by the times it
wrote (placement status and its entries: the next pass reads those very conditions
back as its prior). Called by `statusdocs`, `statusrows`, `statusentries`,
`clusterstatus`, `state`, `assemble`, `layoutcells`, `indexfiles`, `priorstate`, `priorindex`,
`rollmemo`, `rollfacts`, `rollview`, `rollsplice`, `placememo`, `manifestmemo`, `sealing`, `select`,
`yamlparts`, `keptgroups`, `priorsection`, `publish`, `publishread`, `shardpatch`, `ownprior`
and `statesnaps`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from itertools import islice
from operator import and_, eq, indexOf, is_
from typing import Any, ClassVar, Generic, TypeVar

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
MAX_KEYS = 50_000
"""Keys a memo remembers; beyond it the memo starts afresh."""


def unheld(obj: object) -> bool:
    """Nothing holds `obj` but one name of the caller (who may then change it in place): its
    references are that name, this parameter and `getrefcount`'s argument."""
    return sys.getrefcount(obj) <= 3


_memos: list[StageMemo[Any] | IdentityMemo[Any] | RoundMemo[Any]] = []
_lock = threading.Lock()


class StageMemo(Generic[T]):
    """key -> (inputs, result) of the last computation for that key."""

    keeping: ClassVar[bool] = True
    """Whether `put` remembers (False under `single_pass`)."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, tuple[tuple[Any, ...], T]] = {}
        with _lock:
            _memos.append(self)

    def get(self, key: Hashable, inputs: tuple[Any, ...]) -> T | None:
        """The result remembered for `key` when its inputs equal `inputs`, else None (on a hit
        `inputs` replace the equal ones remembered)."""
        found = self._entries.get(key)
        if found is None:
            return None
        if found[0] is not inputs:
            if found[0] != inputs:
                return None
            # Equal inputs made of other objects: keep these (the caller's, so the newest), and
            # the next pass compares its mostly identical objects by identity, not by value.
            self._entries[key] = (inputs, found[1])
        return found[1]

    def last(self, key: Hashable) -> tuple[tuple[Any, ...], T] | None:
        """The inputs and result last remembered for `key`, whatever they were (a stage that
        can reuse parts of its last result when only some inputs changed)."""
        return self._entries.get(key)

    def put(self, key: Hashable, inputs: tuple[Any, ...], result: T) -> None:
        if not StageMemo.keeping:
            return
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


def changed_keys(old: Mapping[K, Any], new: Mapping[K, Any]) -> set[K]:
    """The keys whose value in `new` is another object than in `old`, or that only one of them
    has. The items both have in the same place at the start and at the end (same key, the
    very value) are skipped in C (`_same_run`); only the keys between are looked at, so a
    placement's 1,000 rows with one inserted, removed or replaced cost no Python step each."""
    keys, new_keys = list(old), list(new)
    values, new_values = list(old.values()), list(new.values())
    head = _same_run(keys, new_keys, values, new_values, min(len(keys), len(new_keys)))
    tail = _same_run(  # from the end, before the head (keys are unique: the runs never meet)
        reversed(keys),
        reversed(new_keys),
        reversed(values),
        reversed(new_values),
        min(len(keys), len(new_keys)) - head,
    )
    between = {*keys[head : len(keys) - tail], *new_keys[head : len(new_keys) - tail]}
    missing = object()
    return {k for k in between if old.get(k, missing) is not new.get(k, missing)}


def _same_run(
    keys: Iterable[Any],
    new_keys: Iterable[Any],
    values: Iterable[Any],
    new_values: Iterable[Any],
    limit: int,
) -> int:
    """How many items from the start have equal keys and the very same values, at most
    `limit` (at most as many as each holds; in C)."""
    return leading(map(and_, map(eq, keys, new_keys), map(is_, values, new_values)), limit)


def leading(flags: Iterable[Any], limit: int) -> int:
    """How many of the first `limit` `flags` come before the first false one; `limit` when
    none is (the caller's count of them: at most as many as there are). In C, stopping at the
    first false one or at `limit`, and building no list: the runs of a placement's 1,000
    identical items are scanned once each (`changed_keys`, `rollsplice.runs`,
    `shardpatch.changed_run`, `publishread.same_run`)."""
    try:
        return indexOf(islice(flags, limit), False)
    except ValueError:
        return limit


def forget_stages() -> None:
    """Clear every StageMemo and IdentityMemo."""
    for memo in list(_memos):
        memo.clear()


@contextmanager
def single_pass() -> Iterator[None]:
    """For its duration StageMemos remember nothing (and hold nothing from before): the
    process runs one pass, which no later pass follows. What it found comes back after it
    (a `single_pass` inside another keeps nothing either)."""
    forget_stages()
    keeping, StageMemo.keeping = StageMemo.keeping, False
    try:
        yield
    finally:
        StageMemo.keeping = keeping


class IdentityMemo(Generic[T]):
    """Values derived from objects, remembered by the object's identity for the current round
    and the one before (`next_round()` starts a round, once per pass): what the last two passes
    that used the memo did not use is dropped, so the memo never holds more than the objects of
    two passes. A pass that used nothing of it (its callers took their results from a memo
    above, as the quiet passes after a change do) is no round: a placement recomputed after
    some quiet passes finds the values of its unchanged objects still here."""

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
        if self._now:  # else the round used nothing: no round
            self._last, self._now = self._now, {}

    def clear(self) -> None:
        self._last, self._now = {}, {}


class RoundMemo(Generic[T]):
    """Values by a key that determines them, remembered for the current round and the one
    before (`next_round()` once per pass; a pass that used nothing is no round), like
    `IdentityMemo` but by value."""

    def __init__(self) -> None:
        self._now: dict[Hashable, T] = {}
        self._last: dict[Hashable, T] = {}
        with _lock:
            _memos.append(self)

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        """The value for `key`, made by `make()` when the last two rounds did not have it."""
        try:
            return self._now[key]
        except KeyError:
            value = self._last[key] if key in self._last else make()
            self._now[key] = value
            return value

    def next_round(self) -> None:
        if self._now:  # else the round used nothing: no round
            self._last, self._now = self._now, {}

    def clear(self) -> None:
        self._last, self._now = {}, {}


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

    @property
    def known(self) -> bool:
        """Whether the placement had entries (a round before this one kept results for it)."""
        return bool(self._last)

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

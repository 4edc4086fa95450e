"""A placement's per-cluster list cut into shards (`gitfleet.api.shards.split`), patched from
the last cut where the list changed instead of hashing every name again.

A placement bound to 1,000 clusters gains one cluster: its bindings, its prior record's cluster
names and entries are the very objects of last pass but for that cluster. `changed_run` finds
the differing middle of two sequences by identity, in C (no element is read), and
`SplitKeeper.split` redoes only the shards of the names in that middle: the other shards are
last pass's tuples, the very objects, so their files are kept by identity. It needs the names
unique and in ascending order (then each shard is in name order, as `split` gives it); the
middle's order is checked against its neighbours, a list made afresh is checked whole, and an
unordered list is split whole every time. `split_mapping` does the same for a mapping (name ->
value, values compared by identity, `stagememo.changed_keys`), its shards as dicts in name order.
`changed_bindings` gives the clusters whose binding may have changed the same way (a dict of
every binding only when the bindings are out of order or the middle is long). Called by
`reconciler.stateshards`, `priorshards`, `priorsection` and `priorindex`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from operator import attrgetter, is_, lt
from typing import Any, Generic, TypeVar

from gitfleet.api.shards import shard_of, split
from reconciler.stagememo import StageMemo, changed_keys, leading

T = TypeVar("T")
V = TypeVar("V")
MAX_CHANGED = 0.25
"""Above this share of a list in its changed middle, the list is split whole."""


def _same_prefix(old: Iterable[Any], new: Iterable[Any], limit: int) -> int:
    """How many items from the start are the very same objects (at most `limit`, which both
    hold at least; in C)."""
    return leading(map(is_, old, new), limit)


def changed_run(old: Sequence[Any], new: Sequence[Any]) -> tuple[int, int, int]:
    """(start, old end, new end): `old[start:old_end]` became `new[start:new_end]`, every item
    before and after being the very same object in both (compared by identity, in C; the
    last call's answer again for the very same two tuples, as `SplitKeeper.in_order` then
    `split` ask)."""
    last = _LAST_RUN[0]
    if last[0] is old and last[1] is new:
        return last[2]
    start = _same_prefix(old, new, min(len(old), len(new)))
    limit = min(len(old), len(new)) - start
    tail = _same_prefix(reversed(old), reversed(new), limit) if limit else 0
    found = (start, len(old) - tail, len(new) - tail)
    if type(old) is tuple and type(new) is tuple:  # never changed in place
        _LAST_RUN[0] = (old, new, found)
    return found


_LAST_RUN: list[tuple[Sequence[Any], Sequence[Any], tuple[int, int, int]]] = [((), (), (0, 0, 0))]
"""The last `changed_run` (both sequences held, so neither is another's by id)."""


def ordered(names: Sequence[str]) -> bool:
    """Each name greater than the one before (in C)."""
    return all(map(lt, names, islice(names, 1, None)))


_Parts = list[tuple[Any, ...]]


class SplitKeeper(Generic[T]):
    """Each (placement, list)'s last list and shards (one memo entry per key)."""

    def __init__(self, name: Callable[[T], str]) -> None:
        self._name = name
        self._last: StageMemo[tuple[tuple[T, ...], int, _Parts]] = StageMemo()

    def split(self, key: Any, items: Sequence[T], count: int) -> list[tuple[T, ...]]:
        """`split(items, count, name)` as tuples; the shards the changed middle of `items`
        does not reach are last call's tuples (`items` in name order, each name once)."""
        last = self._last.last(key)
        parts = None
        if last is not None and last[1][1] == count:
            parts = self._patched(last[1][0], last[1][2], items, count)
        if parts is None:
            parts = [tuple(part) for part in split(items, count, self._name)]
            if not ordered(list(map(self._name, items))):
                self._last.drop(key)
                return parts
        self._last.put(key, (), (tuple(items), count, parts))
        return parts

    def in_order(self, key: Any, items: Sequence[T]) -> bool:
        """Whether the names of `items` ascend (each once): only the changed middle is looked
        at when the last list split for `key` was (it was in order)."""
        last = self._last.last(key)
        if last is not None:
            start, _, new_end = changed_run(last[1][0], items)
            if new_end - start <= MAX_CHANGED * len(items) + 8:
                lo, hi = max(start - 1, 0), min(new_end + 1, len(items))
                return ordered(list(map(self._name, islice(items, lo, hi))))
        return ordered(list(map(self._name, items)))

    def _patched(
        self, before: Sequence[T], parts: _Parts, items: Sequence[T], count: int
    ) -> _Parts | None:
        """`parts` (of `before`) redone for the names in the changed middle; None when it is
        too long or out of order."""
        found = ordered_change(before, items, self._name)
        if found is None:
            return None
        return _patched_parts(parts, found[0], found[1], count, self._name)


def ordered_change(
    before: Sequence[T], items: Sequence[T], name: Callable[[T], str]
) -> tuple[set[str], dict[str, T]] | None:
    """With `before` in strict name order: the names in the middle where `items` differ from
    it (`changed_run`, both sides) and the new middle by name, when `items` are in strict name
    order too (the middle is checked against its neighbours); None when the middle is longer
    than `MAX_CHANGED` of the list or out of order."""
    start, old_end, new_end = changed_run(before, items)
    if old_end - start + new_end - start > MAX_CHANGED * len(items) + 8:
        return None
    middle = {name(item): item for item in islice(items, start, new_end)}
    around = list(middle)
    if start:
        around.insert(0, name(items[start - 1]))
    if new_end < len(items):
        around.append(name(items[new_end]))
    if len(middle) != new_end - start or not ordered(around):
        return None
    return {*map(name, islice(before, start, old_end)), *middle}, middle


def _patched_parts(
    parts: _Parts,
    names: set[str],
    now: Mapping[str, Any],
    count: int,
    name: Callable[[Any], str],
) -> _Parts:
    """`parts` with each of `names` taken out of its shard and put back as `now` has it."""
    by_shard: dict[int, list[str]] = {}
    for changed in names:
        by_shard.setdefault(shard_of(changed, count), []).append(changed)
    out = list(parts)
    for number, moved in by_shard.items():
        gone = set(moved)
        kept = [item for item in parts[number] if name(item) not in gone]
        kept += [now[n] for n in moved if n in now]
        out[number] = tuple(sorted(kept, key=name))
    return out


class MappingSplit(Generic[V]):
    """Each key's last mapping and its shards (name -> value dicts in name order)."""

    def __init__(self) -> None:
        self._last: StageMemo[tuple[Mapping[str, V], int, list[dict[str, V]]]] = StageMemo()

    def split(
        self, key: Any, mapping: Mapping[str, V], count: int, skip: Callable[[str], bool]
    ) -> list[dict[str, V]]:
        """The names of `mapping` but those `skip` says, cut into `count` shards, each a dict
        in name order; redone only for the shards of the names whose value is another object
        than last call's (`changed_keys`). Shared: read them, never change them."""
        last = self._last.last(key)
        made = None
        if last is not None and last[1][1] == count:
            made = _patched_dicts(last[1][0], last[1][2], mapping, count, skip)
        if made is None:
            names = sorted(n for n in mapping if not skip(n))
            made = [{n: mapping[n] for n in part} for part in split(names, count, str)]
        self._last.put(key, (), (mapping, count, made))
        return made


def _patched_dicts(
    before: Mapping[str, V],
    parts: list[dict[str, V]],
    mapping: Mapping[str, V],
    count: int,
    skip: Callable[[str], bool],
) -> list[dict[str, V]] | None:
    """`parts` (of `before`) redone for the shards of the changed names; None: too many."""
    if before is mapping:
        return parts
    changed = [n for n in changed_keys(before, mapping) if not skip(n)]
    if len(changed) > MAX_CHANGED * len(mapping) + 8:
        return None
    by_shard: dict[int, list[str]] = {}
    for name in changed:
        by_shard.setdefault(shard_of(name, count), []).append(name)
    out = list(parts)
    for number, names in by_shard.items():
        part = dict(parts[number])
        for name in names:
            part.pop(name, None)
            if name in mapping:
                part[name] = mapping[name]
        out[number] = {n: part[n] for n in sorted(part)}
    return out


_CLUSTER = attrgetter("cluster")


@dataclass(frozen=True)
class Keyed:
    """A placement's bindings with what is known of them: whether they are one a cluster in
    cluster order, and their dict by cluster when one was made (else None)."""

    bindings: tuple[Any, ...]
    ordered: bool
    by_cluster: dict[str, Any] | None

    def lookup(self) -> Mapping[str, Any]:
        """The bindings by cluster (`OrderedBindings` when no dict was made: they are in
        order)."""
        return self.by_cluster if self.by_cluster is not None else OrderedBindings(self.bindings)


def keyed(bindings: tuple[Any, ...]) -> Keyed:
    """`bindings` with their dict by cluster (a later binding of a cluster wins)."""
    by_cluster = dict(zip(map(_CLUSTER, bindings), bindings, strict=True))
    return Keyed(
        bindings, len(by_cluster) == len(bindings) and ordered(list(by_cluster)), by_cluster
    )


def changed_bindings(before: Keyed, bindings: tuple[Any, ...]) -> tuple[set[str], Keyed]:
    """The clusters whose binding in `bindings` may be another object than in `before` (a few
    more from the changed middle), and `bindings` keyed: only the middle is looked at when both
    are in order and it is short (`ordered_change`), else every cluster (`changed_keys`)."""
    if bindings is before.bindings:
        return set(), before
    if before.ordered:
        moved = ordered_change(before.bindings, bindings, _CLUSTER)
        if moved is not None:
            return moved[0], Keyed(bindings, True, None)
    old = before.by_cluster
    if old is None:
        old = dict(zip(map(_CLUSTER, before.bindings), before.bindings, strict=True))
    now = keyed(bindings)
    assert now.by_cluster is not None
    return changed_keys(old, now.by_cluster), now


def names_changed(old: Sequence[str], new: Sequence[str]) -> set[str]:
    """The names in one sequence and not the other (and maybe a few in both, from the middle
    where they differ by identity, `changed_run`)."""
    start, old_end, new_end = changed_run(old, new)
    if old_end - start + new_end - start <= MAX_CHANGED * len(new) + 8:
        return {*islice(old, start, old_end), *islice(new, start, new_end)}
    return set(old).symmetric_difference(new)


class OrderedBindings(Mapping[str, Any]):
    """Bindings one a cluster in cluster order, by cluster (bisect: nothing is built)."""

    def __init__(self, bindings: Sequence[Any]) -> None:
        self._bindings = bindings

    def __getitem__(self, cluster: str) -> Any:
        at = bisect_left(self._bindings, cluster, key=_CLUSTER)
        if at < len(self._bindings) and self._bindings[at].cluster == cluster:
            return self._bindings[at]
        raise KeyError(cluster)

    def __iter__(self) -> Iterator[str]:
        return map(_CLUSTER, self._bindings)

    def __len__(self) -> int:
        return len(self._bindings)

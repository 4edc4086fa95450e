"""Shards patched from the last cut (`reconciler.shardpatch`): after any sequence of edits
(a name added, removed or replaced, many at once, the order broken) the shards equal
`gitfleet.api.shards.split` of the whole list, a shard no changed name reaches is the very
last tuple, and the changed clusters and lookups equal the ones a dict of every binding gives."""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import pairwise

import pytest

from gitfleet.api.shards import shard_of, split
from reconciler.shardpatch import (
    MappingSplit,
    SplitKeeper,
    changed_bindings,
    changed_run,
    keyed,
    names_changed,
    ordered_change,
)
from reconciler.stagememo import changed_keys

NAMES = [f"member-{i:04d}" for i in range(600)]


def one_a_cluster_in_order(items: tuple[B, ...]) -> bool:
    return all(a.cluster < b.cluster for a, b in pairwise(items))


@dataclass(frozen=True, eq=False)
class B:
    """A binding: its cluster and a version (compared by identity, as the pass's are)."""

    cluster: str
    version: int = 0


def _cluster(b: B) -> str:
    return b.cluster


def _edit(rng: random.Random, items: list[B], kind: str) -> list[B]:
    out = list(items)
    if kind == "add":
        taken = {b.cluster for b in out}
        name = rng.choice([n for n in NAMES if n not in taken])
        out.append(B(name))
        out.sort(key=_cluster)
    elif kind == "remove":
        del out[rng.randrange(len(out))]
    elif kind == "replace":
        at = rng.randrange(len(out))
        out[at] = B(out[at].cluster, out[at].version + 1)
    elif kind == "many":
        out = [B(b.cluster, b.version + 1) if rng.random() < 0.5 else b for b in out]
    elif kind == "swap":  # out of order: the keeper splits in the order given
        at = rng.randrange(len(out) - 1)
        out[at], out[at + 1] = out[at + 1], out[at]
    elif kind == "duplicate":
        at = rng.randrange(len(out))
        out.insert(at, B(out[at].cluster, 9))
    elif kind == "resort":
        out.sort(key=_cluster)
        out = list({b.cluster: b for b in out}.values())
    return out


KINDS = ["add", "remove", "replace", "replace", "many", "swap", "duplicate", "resort", "add"]


@pytest.mark.parametrize("seed", range(12))
def test_split_keeper_equals_a_whole_split(seed: int) -> None:
    rng = random.Random(seed)
    keeper: SplitKeeper[B] = SplitKeeper(_cluster)
    items = [B(n) for n in sorted(rng.sample(NAMES, 300))]
    count = 8
    last = keeper.split("p", tuple(items), count)
    for _ in range(60):
        before = items
        items = _edit(rng, items, rng.choice(KINDS))
        if rng.random() < 0.05:
            count = 4 if count == 8 else 8
        assert keeper.in_order("p", tuple(items)) is one_a_cluster_in_order(tuple(items))
        parts = keeper.split("p", tuple(items), count)
        assert parts == [tuple(p) for p in split(items, count, _cluster)]
        if len(parts) == len(last) and one_a_cluster_in_order(tuple(before)):
            start, old_end, new_end = changed_run(before, items)
            moved = {b.cluster for b in before[start:old_end] + items[start:new_end]}
            reached = {shard_of(n, count) for n in moved}
            for i, part in enumerate(parts):  # untouched shards: last call's very tuple
                if i not in reached and one_a_cluster_in_order(tuple(items)):
                    assert part is last[i]
        last = parts


def test_one_binding_added_redoes_one_shard() -> None:
    keeper: SplitKeeper[B] = SplitKeeper(_cluster)
    items = tuple(B(n) for n in NAMES[:400:2])
    first = keeper.split("p", items, 4)
    added = tuple(sorted((*items, B(NAMES[101])), key=_cluster))
    second = keeper.split("p", added, 4)
    assert [a is b for a, b in zip(first, second, strict=True)].count(False) == 1
    assert second[shard_of(NAMES[101], 4)] != first[shard_of(NAMES[101], 4)]


def test_an_unordered_middle_is_not_patched() -> None:
    items = [B(n) for n in NAMES[:50]]
    swapped = list(items)
    swapped[10], swapped[11] = swapped[11], swapped[10]
    assert ordered_change(items, swapped, _cluster) is None
    duplicated = [*items[:10], B(items[10].cluster, 1), *items[10:]]
    assert ordered_change(items, duplicated, _cluster) is None
    twice = [*items[:10], B(items[10].cluster, 1), B(items[10].cluster, 2), *items[11:]]
    assert ordered_change(items, twice, _cluster) is None
    assert ordered_change(items, items[:20] + items[21:], _cluster) == ({NAMES[20]}, {})


@pytest.mark.parametrize("seed", range(8))
def test_mapping_split_equals_a_whole_split(seed: int) -> None:
    rng = random.Random(seed)
    memo: MappingSplit[object] = MappingSplit()
    mapping = {n: object() for n in rng.sample(NAMES, 250)} | {"~unnamed-1": object()}

    def skip(name: str) -> bool:
        return name.startswith("~")

    for _ in range(40):
        mapping = dict(mapping)
        for _ in range(rng.choice([1, 1, 2, 80])):
            name = rng.choice(NAMES)
            if name in mapping and rng.random() < 0.4:
                del mapping[name]
            else:
                mapping[name] = object()
        parts = memo.split("p", mapping, 4, skip)
        names = sorted(n for n in mapping if not skip(n))
        want = [{n: mapping[n] for n in part} for part in split(names, 4, str)]
        assert parts == want
        assert [list(p) for p in parts] == [list(p) for p in want]  # in name order


@pytest.mark.parametrize("seed", range(12))
def test_changed_bindings_cover_every_change(seed: int) -> None:
    rng = random.Random(seed)
    items = [B(n) for n in sorted(rng.sample(NAMES, 200))]
    kept = keyed(tuple(items))
    for _ in range(40):
        before = items
        items = _edit(rng, items, rng.choice(KINDS))
        moved, kept = changed_bindings(kept, tuple(items))
        old, new = ({b.cluster: b for b in x} for x in (before, items))
        assert changed_keys(old, new) <= moved
        lookup = kept.lookup()
        assert all(lookup.get(c) is new.get(c) for c in NAMES)
        assert kept.ordered is (one_a_cluster_in_order(tuple(items)))


def test_names_changed_covers_the_difference() -> None:
    old = tuple(NAMES[:300])
    for new in (old[:5] + old[6:], (*old[:200], "member-zz", *old[200:]), old[::2], ()):
        assert set(old) ^ set(new) <= names_changed(old, new)
    assert names_changed(old, old) == set()

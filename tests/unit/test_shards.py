"""Stable shards (`gitfleet.api.shards`): counts, stability when one name joins, determinism."""

from __future__ import annotations

import pytest

from gitfleet.api.shards import name_hash, shard_count, shard_names, shard_of


@pytest.mark.parametrize(
    ("members", "target", "want"),
    [
        (0, 50, 1),
        (1, 50, 1),
        (100, 50, 1),
        (101, 50, 4),
        (200, 50, 4),
        (201, 50, 8),
        (1000, 50, 32),
        (1001, 50, 32),
        (1600, 50, 32),
        (1601, 50, 64),
        (10, 2, 8),
        (4, 2, 1),
    ],
)
def test_shard_count(members: int, target: int, want: int) -> None:
    assert shard_count(members, target) == want


def test_name_hash_is_sha256_prefix() -> None:
    # sha256("a") = ca978112...
    assert name_hash("a") == 0xCA978112


def test_one_joining_name_moves_no_other() -> None:
    names = sorted(f"cluster-{i:05d}" for i in range(1000))
    before = shard_names(names)
    after = shard_names(sorted([*names, "cluster-new"]))
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert len(changed) == 1
    assert after[changed[0]] == sorted([*before[changed[0]], "cluster-new"])
    assert shard_of("cluster-new", len(after)) == changed[0]


def test_shards_partition_in_given_order() -> None:
    names = sorted(f"n{i}" for i in range(333))
    shards = shard_names(names)
    assert len(shards) == 8
    assert sorted(n for s in shards for n in s) == names
    assert all(s == sorted(s) for s in shards)
    assert max(len(s) for s in shards) < 2 * 50


def test_small_list_is_one_shard() -> None:
    names = [f"n{i}" for i in range(100)]
    assert shard_names(names) == [names]

"""Stable shards of a placement's clusters: which file of a sharded output document a cluster's
entry lives in, so that one cluster joining or leaving rewrites one shard, not the whole list.

A list of up to `2 * target` names is one shard (0). A longer one is cut into a power of two
of shards, the smallest with at most `target` names a shard on average; a name's shard is a hash
of the name alone, so it keeps its shard while other names come and go, until the count crosses
a power of two (then about half the names move: rare, and the same for every reader). A shard
is not bounded: a caller with a hard limit per file (PlacementDecision's 100) splits a shard
that outgrows it. Called by the writers and readers of PlacementDecision slices and of the
hub's per-placement state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TypeVar

T = TypeVar("T")

SHARD_TARGET = 50
"""Average names a shard aims at (a single shard holds up to twice as many)."""


@lru_cache(maxsize=1 << 16)
def name_hash(name: str) -> int:
    """A stable 32-bit hash of `name` (the first 4 bytes of its SHA-256)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big")


def shard_count(members: int, target: int = SHARD_TARGET) -> int:
    """How many shards a list of `members` names is cut into (1 up to `2 * target`)."""
    if members <= 2 * target:
        return 1
    wanted = -(-members // target)
    return 1 << (wanted - 1).bit_length()


def shard_of(name: str, shards: int) -> int:
    """The shard of `name` among `shards` (0 when there is one)."""
    return name_hash(name) % shards if shards > 1 else 0


def split(items: Iterable[T], count: int, name: Callable[[T], str]) -> list[list[T]]:
    """`items` cut into `count` shards by `shard_of(name(item), count)`, each in the order
    given; empty shards included, so list position is the shard number."""
    out: list[list[T]] = [[] for _ in range(count)]
    for item in items:
        out[shard_of(name(item), count)].append(item)
    return out


def shard_names(names: list[str] | tuple[str, ...], target: int = SHARD_TARGET) -> list[list[str]]:
    """`names` cut into `shard_count(len(names))` shards (`split`; callers pass them sorted)."""
    return split(names, shard_count(len(names), target), str)

"""`IdentityCache`: made once per object (by identity, not equality), least recently used
dropped beyond the limit."""

from __future__ import annotations

from gitfleet.load.identitycache import IdentityCache


def test_made_once_per_object_and_the_least_recently_used_dropped() -> None:
    calls: list[int] = []

    def make(obj: list[int]) -> int:
        calls.append(len(calls))
        return sum(obj)

    cache: IdentityCache[int] = IdentityCache(2)
    a, b, c, equal_to_a = [1], [2], [3], [1]
    assert [cache.made(a, make), cache.made(a, make)] == [1, 1]
    assert cache.made(equal_to_a, make) == 1 and len(calls) == 2  # equal, not the same object
    assert cache.made(b, make) == 2  # holds b and equal_to_a now: a dropped
    assert cache.made(equal_to_a, make) == 1 and len(calls) == 3  # kept, now the newest
    cache.made(c, make)  # drops b, the least recently used
    cache.made(equal_to_a, make)
    assert len(calls) == 4
    cache.made(b, make)
    assert len(calls) == 5  # made again
    cache.made(a, make)
    assert len(calls) == 6  # a was dropped long ago

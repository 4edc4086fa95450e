"""A cluster name that counts its equality comparisons: what a test of linear-time lookups
asserts on (a name looked up in a list is compared with every name before it; in a set or a
dict, about once).

Called by tests/unit/rollout/test_rolling.py and tests/unit/distribute/test_allocate.py.
"""

from __future__ import annotations


class CountedName(str):
    """A `str` whose `==` adds one to `CountedName.compared` (reset it before counting)."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        CountedName.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__

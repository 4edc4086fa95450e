"""A bounded memo of what a function makes of an object, keyed by the object's identity.

A loader that hands back the same object while its file is unchanged lets its readers skip
the work they did on it (validating a document, serialising a resource). Each entry holds its
object alive, so its id cannot be reused while the entry exists; beyond `limit` entries the one
least recently used is dropped. Safe to share between hub threads (a concurrent drop is
ignored). Called by `gitfleet.load.builder` and `reconciler.manifestbytes`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from contextlib import suppress
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class IdentityCache(Generic[T]):
    """`made(obj, make)`: `make(obj)`, made once per object while it stays among the last
    `limit` objects looked up."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held: OrderedDict[int, tuple[Any, T]] = OrderedDict()

    def made(self, obj: Any, make: Callable[[Any], T]) -> T:
        hit = self._held.get(id(obj))
        if hit is not None and hit[0] is obj:
            with suppress(KeyError):  # another hub thread may have dropped it meanwhile
                self._held.move_to_end(id(obj))
            return hit[1]
        value = make(obj)
        self._held[id(obj)] = (obj, value)
        with suppress(KeyError):
            if len(self._held) > self.limit:
                self._held.popitem(last=False)
        return value

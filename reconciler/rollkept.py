"""A dict that cannot change: what a remembered rollout hands the plan pass after pass.

`rollmemo.reuse` gives a placement whose rollout is remembered the desired contents, counted
report entries and per-cluster apply strategies of the pass that computed it. Copying them for
every placement every pass costs a step per cluster; handing out the remembered dicts themselves
is safe only while nobody changes them, so they are `Frozen`: every method that would change one
raises, while reading it, comparing it, copying it (`dict(...)`, `copy.copy` gives it again, `deepcopy` and pickling a
frozen copy) work as for a
dict. A later stage that compares its inputs by identity then finds the very same dict as last
pass (`rollsync.record_sync`). Called by `rollmemo` and `rollsync`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Frozen(dict[K, V]):
    """A dict whose items are fixed when it is made."""

    def _fixed(self, *_: Any, **__: Any) -> NoReturn:
        raise TypeError("a remembered rollout's dict cannot change; copy it with dict(...)")

    __setitem__ = __delitem__ = __ior__ = _fixed
    pop = popitem = setdefault = update = clear = _fixed

    def __reduce__(self) -> tuple[type[Frozen[K, V]], tuple[dict[K, V]]]:
        return (type(self), (dict(self),))

    def __copy__(self) -> Frozen[K, V]:
        return self


def frozen(items: Iterable[tuple[K, V]] | dict[K, V]) -> Frozen[K, V]:
    """`items` as a `Frozen` dict (one already frozen is returned as it is)."""
    if isinstance(items, Frozen):
        return items
    return Frozen(items)

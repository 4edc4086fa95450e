"""A dict that cannot change: what a remembered stage result hands the plan pass after pass.

`rollmemo.reuse` gives a placement whose rollout is remembered the desired contents, counted
report entries and per-cluster apply strategies of the pass that computed it, and
`placecarry.copy_plan` gives a reused plan the per-cluster override results (`per_cluster`) of
the pass that made them. Copying them for every placement every pass costs a step per cluster;
handing out the remembered dicts themselves is safe only while nobody changes them, so they are
`Frozen`: every method that would change one raises, while reading it, comparing it, copying it
(`dict(...)`, `copy.copy` gives it again, `deepcopy` and pickling a frozen copy) work as for a
dict. A stage that must change one replaces the plan's dict with its own copy first (`thawed`:
copy on write). A later stage that keys its work by such a dict takes it as it is (`frozen`:
no copy) and then finds the very same dict as last pass, compared by identity (`rollsync`,
`rollmemo.rollout_inputs`, `assemble`). Called by `rollmemo`, `rollsync`, `placememo`,
`assemble`, `sealing` and `distributions`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Frozen(dict[K, V]):
    """A dict whose items are fixed when it is made."""

    def _fixed(self, *_: Any, **__: Any) -> NoReturn:
        raise TypeError("a remembered stage result's dict cannot change; copy it with dict(...)")

    __setitem__ = __delitem__ = __ior__ = _fixed
    pop = popitem = setdefault = update = clear = _fixed

    def __reduce__(self) -> tuple[type[Frozen[K, V]], tuple[dict[K, V]]]:
        return (type(self), (dict(self),))

    def __copy__(self) -> Frozen[K, V]:
        return self


def frozen(items: Iterable[tuple[K, V]] | dict[K, V]) -> Frozen[K, V]:
    """`items` as a `Frozen` dict (one already frozen is returned as it is: a stage keying its
    work by a plan's dict takes a frozen one without copying it, a plain one as a copy)."""
    if isinstance(items, Frozen):
        return items
    return Frozen(items)


def thawed(items: dict[K, V]) -> dict[K, V]:
    """A dict the caller may change: `items` itself when it is a plain dict (the caller's own),
    else a plain copy of the frozen one (which stays as it was)."""
    if isinstance(items, Frozen):
        return dict(items)
    return items

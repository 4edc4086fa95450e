"""The documents the last pass wrote of the hub's own state and status, with what reading each gives.

A long-running hub's prior output is, pass after pass, the very tree its last pass returned
(`gitfleet.repo.treefiles.WrittenFiles`: the same bytes objects at the same paths). Reading its
`state/` and `status/` documents back one by one by blob id (`reconciler.priorparse.derive_own`)
is a walk of some 6,000 files at 1,000 clusters. An `OwnFiles` keeps what one writer wrote last
pass: the paths, the bytes objects and the typed values a reader takes from them (a state, a
record, conditions). `values(output)` gives those values at once when every one of those paths
holds the very same bytes object in `output` (an identity check a file, in C; checked once per
prior tree object), else None: a cold start, a tree another writer committed, or a tree changed
since, and the reader parses as before. The values are what reading the bytes gives (the
writers `remember` the same values), so the two ways read the same. Cleared with every
`StageMemo` (`forget_stages`). Called by `state`, `priorstate` and `clusterstatus`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from functools import partial
from operator import is_
from typing import Any, Generic, TypeVar

from reconciler.stagememo import StageMemo

T = TypeVar("T")

_Wrote = tuple[tuple[str, ...], tuple[bytes, ...], dict[str, Any]]


class OwnFiles(Generic[T]):
    """One writer's files of the last pass, and the values read from them."""

    def __init__(self) -> None:
        self._wrote: StageMemo[_Wrote] = StageMemo()
        self._checked: StageMemo[tuple[Callable[[], object], _Wrote, bool]] = StageMemo()
        """The last tree checked (a weak reference when it takes one: holding the tree would
        keep it, and free it in the next pass's check), against what, and the verdict."""

    def wrote(self, files: Mapping[str, bytes], values: dict[str, T]) -> None:
        """This pass wrote `files` (path -> bytes), which read back as `values`."""
        self._wrote.put("", (), (tuple(files), tuple(files.values()), values))

    def forget(self) -> None:
        """Nothing written is known (the writer failed part way)."""
        self._wrote.drop("")

    def values(self, output: Mapping[str, bytes]) -> dict[str, T] | None:
        """The values of the files last written when `output` holds every one of them as the
        very same bytes object, else None. Shared: read them, never change them."""
        last = self._wrote.last("")
        if last is None:
            return None
        wrote = last[1]
        found = self._checked.last("")
        if found is not None and found[1][0]() is output and found[1][1] is wrote:
            same = found[1][2]  # compared by identity: trees are never compared by value
        else:
            same = same_files(output, wrote[0], wrote[1])
            self._checked.put("", (), (_reference(output), wrote, same))
        return wrote[2] if same else None


def _reference(output: Mapping[str, bytes]) -> Callable[[], object]:
    """A weak reference to `output`, or a strong one when it takes no weak reference (a dict:
    held, so its id is not another tree's)."""
    try:
        return weakref.ref(output)
    except TypeError:
        return partial(_itself, output)


def _itself(output: object) -> object:
    return output


def same_files(output: Mapping[str, bytes], paths: tuple[str, ...], data: tuple[Any, ...]) -> bool:
    """Every path of `paths` holds the very object of `data` in `output` (stops at the first
    that does not: a lazy tree read from Git reads one file). A tree from memory is looked up
    through its `direct` mapping (`gitfleet.repo.treefiles.WrittenFiles`: ~4,000 look-ups a
    pass in C)."""
    output = getattr(output, "direct", output)
    try:
        return all(map(is_, map(output.__getitem__, paths), data))
    except KeyError:
        return False

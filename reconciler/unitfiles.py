"""The `clusters/` files of an output tree composed from disjoint units, by patching the last
composition: one live placement's files, one held placement's kept files, one cluster's index
files are each one unit. A unit that is the very object of the last composition (a reused
layout, a reused index) costs nothing; a recomputed one is compared path by path, and a unit
that went away is removed. A pass that changed one placement so touches that placement's paths,
not the ~470k paths of a 1,000-cluster output, and says which paths may differ from the last
composition (`Composed.since`), so the hub hashes and compares only those
(`gitfleet.repo.treefiles.BlobIdMemo.listing_since`, through `OutputFiles.since`). The
composition is kept apart from the pass's tree (which copies it and adds the other files):
`dict.copy` is a memory copy, ~5x faster than rebuilding one. The composition before the last
one, which no one holds any more, is patched in place into the next one instead of copying the
last (`_recycled`): no copy and no freeing of ~470k entries. A removed path leaves a hole: the
dict is not compacted (a rebuild, ~140 ms at fleet-1k, was most of a pass that removes a
placement from a cluster). CPython's `dict.copy` stays a memory copy while at most a third of
a table's entries are holes, and a table compacts itself when it grows; only `dict(files)`
of a dict with holes rebuilds it (`OutputFiles.of_assembly` does so on its first passes).

A unit made by `patched_unit` (a copy of an earlier unit with some paths changed) names those
paths: compared with the unit it was patched from, only they are looked at.

Units must not share a path. The composition checks it: its size must equal the sum of the
units' sizes (a patch can only lose paths, never invent them), else it is built afresh. Called
by `assemble`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reconciler.output import Since, patch
from reconciler.stagememo import StageMemo, unheld

Units = dict[str, Mapping[str, bytes]]
"""Unit name -> its files (path -> bytes); no path in two units."""


@dataclass(frozen=True)
class Composed:
    """Every file of the units, and (when it was patched from the last composition) that
    composition with the paths that may differ from it. `files` is remembered as the next
    pass's base: never change it (copy it)."""

    files: dict[str, bytes]
    since: Since
    disjoint: bool
    """No path in two units (the union's size is the sum of theirs): it may be a base."""


_LAST: StageMemo[tuple[dict[str, bytes], Units]] = StageMemo()
"""The last composition kept as a base, with the units it was made of."""
_SPARE: StageMemo[tuple[dict[str, bytes], frozenset[str], dict[str, bytes]]] = StageMemo()
"""(the composition the kept base was patched from, the paths they may differ in, that base):
patched in place into the next composition when nothing else holds it."""
_PATCHES: dict[int, tuple[Mapping[str, bytes], Mapping[str, bytes], frozenset[str]]] = {}
"""id(unit) -> (that unit, the unit it was patched from, the paths that may differ) for the
units `patched_unit` made since the last `compose` (which forgets them)."""


def patched_unit(
    base: Mapping[str, bytes], changes: Mapping[str, bytes | None]
) -> dict[str, bytes]:
    """A new unit: `base` with `changes` applied (None: the path goes). `compose` compares it
    with `base` on the changed paths only; `base` is not changed."""
    files = dict(base)
    gone = False
    for path, data in changes.items():
        if data is None:
            gone = files.pop(path, None) is not None or gone
        else:
            files[path] = data
    if gone:  # compact it: a dict that lost keys copies ~5x slower next time
        files = dict(files)
    _PATCHES[id(files)] = (files, base, frozenset(changes))
    return files


def _patched_paths(new: Mapping[str, bytes], before: Mapping[str, bytes]) -> frozenset[str] | None:
    """The paths that may differ between `new` and `before` when `new` was patched from it."""
    found = _PATCHES.get(id(new))
    return found[2] if found is not None and found[0] is new and found[1] is before else None


def compose(units: Units) -> Composed:
    """The union of `units`: patched from the last composition kept, else built afresh."""
    total = sum(map(len, units.values()))
    last = _LAST.last("")
    try:
        if last is not None:
            base, old_units = last[1]
            files, touched = _patched(base, old_units, units)
            if len(files) == total:
                return Composed(files, (base, frozenset(touched)), True)
    finally:
        _PATCHES.clear()
    files = {}
    for unit in units.values():
        files.update(unit)
    return Composed(files, None, len(files) == total)


def keep_base(composed: Composed, units: Units) -> None:
    """Keep `composed` (unchanged since `compose`) as the next pass's base; `units` are kept
    as they are (their dicts must not change either)."""
    _SPARE.drop("")
    if composed.disjoint:
        _LAST.put("", (), (composed.files, units))
        if composed.since is not None and isinstance(composed.since[0], dict):
            _SPARE.put("", (), (composed.since[0], composed.since[1], composed.files))
    else:
        _LAST.drop("")


def drop_base() -> None:
    """The composition was changed afterwards (a cluster over its cap): build afresh next."""
    _LAST.drop("")
    _SPARE.drop("")


def _recycled(base: dict[str, bytes]) -> dict[str, bytes] | None:
    """The composition `base` was patched from, made equal to `base` again on the paths they
    may differ in, when nothing but this module holds it: the next composition is then
    patched in place into it instead of into a copy of `base`."""
    found = _SPARE.last("")
    _SPARE.drop("")
    if found is None or found[1][2] is not base:
        return None
    spare, paths, _ = found[1]
    del found
    if not unheld(spare):  # anyone else may read it
        return None
    patch(spare, paths, base)
    return spare


def _patched(
    base: dict[str, bytes], old_units: Units, units: Units
) -> tuple[dict[str, bytes], set[str]]:
    """`base` (the union of `old_units`) changed into the union of `units`, and the paths
    changed, added or removed. A path may move from one unit to another (a cluster the rollout
    reaches moves from the placement's kept files to its live ones): paths gone from their unit
    are removed after the additions, unless a unit added them again, so a move costs nothing."""
    recycled = _recycled(base)
    files = recycled if recycled is not None else base.copy()  # one block of memory
    hints: dict[str, frozenset[str] | None] = {}
    gone: set[str] = set()
    for name, old in old_units.items():
        new = units.get(name)
        if new is not old:
            hint = hints[name] = None if new is None else _patched_paths(new, old)
            if new is None:
                gone.update(old.keys())
            elif hint is not None:
                gone.update(p for p in hint if p in old and p not in new)
            else:
                gone.update(old.keys() - new.keys())
    written = _written(files, old_units, units, hints)
    for path in gone - written:
        del files[path]  # a hole: not compacted (see the module's docstring)
    return files, gone | written


def _written(
    files: dict[str, bytes],
    old_units: Units,
    units: Units,
    hints: Mapping[str, frozenset[str] | None],
) -> set[str]:
    """Writes into `files` each path of `units` that is new or differs from its unit's last
    version (`hints`: the paths a patched unit names); returns those paths."""
    written: set[str] = set()
    for name, new in units.items():
        before = old_units.get(name)
        if new is before:
            continue
        if before is None:
            files.update(new)
            written.update(new)
            continue
        hint = hints[name]  # every unit in both was looked at by the caller
        paths = new.keys() if hint is None else hint.intersection(new)
        for path in paths:
            data, was = new[path], before.get(path)
            if was is not data and was != data:
                files[path] = data
                written.add(path)
    return written

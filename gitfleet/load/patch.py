"""A snapshot kept between passes as per-file parts, patched file by file.

`SnapshotIndex.of` merges the parts of every file (`gitfleet.load.parts`) into the snapshot's
sorted slots, origins and resources; `patch` swaps the parts of changed, added and removed files
in, touching only the slots they occupy. Both refuse (None / False) unless the result is provably
the snapshot `build_snapshot` makes of the same documents: no key is tried by two files (then no
document's claim depends on another file) and no patched file holds a Fleet (which may set
everyone's limits). Snapshots handed out are never changed afterwards: a patch copies the
mappings it changes. Called by `renderers.hubload.FleetLoader`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import chain
from typing import Any

from gitfleet.api import Fleet
from gitfleet.api.errors import FleetError
from gitfleet.load.builder import SLOTS, freeze
from gitfleet.load.model import FleetSnapshot, Origin, Resource
from gitfleet.load.parts import FilePart
from gitfleet.load.sealedvalues import SealedValues

OriginKey = tuple[str, str, str]


def _file_of(resource: Resource) -> str:
    return resource.origin.file


class SnapshotIndex:
    """Every file's part, who claims which key, and the merged (sorted) slots."""

    def __init__(
        self, fleet: Fleet, fleet_origin: Origin | None, fleet_errors: Sequence[FleetError]
    ) -> None:
        self.fleet = fleet
        self.fleet_errors = tuple(fleet_errors)
        self.parts: dict[str, FilePart] = {}
        self.owners: dict[tuple[str, ...], str] = {}
        """Every key tried by a document -> the one file whose documents try it."""
        self.slots: dict[str, dict[Any, Any]] = {slot: {} for slot in set(SLOTS.values())}
        self.origins: dict[OriginKey, Origin] = {}
        if fleet_origin is not None:
            self.origins[("Fleet", "", fleet.name)] = fleet_origin
        self.resources: tuple[Resource, ...] = ()
        self.loud: set[str] = set()
        """Files whose part has errors or notes."""

    @classmethod
    def of(
        cls,
        fleet: Fleet,
        fleet_origin: Origin | None,
        fleet_errors: Sequence[FleetError],
        parts: Mapping[str, FilePart],
    ) -> SnapshotIndex | None:
        """The index of `parts` (every file's), or None when two files try the same key."""
        index = cls(fleet, fleet_origin, fleet_errors)
        for file in sorted(parts):
            part = parts[file]
            for key in part.keys:
                if index.owners.setdefault(key, file) != file:
                    return None
            index.parts[file] = part
            for slot, key, value in part.entries:
                index.slots[slot][key] = value
            index.origins.update(part.origins)
            if not part.quiet:
                index.loud.add(file)
        index.slots = {slot: dict(sorted(values.items())) for slot, values in index.slots.items()}
        index.origins = dict(sorted(index.origins.items()))
        index.resources = tuple(r for file in sorted(parts) for r in parts[file].resources)
        return index

    def patch(self, changes: Mapping[str, FilePart | None]) -> bool:
        """Put each changed file's new part (None: the file is gone or reads nothing) in place
        of its old one. False, and nothing changed, when that is not provably a full build."""
        if not self._patchable(changes):
            return False
        olds = [old for file in changes if (old := self.parts.get(file)) is not None]
        self._swap_entries(olds, [new for new in changes.values() if new is not None])
        self._swap_resources(changes)
        for file in changes:
            old = self.parts.pop(file, None)
            for key in old.keys if old is not None else ():
                if self.owners.get(key) == file:
                    del self.owners[key]
            self.loud.discard(file)
        for file, new in changes.items():
            if new is not None:
                self.parts[file] = new
                self.owners.update((key, file) for key in new.keys)
                if not new.quiet:
                    self.loud.add(file)
        return True

    def _patchable(self, changes: Mapping[str, FilePart | None]) -> bool:
        tried: dict[tuple[str, ...], str] = {}
        for file, new in changes.items():
            old = self.parts.get(file)
            if (old is not None and old.has_fleet) or (new is not None and new.has_fleet):
                return False
            if new is None:
                continue
            if new.fleet is not self.fleet:
                return False
            for key in new.keys:
                owner = self.owners.get(key)
                if owner is not None and owner != file and owner not in changes:
                    return False
                if tried.setdefault(key, file) != file:
                    return False
        return True

    def _swap_entries(self, olds: Sequence[FilePart], news: Sequence[FilePart]) -> None:
        """Slots and origins: copied where they change; keys that stay keep their place, new
        keys are sorted in."""
        gone: dict[str, set[Any]] = {}
        for part in olds:
            for slot, key, _ in part.entries:
                gone.setdefault(slot, set()).add(key)
        came: dict[str, dict[Any, Any]] = {}
        for part in news:
            for slot, key, value in part.entries:
                came.setdefault(slot, {})[key] = value
        for slot in sorted(gone.keys() | came.keys()):
            self.slots[slot] = _swapped(self.slots[slot], gone.get(slot, set()), came.get(slot, {}))
        old_origins = {key for part in olds for key, _ in part.origins}
        new_origins = dict(chain.from_iterable(part.origins for part in news))
        if old_origins or new_origins:
            self.origins = _swapped(self.origins, old_origins, new_origins)

    def _swap_resources(self, changes: Mapping[str, FilePart | None]) -> None:
        resources = list(self.resources)
        for file in sorted(changes):
            new = changes[file]
            low = bisect_left(resources, file, key=_file_of)
            high = bisect_right(resources, file, low, key=_file_of)
            if high > low or (new is not None and new.resources):
                resources[low:high] = new.resources if new is not None else ()
        self.resources = tuple(resources)

    def snapshot(self, commit: str | None, tree_errors: Sequence[FleetError]) -> FleetSnapshot:
        """The snapshot as `build_snapshot` makes it of the same documents (no lint, no SOPS
        files) with the tree's listing errors."""
        loud = sorted(self.loud)
        parts = [self.parts[file] for file in loud]
        errors = chain(self.fleet_errors, tree_errors, *(part.errors for part in parts))
        snapshot = freeze(self.fleet, self.slots, self.resources, errors, self.origins, commit)
        mixed = tuple(part.mixed_note for part in parts if part.mixed_note is not None)
        notes = (*mixed, *chain.from_iterable(part.notes for part in parts))
        return replace(snapshot, notes=notes, warnings=(), sealed=SealedValues())


def contenders(parts: Mapping[str, FilePart]) -> frozenset[str]:
    """The files whose documents try a key that another file's documents try too (until one
    of them changes, only a full build can load the tree)."""
    first: dict[tuple[str, ...], str] = {}
    found: set[str] = set()
    for file in sorted(parts):
        for key in parts[file].keys:
            owner = first.setdefault(key, file)
            if owner != file:
                found.update((owner, file))
    return frozenset(found)


def _swapped(values: dict[Any, Any], gone: set[Any], came: dict[Any, Any]) -> dict[Any, Any]:
    """A copy of `values` without the keys `gone` and with `came`; sorted again only when a
    key is new."""
    out = dict(values)
    for key in gone - came.keys():
        del out[key]
    fresh = False
    for key, value in came.items():
        fresh = fresh or key not in out
        out[key] = value
    return dict(sorted(out.items())) if fresh else out

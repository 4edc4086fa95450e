"""One file's share of a `FleetSnapshot`, built from that file's documents alone.

`file_part` runs the snapshot builder's own loop (`snapshot.index_documents`) on the documents of
one file with the fleet's settings, and keeps what it produced (slot entries, origins,
resources, errors, notes) together with every key the file's documents tried to claim. The
builder's only state that looks across documents is "the first claim of a name wins", so when no
two files try to claim the same key, the snapshot of all documents is exactly the union of the
files' parts (`gitfleet.load.patch.SnapshotIndex`). The Fleet itself is read apart, over every
file (`fleet_documents`, `snapshot.read_fleet`). Called by `renderers.hubload`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gitfleet.api import Fleet
from gitfleet.api.errors import FleetError
from gitfleet.load.builder import SnapshotBuilder
from gitfleet.load.lists import expand_lists, is_list
from gitfleet.load.model import Origin, Resource, SourceDoc
from gitfleet.load.snapshot import index_documents, is_fleet_doc, mixed_notes

SlotEntry = tuple[str, Any, Any]
"""(FleetSnapshot field, key in it, value)."""


@dataclass(frozen=True, eq=False)
class FilePart:
    """What one file contributes to a snapshot (built alone, with the fleet's settings)."""

    file: str
    source: object
    """The render result it was built from (compared by identity: the plain renderer hands back
    the same result for an unchanged blob)."""
    fleet: Fleet
    """The settings it was built with (limits, `spec.secrets.allowPlaintext`)."""
    has_fleet: bool
    """A document of kind Fleet is in the file: it may decide the fleet's settings, so the file
    is never patched in or out alone."""
    fleet_docs: tuple[SourceDoc, ...]
    """Its documents that `snapshot.read_fleet` reads."""
    errors: tuple[FleetError, ...]
    notes: tuple[FleetError, ...]
    """The builder's notes (plaintext accepted, age recipients), in document order."""
    mixed_note: FleetError | None
    """The note for ordinary manifests outside `resources/` (`snapshot.mixed_notes`)."""
    entries: tuple[SlotEntry, ...]
    origins: tuple[tuple[tuple[str, str, str], Origin], ...]
    resources: tuple[Resource, ...]
    keys: frozenset[tuple[str, ...]]
    """Every origin or payload key a document of the file tried to claim, taken or not."""

    @property
    def quiet(self) -> bool:
        """No errors and no notes."""
        return not self.errors and not self.notes and self.mixed_note is None


def fleet_documents(docs: Sequence[SourceDoc]) -> list[SourceDoc]:
    """The documents of `docs` (one file's or many) that `snapshot.read_fleet` reads, List
    items included."""
    listed = [d for d in docs if is_list(d.body)]
    found = [d for d in docs if not d.path and is_fleet_doc(d)]
    if listed:
        items, _ = expand_lists(listed)
        found += [d for d in items if is_fleet_doc(d)]
    return sorted(found, key=lambda d: (d.file, d.doc))


def file_part(
    file: str,
    docs: Sequence[SourceDoc],
    render_errors: Sequence[FleetError],
    fleet: Fleet,
    source: object = None,
) -> FilePart:
    """The part of `file`, whose renderer produced `docs` (all of this file) and
    `render_errors`, under the settings of `fleet`."""
    ordered, list_errors = expand_lists(sorted(docs, key=lambda d: d.doc))
    builder = SnapshotBuilder(fleet)
    builder.errors += [*render_errors, *list_errors]
    index_documents(builder, ordered)
    notes = mixed_notes(builder.resources)
    return FilePart(
        file=file,
        source=source,
        fleet=fleet,
        has_fleet=any(d.body.get("kind") == "Fleet" for d in ordered),
        fleet_docs=tuple(d for d in ordered if is_fleet_doc(d)),
        errors=tuple(builder.errors),
        notes=tuple(builder.notes),
        mixed_note=notes[0] if notes else None,
        entries=tuple(
            (slot, key, value)
            for slot, values in builder.slots.items()
            for key, value in values.items()
        ),
        origins=tuple(builder.origins.items()),
        resources=tuple(builder.resources),
        keys=frozenset(builder.attempted),
    )

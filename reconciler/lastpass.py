"""Whether a hub pass would only repeat the last one: a new source commit that no loaded input
follows (a README, CI files, docs beside the fleet) leaves the snapshot as it was.

The pure pass is a function of the loaded snapshot (its source commit id is recorded only
with a new resource snapshot, which an unchanged snapshot never makes), the agents' reports,
the previous output and the clock. `LastPass` keeps what the last pass that ran was given;
`reconciler.loop` skips the pass when the snapshot is the same up to its commit id (approval
commits and approved deletions included), the status branches' digest is the same, the output
tip is the one that pass left, and no rollout timer is due: the same rule by which the loop
already skips a pass whose source commit and reports did not change at all. The report it
gives is the one the pass would give: outcome `unchanged` and the last pass's errors.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from gitfleet.api.errors import FleetError
from gitfleet.load.model import FleetSnapshot

_COMPARED = tuple(f.name for f in fields(FleetSnapshot) if f.name != "commit")
"""Every field of a snapshot except the commit it was read from."""


def same_snapshot(a: FleetSnapshot, b: FleetSnapshot) -> bool:
    """Equal up to the source commit id (cheap when the loader reused the objects: a dict or
    tuple of the same objects compares by identity first)."""
    for name in _COMPARED:
        x, y = getattr(a, name), getattr(b, name)
        if x is not y and x != y:
            return False
    return True


@dataclass(frozen=True)
class LastPass:
    """What the last pass that ran was given, and the errors it reported."""

    fleet: FleetSnapshot
    digest: str
    """The status branches' digest (the reports it read)."""
    output: str | None
    """The output tip after that pass (its own commit, or the tip it found unchanged)."""
    errors: tuple[FleetError, ...]

    def repeated_by(self, fleet: FleetSnapshot, digest: str, output: str | None) -> bool:
        """A pass on these inputs would make the same result (the caller checks timers)."""
        return self.output == output and self.digest == digest and same_snapshot(self.fleet, fleet)

"""The reconciler's memory between passes as values: a placement's `PlacementState`, the pass's
`State` and a `Snapshot` of a policy or of resources. Re-exported by `reconciler.state` (which
writes and reads them as `state/` files); imported from there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from reconciler.binding import Binding


@dataclass(frozen=True)
class Snapshot:
    """One policy or resource snapshot: its index and content hash (and source commit)."""

    index: int
    hash: str
    commit: str | None = None


@dataclass(frozen=True)
class PlacementState:
    """Everything a pass remembers about one placement."""

    key: str
    generation: int = 0
    spec_hash: str = ""
    policy_snapshots: tuple[Snapshot, ...] = ()
    resource_snapshots: tuple[Snapshot, ...] = ()
    bindings: tuple[Binding, ...] = ()
    selected: tuple[tuple[str, str], ...] = ()
    """(resource id, source file) of every resource the placement selected last time: when one
    of them is missing now because its file fails to load, the placement keeps its output."""
    origin_file: str = ""
    deleting: tuple[Binding, ...] = ()
    """Bindings being deleted (KubeFleet's deletionTimestamp): their clusters' files are gone
    from the output and their agents are removing the objects. The scheduler never sees them;
    the rollout counts them (kubefleet.md §2.3) until the agent reports the objects gone."""

    def __hash__(self) -> int:
        """Computed once per object: a state holds a binding per cluster (`canonical_state`)."""
        found: int | None = self.__dict__.get("_hash")
        if found is None:
            found = hash(tuple(getattr(self, f.name) for f in fields(self)))
            object.__setattr__(self, "_hash", found)
        return found

    def latest_policy(self) -> Snapshot | None:
        return self.policy_snapshots[-1] if self.policy_snapshots else None

    def latest_resources(self) -> Snapshot | None:
        return self.resource_snapshots[-1] if self.resource_snapshots else None


@dataclass(frozen=True)
class State:
    """The prior state handed to a pass: placements by key, plus the prior output tree."""

    placements: Mapping[str, PlacementState] = field(default_factory=dict)
    output: Mapping[str, bytes] = field(default_factory=dict)
    overrides: Mapping[str, tuple[Snapshot, ...]] = field(default_factory=dict)
    """Override snapshot history by override key (`ClusterResourceOverride/<name>`, ...)."""
    """The previous output tree (path -> bytes); used to keep held placements' files."""

"""The inputs one ClusterGroupUpgrade pass works from (spec/cluster-group-upgrade.md §8.2, §12.1):
the CGU's identity and spec (the current one, or the last valid one kept in state while its file
fails), and what other CGUs look like to it as blockers. Called by the CGU driver and runner.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gitfleet.api.cgu import ClusterGroupUpgradeSpec


@dataclass(frozen=True)
class CguInput:
    namespace: str
    name: str
    spec: ClusterGroupUpgradeSpec
    annotations: Mapping[str, str] = field(default_factory=dict)
    invalid: tuple[str, str] | None = None
    """(reason, message) of `Validated=False` when the spec is refused (InvalidSpec,
    UnsupportedField); None when it is acceptable."""


@dataclass(frozen=True)
class Blocker:
    """Another CGU as a blocker sees it (this pass's result when already processed)."""

    succeeded: str | None
    """Status of its Succeeded condition (None: absent)."""
    has_conditions: bool
    in_progress: bool
    claims: frozenset[tuple[str, str]] = frozenset()
    """(placement key, cluster) pairs of its frozen plan x managed placements."""
    complete_clusters: frozenset[str] = frozenset()

    def completed(self, partial: bool) -> bool:
        """§8.2: Succeeded True; in partial mode any Succeeded condition."""
        if not self.has_conditions or self.succeeded is None:
            return False
        return partial or self.succeeded == "True"

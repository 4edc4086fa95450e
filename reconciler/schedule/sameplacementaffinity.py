"""SamePlacementAffinity plugin: keep what is already selected, favour the previous placement.

Filter (spec §1.3.5): a cluster with a Scheduled or Bound binding of the latest policy snapshot is
`ClusterAlreadySelected` (neither picked again nor reported as filtered). Score: 1 obsolete
placement affinity point for a cluster holding a binding of an older policy snapshot (the
lowest-priority tie-breaker). Registered in `profile`.
"""

from __future__ import annotations

from .clusters import ClusterView
from .framework import SUCCESS, ZERO, ClusterScore, Code, CycleState, Plugin, Status

NAME = "SamePlacementAffinity"
ALREADY_SELECTED = "cluster already has a placement of the current policy"
_OBSOLETE = ClusterScore(obsolete=1)


class SamePlacementAffinityPlugin(Plugin):
    """Filter already-selected clusters; score clusters of the previous placement."""

    name = NAME

    def filter(self, state: CycleState, view: ClusterView) -> Status:
        if view.name in state.current:
            return Status(Code.ALREADY_SELECTED, (ALREADY_SELECTED,), NAME)
        return SUCCESS

    def score(self, state: CycleState, view: ClusterView) -> tuple[ClusterScore, Status]:
        return (_OBSOLETE if view.name in state.obsolete else ZERO), SUCCESS

"""ClusterEligibility plugin: filters clusters that left the fleet or are not connected (§1.3.2).

The verdict is computed once per pass by `eligibility.check_eligibility` (from the MemberCluster
status the agent reported) and carried on the `ClusterView`; this plugin only turns it into a
filter status with KubeFleet's reason. Registered in `profile`; PickFixed uses the same verdict.
"""

from __future__ import annotations

from .clusters import ClusterView
from .framework import SUCCESS, CycleState, Plugin, Status, unschedulable

NAME = "ClusterEligibility"


class ClusterEligibilityPlugin(Plugin):
    """Filter: the cluster must be eligible for resource placement."""

    name = NAME
    static = True

    def filter(self, state: CycleState, view: ClusterView) -> Status:
        if view.ineligible_reason is None:
            return SUCCESS
        return unschedulable(NAME, view.ineligible_reason)

"""TaintToleration plugin: every cluster taint must be tolerated (spec §1.3.4).

The reason names the first untolerated taint in Go's `%+v` form, e.g.
`taint &{Key:key1 Value:value1 Effect:NoSchedule} cannot be tolerated`. Taints only affect new
picks: SamePlacementAffinity keeps existing bindings. Registered in `profile`.
"""

from __future__ import annotations

from collections.abc import Sequence

from gitfleet.api import Toleration, first_untolerated

from .clusters import ClusterView
from .framework import SUCCESS, CycleState, Plugin, Status, unschedulable

NAME = "TaintToleration"


def taint_reason(view: ClusterView, tolerations: Sequence[Toleration]) -> str | None:
    """None when every taint is tolerated, else KubeFleet's reason."""
    taint = first_untolerated(view.cluster.taints, tolerations)
    return None if taint is None else f"taint {taint.go_repr()} cannot be tolerated"


class TaintTolerationPlugin(Plugin):
    """Filter: the placement tolerates all the cluster's taints."""

    name = NAME
    static = True

    def filter(self, state: CycleState, view: ClusterView) -> Status:
        if not view.cluster.spec.taints:
            return SUCCESS
        reason = taint_reason(view, list(state.placement.policy.tolerations or []))
        return SUCCESS if reason is None else unschedulable(NAME, reason)

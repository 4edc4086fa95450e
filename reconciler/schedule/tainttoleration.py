"""TaintToleration: the filter of KubeFleet spec §1.3.4.

Every NoSchedule taint of a cluster must be tolerated by one of the placement's tolerations; the
reason names the first untolerated taint in Go's `%+v` form. Taints only affect new picks.
Called by `cycle`.
"""

from __future__ import annotations

from typing import Any

from gitfleet.api import tolerates

from .clusters import ClusterView


def _go_taint(taint: Any) -> str:
    return f"&{{Key:{taint.key} Value:{taint.value or ''} Effect:{taint.effect}}}"


def filter_cluster(view: ClusterView, tolerations: list[Any]) -> str | None:
    """None when every taint is tolerated, else `taint <...> cannot be tolerated`."""
    for taint in view.cluster.spec.taints or []:
        if not any(tolerates(t, taint) for t in tolerations):
            return f"taint {_go_taint(taint)} cannot be tolerated"
    return None

"""Cluster views for one pass: each MemberCluster joined with its status and eligibility.

`build_cluster_views` merges the status an agent reported (or a `--cluster-status` file) into the
declared MemberCluster and records the eligibility verdict (`eligibility.check_eligibility`). A
cluster whose declaration and reported status are the very objects of the last call, with the
same verdict, gets the very view of then (`_VIEWS`): later stages that compare views or their
clusters by identity (`clusterstatus`) skip the unchanged ones, and a view's memo of derived
values (parsed properties) is kept with it. Called by `reconciler.pass_`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from gitfleet.api import MemberCluster
from reconciler.stagememo import StageMemo

from .clusters import ClusterView, EligibilityPolicy
from .eligibility import check_eligibility


def build_cluster_views(
    clusters: Mapping[str, MemberCluster],
    statuses: Mapping[str, MemberCluster],
    policy: EligibilityPolicy,
    now: datetime,
) -> dict[str, ClusterView]:
    """Views by name. A cluster's status comes from `statuses` (agent reports or
    `--cluster-status` files) when present there, else from its own declaration."""
    views: dict[str, ClusterView] = {}
    for name in sorted(clusters):
        declared = clusters[name]
        reported = statuses.get(name)
        status = reported.status if reported is not None else None
        last = _VIEWS.last(name)
        kept = None
        if last is not None and last[0][0] is declared and last[0][1] is status:
            kept = last[1]
        merged = declared
        if kept is not None:
            merged = kept.cluster
        elif status is not None:
            merged = declared.model_copy(update={"status": status})
        reason: str | None = None
        if policy.has_status_source and policy.mode != "AssumeJoined":
            reason = check_eligibility(merged, now, policy.heartbeat_timeout, policy.health_timeout)
        elif merged.metadata.deletion_timestamp:
            reason = "cluster has left the fleet"
        view = kept
        if view is None or view.ineligible_reason != reason:
            view = ClusterView(name=name, cluster=merged, ineligible_reason=reason)
        _VIEWS.put(name, (declared, status), view)
        views[name] = view
    return views


_VIEWS: StageMemo[ClusterView] = StageMemo()
"""Cluster name -> its last view, with the declaration and reported status it was made from
(held, so compared by identity)."""

"""Cluster views for one pass: each MemberCluster joined with its status and eligibility.

`build_cluster_views` merges the status an agent reported (or a `--cluster-status` file) into the
declared MemberCluster and records the eligibility verdict (`eligibility.check_eligibility`).
Called by `reconciler.pass_`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from gitfleet.api import MemberCluster

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
        merged = declared
        if reported is not None and reported.status is not None:
            merged = declared.model_copy(update={"status": reported.status})
        reason: str | None = None
        if policy.has_status_source and policy.mode != "AssumeJoined":
            reason = check_eligibility(merged, now, policy.heartbeat_timeout, policy.health_timeout)
        elif merged.metadata.deletion_timestamp:
            reason = "cluster has left the fleet"
        views[name] = ClusterView(name=name, cluster=merged, ineligible_reason=reason)
    return views

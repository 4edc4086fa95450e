"""The scheduler's read-only view of a member cluster, the one type every plugin reads.

Views are built once per pass by `inventory.build_cluster_views`. Used by the plugins and `cycle`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property
from typing import Any

from gitfleet.api import MemberCluster


@dataclass(frozen=True)
class ClusterView:
    """One cluster as the plugins see it."""

    name: str
    cluster: MemberCluster
    """The MemberCluster (spec from Git, status from the agent report when there is one)."""
    ineligible_reason: str | None
    """None when eligible; otherwise the eligibility checker's reason (spec §1.3.2)."""

    @cached_property
    def labels(self) -> Mapping[str, str]:
        return self.cluster.metadata.labels or {}

    @cached_property
    def memo(self) -> dict[str, Any]:
        """Values derived from this cluster alone (parsed properties), shared by every
        placement of the pass; filled by the plugins."""
        return {}


@dataclass(frozen=True)
class EligibilityPolicy:
    """How eligibility is decided this pass."""

    mode: str
    """RequireAgent (KubeFleet) or AssumeJoined (agentless fleets, demos)."""
    has_status_source: bool
    """False for a dry run with no status at all: every declared cluster is taken as joined."""
    heartbeat_timeout: timedelta
    health_timeout: timedelta

"""AgentReport (gitfleet.io/v1alpha1): what a member agent pushes to `gitfleet/status/<cluster>`.

One report per cluster: heartbeat time, agent version, the output commit whose content the agent
enforces, cluster properties and resource usage, agent-level conditions, and per placement the
applied resource snapshot index with KubeFleet's binding-level conditions (Applied / Available or
DiffReported) and the failed, drifted and diffed objects (each list capped at 100, as KubeFleet).
Written by `gitfleet.agent.report`, read on the hub by `gitfleet.load.report`. The format is
documented in `docs/agent-report.md`.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from pydantic import Field

from gitfleet.api.base import KubeModel, check_object_name
from gitfleet.api.cluster import PropertyValue, ResourceUsage
from gitfleet.api.conditions import Condition, Timestamp
from gitfleet.api.errors import FieldIssue
from gitfleet.api.meta import KubeObject

REPORT_API_VERSION: Final = "gitfleet.io/v1alpha1"
MAX_ENTRIES: Final = 100
"""Cap of failedPlacements, driftedPlacements, diffedPlacements and details per object."""
_COMMIT_RE = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})?$")
_KEY_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)?$")


class ResourceIdentifier(KubeModel):
    """Which member object an entry is about (KubeFleet's ResourceIdentifier, no envelope)."""

    group: str = ""
    version: str
    kind: str
    name: str
    namespace: str | None = None


class PatchDetail(KubeModel):
    """One difference: JSON pointer path and Go `%v` renderings of the two values."""

    path: str
    value_in_member: str | None = None
    value_in_hub: str | None = None


class FailedResourcePlacement(ResourceIdentifier):
    """An object whose Applied or Available condition is False, with that condition."""

    condition: Condition


class DriftedResourcePlacement(ResourceIdentifier):
    """An applied object whose live state differs from the hub manifest."""

    observation_time: Timestamp
    target_cluster_observed_generation: int
    first_drifted_observed_time: Timestamp
    observed_drifts: list[PatchDetail] = Field(default_factory=list, max_length=MAX_ENTRIES)


class DiffedResourcePlacement(ResourceIdentifier):
    """An object compared but not applied (ReportDiff, or a takeover refused by IfNoDiff)."""

    observation_time: Timestamp
    target_cluster_observed_generation: int | None = None
    first_diffed_observed_time: Timestamp
    observed_diffs: list[PatchDetail] = Field(default_factory=list, max_length=MAX_ENTRIES)


class PlacementReport(KubeModel):
    """The state of one placement's objects on this cluster."""

    key: str
    name: str
    namespace: str | None = None
    resource_snapshot_index: int = Field(ge=0)
    policy_snapshot_index: int | None = Field(default=None, ge=0)
    content_hash: str = Field(default="", pattern=r"^(sha256:[0-9a-f]{64})?$")
    """`placement_content_hash` of the index entry whose objects these results are about; the
    hub counts the results only when it equals the content it gave this cluster ('' never does)."""
    conditions: list[Condition] = Field(default_factory=list)
    failed_placements: list[FailedResourcePlacement] = Field(
        default_factory=list, max_length=MAX_ENTRIES
    )
    drifted_placements: list[DriftedResourcePlacement] = Field(
        default_factory=list, max_length=MAX_ENTRIES
    )
    diffed_placements: list[DiffedResourcePlacement] = Field(
        default_factory=list, max_length=MAX_ENTRIES
    )


class AgentReport(KubeObject):
    """The report of the member agent of cluster `metadata.name`."""

    api_version: Literal["gitfleet.io/v1alpha1"]
    kind: Literal["AgentReport"]
    heartbeat_time: Timestamp
    agent_version: str
    output_commit: str = ""
    """The output commit whose `clusters/<name>/` content is enforced ('' before the first)."""
    conditions: list[Condition] = Field(default_factory=list)
    properties: dict[str, PropertyValue] | None = None
    resource_usage: ResourceUsage | None = None
    placements: list[PlacementReport] = Field(default_factory=list)

    def validate_rules(self) -> list[FieldIssue]:
        """Cluster name is a DNS-1123 label; commit ids are hex; placement keys unique and valid."""
        issues = super().validate_rules() + check_object_name(self.name, file_name=True)
        if self.namespace is not None:
            issues.append(FieldIssue("metadata.namespace", "reports are cluster-scoped"))
        if not _COMMIT_RE.match(self.output_commit):
            issues.append(FieldIssue("outputCommit", "must be a 40 or 64 hex digit commit id"))
        seen: set[str] = set()
        for i, placement in enumerate(self.placements):
            if not _KEY_RE.match(placement.key):
                issues.append(
                    FieldIssue(f"placements[{i}].key", "must be <name> or <namespace>.<name>")
                )
            if placement.key in seen:
                issues.append(
                    FieldIssue(
                        f"placements[{i}].key", f'placement "{placement.key}" is reported twice'
                    )
                )
            seen.add(placement.key)
        return issues

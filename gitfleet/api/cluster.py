"""MemberCluster and ClusterProfile: the cluster inventory.

`MemberCluster` (cluster.kubernetes-fleet.io) carries labels and taints from Git; its optional
`status` is how cluster state reaches the reconciler (agent reports, `--cluster-status` files).
`ClusterProfile` (multicluster.x-k8s.io/v1alpha1, sigs.k8s.io/cluster-inventory-api) is accepted
as an alternative inventory source and converted by `to_member_cluster`.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import Field, field_validator

from gitfleet.api.base import KubeModel, check_namespace, check_object_name, prefix
from gitfleet.api.conditions import Condition, Timestamp, find_condition, parse_time
from gitfleet.api.errors import FieldIssue
from gitfleet.api.meta import KubeObject, ObjectMeta, key_path
from gitfleet.api.quantity import QuantityError, canonical_number, parse_quantity
from gitfleet.api.taints import Taint

CLUSTER_V1BETA1: Final = "cluster.kubernetes-fleet.io/v1beta1"
CLUSTER_V1 = "cluster.kubernetes-fleet.io/v1"
CLUSTER_INVENTORY_V1ALPHA1 = "multicluster.x-k8s.io/v1alpha1"

AgentType = Literal["MemberAgent", "MultiClusterServiceAgent", "ServiceExportImportAgent"]


class MemberClusterSpec(KubeModel):
    """Desired state: identity (opaque), heartbeat period, taints."""

    identity: dict[str, Any] | None = None
    heartbeat_period_seconds: int = Field(default=60, ge=1, le=600)
    taints: list[Taint] | None = Field(default=None, max_length=100)
    delete_options: dict[str, Any] | None = None


def _quantity_text(value: Any) -> Any:
    """`cpu: 32` or `cpu: 0.5` as Kubernetes stores the quantity (`32`, `500m`); other values
    are left for validation to judge (booleans are not numbers here)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return canonical_number(value)
    return value


class PropertyValue(KubeModel):
    """An observed cluster property (value should be a quantity; a YAML number is taken as one)."""

    value: str
    observation_time: Timestamp | None = None

    @field_validator("value", mode="before")
    @classmethod
    def _number_to_quantity(cls, value: Any) -> Any:
        return _quantity_text(value)


class ResourceUsage(KubeModel):
    """Observed capacity, allocatable and available resources (quantity strings)."""

    capacity: dict[str, str] | None = None
    allocatable: dict[str, str] | None = None
    available: dict[str, str] | None = None
    observation_time: Timestamp | None = None

    @field_validator("capacity", "allocatable", "available", mode="before")
    @classmethod
    def _numbers_to_quantities(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {key: _quantity_text(item) for key, item in value.items()}


class AgentStatus(KubeModel):
    """Status reported by one agent running in the member cluster."""

    type: AgentType
    conditions: list[Condition] | None = None
    last_received_heartbeat: Timestamp | None = None


class MemberClusterStatus(KubeModel):
    """Observed state (from agent reports)."""

    conditions: list[Condition] | None = None
    properties: dict[str, PropertyValue] | None = None
    resource_usage: ResourceUsage | None = None
    namespaces: dict[str, str] | None = None
    agent_status: list[AgentStatus] | None = None

    def agent(self, agent_type: AgentType = "MemberAgent") -> AgentStatus | None:
        """The status entry of `agent_type`, if any."""
        return next((a for a in self.agent_status or [] if a.type == agent_type), None)


def _usage_rules(usage: ResourceUsage) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    for part in ("capacity", "allocatable", "available"):
        for name, text in sorted((getattr(usage, part) or {}).items()):
            try:
                parse_quantity(text)
            except QuantityError as exc:
                issues.append(FieldIssue(f"status.resourceUsage.{part}{key_path(name)}", str(exc)))
    return issues


class MemberCluster(KubeObject):
    """A member cluster of the fleet; the name becomes the output directory name."""

    api_version: Literal["cluster.kubernetes-fleet.io/v1beta1", "cluster.kubernetes-fleet.io/v1"]
    kind: Literal["MemberCluster"]
    spec: MemberClusterSpec = Field(default_factory=MemberClusterSpec)
    status: MemberClusterStatus | None = None

    @property
    def taints(self) -> list[Taint]:
        """spec.taints, `[]` when absent."""
        return list(self.spec.taints or [])

    def validate_rules(self) -> list[FieldIssue]:
        """DNS-1123 label name; taint syntax; resource usage values are quantities."""
        issues = super().validate_rules() + check_object_name(self.name, file_name=True)
        for i, taint in enumerate(self.taints):
            issues += prefix(f"spec.taints[{i}]", taint.validate_rules())
        if self.status is not None and self.status.resource_usage is not None:
            issues += _usage_rules(self.status.resource_usage)
        return issues


class ClusterManager(KubeModel):
    """The cluster manager owning a ClusterProfile."""

    name: str


class ClusterVersion(KubeModel):
    """Version information of the cluster."""

    kubernetes: str | None = None


class ClusterProfileProperty(KubeModel):
    """A name/value property of a ClusterProfile."""

    name: str = Field(min_length=1, max_length=253)
    value: str = Field(min_length=1, max_length=1024)
    last_observed_time: Timestamp | None = None


class ClusterProfileSpec(KubeModel):
    """displayName and clusterManager."""

    display_name: str | None = None
    cluster_manager: ClusterManager


class ClusterProfileStatus(KubeModel):
    """Conditions, version, properties (credential providers are accepted and ignored)."""

    conditions: list[Condition] | None = None
    version: ClusterVersion | None = None
    properties: list[ClusterProfileProperty] | None = None
    credential_providers: list[dict[str, Any]] | None = None


class ClusterProfile(KubeObject):
    """A cluster in the vendor-neutral cluster inventory API (namespaced)."""

    api_version: Literal["multicluster.x-k8s.io/v1alpha1"]
    kind: Literal["ClusterProfile"]
    spec: ClusterProfileSpec
    status: ClusterProfileStatus | None = None

    def validate_rules(self) -> list[FieldIssue]:
        """The name becomes a member cluster name: DNS-1123 label; namespace required."""
        return (
            super().validate_rules()
            + check_object_name(self.name, file_name=True)
            + check_namespace(self.namespace)
        )


def _latest(stamps: list[str]) -> str | None:
    return max(stamps, key=parse_time) if stamps else None


def _agent_status(status: ClusterProfileStatus) -> list[AgentStatus] | None:
    healthy = find_condition(status.conditions or [], "ControlPlaneHealthy")
    if healthy is None:
        return None
    stamps = [healthy.last_transition_time] if healthy.last_transition_time else []
    stamps += [p.last_observed_time for p in status.properties or [] if p.last_observed_time]
    seen = _latest(stamps)
    joined = Condition(
        type="Joined",
        status="True",
        reason="ClusterProfile",
        last_transition_time=healthy.last_transition_time,
    )
    health = Condition(
        type="Healthy",
        status=healthy.status,
        reason=healthy.reason or "ControlPlaneHealthy",
        message=healthy.message,
        last_transition_time=healthy.last_transition_time,
    )
    return [
        AgentStatus(type="MemberAgent", conditions=[joined, health], last_received_heartbeat=seen)
    ]


def to_member_cluster(profile: ClusterProfile) -> MemberCluster:
    """The MemberCluster a ClusterProfile stands for.

    Mapping: name and labels (annotations too) are copied, the namespace is dropped (MemberCluster
    is cluster-scoped); no taints. Status properties become `status.properties[name] =
    {value, observationTime: lastObservedTime}`; profile conditions are copied to
    `status.conditions`. When a `ControlPlaneHealthy` condition exists, a `MemberAgent` agent
    status is synthesised with `Joined=True` and `Healthy` carrying that condition's status
    (so True means healthy), and `lastReceivedHeartbeat` = the newest of the condition's
    lastTransitionTime and the properties' lastObservedTime. Without that condition there is
    no agent status, so the cluster is eligible only under `clusterEligibility: AssumeJoined`.
    """
    meta = ObjectMeta(
        name=profile.name, labels=profile.metadata.labels, annotations=profile.metadata.annotations
    )
    status = profile.status
    if status is None:
        return MemberCluster(api_version=CLUSTER_V1BETA1, kind="MemberCluster", metadata=meta)
    properties = {
        p.name: PropertyValue(value=p.value, observation_time=p.last_observed_time)
        for p in status.properties or []
    }
    member_status = MemberClusterStatus(
        conditions=status.conditions,
        properties=properties or None,
        agent_status=_agent_status(status),
    )
    return MemberCluster(
        api_version=CLUSTER_V1BETA1, kind="MemberCluster", metadata=meta, status=member_status
    )

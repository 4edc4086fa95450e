"""ClusterResourcePlacement and ResourcePlacement with their spec sub-models and defaults.

Field names follow KubeFleet's `apis/placement/v1beta1/clusterresourceplacement_types.go`.
Defaults are those of KubeFleet's CRD plus `pkg/utils/defaulter/clusterresourceplacement.go`
(§2.1): policy PickAll, RollingUpdate 25%/25%/60s, apply strategy ClientSideApply /
PartialComparison / Always / Always with `serverSideApplyConfig.force: false`,
revisionHistoryLimit 10, tolerations operator Equal, topology maxSkew 1 / DoNotSchedule,
selectionScope NamespaceWithResources (the CRD default, so it appears on every selector).
`status` is accepted as an opaque mapping (exports carry it) and ignored. Webhook rules live in
`gitfleet.api.placement_rules`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, Field, model_validator

from gitfleet.api.base import KubeModel, check_namespace, check_object_name
from gitfleet.api.errors import FieldIssue
from gitfleet.api.intstr import IntOrString
from gitfleet.api.meta import KubeObject
from gitfleet.api.placement_rules import validate_placement_spec
from gitfleet.api.selectors import ClusterSelector, LabelSelector, PreferredClusterSelector
from gitfleet.api.taints import Toleration

PLACEMENT_V1BETA1 = "placement.kubernetes-fleet.io/v1beta1"
PLACEMENT_V1 = "placement.kubernetes-fleet.io/v1"

PlacementType = Literal["PickAll", "PickN", "PickFixed"]
SelectionScope = Literal[
    "NamespaceWithResources", "NamespaceOnly", "NamespaceWithResourceSelectors"
]
ApplyStrategyType = Literal["ClientSideApply", "ServerSideApply", "ReportDiff"]
ComparisonOption = Literal["PartialComparison", "FullComparison"]
WhenToApply = Literal["Always", "IfNotDrifted"]
WhenToTakeOver = Literal["Always", "IfNoDiff", "Never"]
RolloutStrategyType = Literal["RollingUpdate", "External"]


class ResourceSelectorTerm(KubeModel):
    """Selects hub resources by group/version/kind plus name or label selector."""

    group: str
    version: str
    kind: str
    name: str | None = None
    label_selector: LabelSelector | None = None
    selection_scope: SelectionScope = "NamespaceWithResources"

    def is_namespace(self) -> bool:
        """Whether this term selects core/v1 Namespaces."""
        return self.group == "" and self.version == "v1" and self.kind == "Namespace"

    def go_repr(self) -> str:
        """Compact Go-style rendering used in webhook messages."""
        return (
            f"{{Group:{self.group} Version:{self.version} Kind:{self.kind} Name:{self.name or ''}}}"
        )


class ClusterAffinity(KubeModel):
    """Required (filter) and preferred (score) cluster affinity terms."""

    required_during_scheduling_ignored_during_execution: ClusterSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredClusterSelector] | None = (
        None
    )


class Affinity(KubeModel):
    """Scheduling affinity; only cluster affinity exists."""

    cluster_affinity: ClusterAffinity | None = None


class TopologySpreadConstraint(KubeModel):
    """Spread over the values of a cluster label (PickN only)."""

    max_skew: int = Field(default=1, ge=1)
    topology_key: str
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"] = "DoNotSchedule"


class PlacementPolicy(KubeModel):
    """How clusters are picked."""

    placement_type: PlacementType = "PickAll"
    cluster_names: list[str] | None = Field(default=None, max_length=100)
    number_of_clusters: int | None = None
    affinity: Affinity | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] | None = None
    tolerations: list[Toleration] | None = Field(default=None, max_length=100)

    def cluster_affinity(self) -> ClusterAffinity | None:
        """policy.affinity.clusterAffinity, when set."""
        return self.affinity.cluster_affinity if self.affinity else None


class RollingUpdateConfig(KubeModel):
    """Rolling update budgets (§2.4)."""

    max_unavailable: IntOrString = "25%"
    max_surge: IntOrString = "25%"
    unavailable_period_seconds: int = 60


class ServerSideApplyConfig(KubeModel):
    """Server-side apply options; YAML field `force` (KubeFleet's JSON name)."""

    force_conflicts: bool = Field(
        default=False,
        validation_alias=AliasChoices("force", "forceConflicts", "force_conflicts"),
        serialization_alias="force",
    )


class ApplyStrategy(KubeModel):
    """How the agent applies manifests (§6.1)."""

    type: ApplyStrategyType = "ClientSideApply"
    comparison_option: ComparisonOption = "PartialComparison"
    when_to_apply: WhenToApply = "Always"
    when_to_take_over: WhenToTakeOver = "Always"
    allow_co_ownership: bool | None = None
    server_side_apply_config: ServerSideApplyConfig = Field(default_factory=ServerSideApplyConfig)


class DeleteStrategy(KubeModel):
    """What happens to placed resources when the placement is deleted."""

    propagation_policy: Literal["Abandon", "Delete"] = "Delete"


class ReportBackStrategy(KubeModel):
    """Status back-reporting (accepted for compatibility)."""

    type: Literal["Disabled", "Mirror"]
    destination: Literal["OriginalResource", "WorkAPI"] | None = None


class RolloutStrategy(KubeModel):
    """RollingUpdate (default) or External (staged update runs)."""

    type: RolloutStrategyType = "RollingUpdate"
    resource_snapshot_index: str | None = None
    rolling_update: RollingUpdateConfig | None = None
    apply_strategy: ApplyStrategy = Field(default_factory=ApplyStrategy)
    delete_strategy: DeleteStrategy | None = None
    report_back_strategy: ReportBackStrategy | None = None

    @model_validator(mode="before")
    @classmethod
    def _default_rolling_update(cls, data: Any) -> Any:
        """The defaulter adds rollingUpdate only for the RollingUpdate type."""
        if not isinstance(data, dict):
            return data
        kind = data.get("type", "RollingUpdate")
        if kind == "RollingUpdate" and "rollingUpdate" not in data and "rolling_update" not in data:
            return {**data, "rollingUpdate": {}}
        return data


class PlacementSpec(KubeModel):
    """Spec shared by ClusterResourcePlacement and ResourcePlacement."""

    resource_selectors: list[ResourceSelectorTerm] = Field(min_length=1, max_length=100)
    policy: PlacementPolicy = Field(default_factory=PlacementPolicy)
    strategy: RolloutStrategy = Field(default_factory=RolloutStrategy)
    revision_history_limit: int = Field(default=10, ge=1, le=1000)
    status_reporting_scope: Literal["ClusterScopeOnly", "NamespaceAccessible"] = "ClusterScopeOnly"

    @property
    def placement_type(self) -> PlacementType:
        """policy.placementType."""
        return self.policy.placement_type


class ClusterResourcePlacement(KubeObject):
    """Cluster-scoped placement of cluster-scoped resources (and whole namespaces)."""

    api_version: Literal[
        "placement.kubernetes-fleet.io/v1beta1", "placement.kubernetes-fleet.io/v1"
    ]
    kind: Literal["ClusterResourcePlacement"]
    spec: PlacementSpec
    status: dict[str, Any] | None = None

    def validate_rules(self) -> list[FieldIssue]:
        """Name is a DNS-1123 label; spec per the KubeFleet webhook."""
        return (
            super().validate_rules()
            + check_object_name(self.name, file_name=True)
            + validate_placement_spec(self.spec, cluster_scoped=True)
        )


class ResourcePlacement(KubeObject):
    """Namespaced placement of resources of its own namespace."""

    api_version: Literal[
        "placement.kubernetes-fleet.io/v1beta1", "placement.kubernetes-fleet.io/v1"
    ]
    kind: Literal["ResourcePlacement"]
    spec: PlacementSpec
    status: dict[str, Any] | None = None

    def validate_rules(self) -> list[FieldIssue]:
        """Name and namespace are DNS-1123 labels; spec per the KubeFleet webhook."""
        return (
            super().validate_rules()
            + check_object_name(self.name, file_name=True)
            + check_namespace(self.namespace)
            + validate_placement_spec(self.spec, cluster_scoped=False)
        )

"""gitfleet's kinds and shared API types: one class per YAML kind, named exactly as the kind.

Everything the other layers need is re-exported here: the kind classes, the registry
(`parse_object`, `KINDS`), selectors, conditions, taints/tolerations, quantities, IntOrString
scaling, Go durations, name checks, errors and limits.
"""

from gitfleet.api.base import KubeModel
from gitfleet.api.cgu import ClusterGroupUpgrade
from gitfleet.api.cluster import (
    AgentStatus,
    ClusterProfile,
    MemberCluster,
    MemberClusterSpec,
    MemberClusterStatus,
    PropertyValue,
    ResourceUsage,
    to_member_cluster,
)
from gitfleet.api.conditions import (
    Condition,
    ConditionStatus,
    find_condition,
    format_time,
    parse_time,
    set_condition,
)
from gitfleet.api.distribution import ReplicaDistribution
from gitfleet.api.duration import (
    DurationError,
    format_duration,
    format_duration_ns,
    parse_duration,
    parse_duration_ns,
)
from gitfleet.api.errors import FieldIssue, FleetError
from gitfleet.api.eviction import (
    ClusterResourcePlacementDisruptionBudget,
    ClusterResourcePlacementEviction,
    check_budget_for_placement,
)
from gitfleet.api.fleet import Fleet, FleetSpec
from gitfleet.api.intstr import IntOrString, IntOrStringError, ceil_scale, floor_scale
from gitfleet.api.limits import DEFAULT_LIMITS, Limits
from gitfleet.api.meta import KubeObject, ObjectMeta
from gitfleet.api.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
)
from gitfleet.api.override import (
    ClusterResourceOverride,
    JSONPatchOverride,
    OverrideRule,
    ResourceOverride,
    check_override_conflicts,
)
from gitfleet.api.placement import (
    ApplyStrategy,
    ClusterResourcePlacement,
    PlacementPolicy,
    PlacementSpec,
    ResourcePlacement,
    ResourceSelectorTerm,
    RolloutStrategy,
    TopologySpreadConstraint,
)
from gitfleet.api.quantity import Quantity, QuantityError, compare_quantities, parse_quantity
from gitfleet.api.registry import (
    KINDS,
    is_fleet_group,
    is_fleet_kind,
    is_payload_kind,
    parse_object,
)
from gitfleet.api.report import (
    AgentReport,
    DiffedResourcePlacement,
    DriftedResourcePlacement,
    FailedResourcePlacement,
    PatchDetail,
    PlacementReport,
    ResourceIdentifier,
)
from gitfleet.api.selectors import (
    ClusterSelector,
    ClusterSelectorTerm,
    LabelSelector,
    LabelSelectorRequirement,
    PreferredClusterSelector,
    PropertySelector,
    PropertySelectorRequirement,
    PropertySorter,
)
from gitfleet.api.staged import (
    ApprovalRequest,
    ClusterApprovalRequest,
    ClusterStagedUpdateRun,
    ClusterStagedUpdateStrategy,
    StageConfig,
    StagedUpdateRun,
    StagedUpdateStrategy,
    StageTask,
)
from gitfleet.api.taints import Taint, Toleration, first_untolerated, tolerates
from gitfleet.api.tenant import DeletionApproval, Tenant

__all__ = [
    "DEFAULT_LIMITS",
    "KINDS",
    "AgentReport",
    "AgentStatus",
    "ApplyStrategy",
    "ApprovalRequest",
    "ClusterApprovalRequest",
    "ClusterGroupUpgrade",
    "ClusterProfile",
    "ClusterResourceOverride",
    "ClusterResourcePlacement",
    "ClusterResourcePlacementDisruptionBudget",
    "ClusterResourcePlacementEviction",
    "ClusterSelector",
    "ClusterSelectorTerm",
    "ClusterStagedUpdateRun",
    "ClusterStagedUpdateStrategy",
    "Condition",
    "ConditionStatus",
    "DeletionApproval",
    "DiffedResourcePlacement",
    "DriftedResourcePlacement",
    "DurationError",
    "FailedResourcePlacement",
    "FieldIssue",
    "Fleet",
    "FleetError",
    "FleetSpec",
    "IntOrString",
    "IntOrStringError",
    "JSONPatchOverride",
    "KubeModel",
    "KubeObject",
    "LabelSelector",
    "LabelSelectorRequirement",
    "Limits",
    "MemberCluster",
    "MemberClusterSpec",
    "MemberClusterStatus",
    "ObjectMeta",
    "OverrideRule",
    "PatchDetail",
    "PlacementPolicy",
    "PlacementReport",
    "PlacementSpec",
    "PreferredClusterSelector",
    "PropertySelector",
    "PropertySelectorRequirement",
    "PropertySorter",
    "PropertyValue",
    "Quantity",
    "QuantityError",
    "ReplicaDistribution",
    "ResourceIdentifier",
    "ResourceOverride",
    "ResourcePlacement",
    "ResourceSelectorTerm",
    "ResourceUsage",
    "RolloutStrategy",
    "StageConfig",
    "StageTask",
    "StagedUpdateRun",
    "StagedUpdateStrategy",
    "Taint",
    "Tenant",
    "Toleration",
    "TopologySpreadConstraint",
    "ceil_scale",
    "check_budget_for_placement",
    "check_override_conflicts",
    "compare_quantities",
    "find_condition",
    "first_untolerated",
    "floor_scale",
    "format_duration",
    "format_duration_ns",
    "format_time",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_fleet_group",
    "is_fleet_kind",
    "is_label_value",
    "is_payload_kind",
    "is_qualified_name",
    "parse_duration",
    "parse_duration_ns",
    "parse_object",
    "parse_quantity",
    "parse_time",
    "set_condition",
    "to_member_cluster",
    "tolerates",
]

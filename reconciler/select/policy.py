"""KubeFleet's fixed selection policy: disabled kinds, reserved namespaces, unpropagated objects.

These are the hub agent's defaults (`NewResourceConfig(false)`, `ShouldPropagateNamespace`,
`ShouldPropagateObj`, kubefleet.md §7.1) restated as pure predicates on plain manifests. Called by
`reconciler.select.index` (per object, once per pass) and `reconciler.select.selector` (per term).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitfleet.api.reserved import is_reserved_namespace as is_reserved_namespace

PLACEMENT_GROUP = "placement.kubernetes-fleet.io"

DISABLED_GROUPS = frozenset(
    {"cluster.kubernetes-fleet.io", "events.k8s.io", "coordination.k8s.io", "metrics.k8s.io"}
)
_PLACEMENT_KINDS = (
    "ClusterResourcePlacement",
    "ResourcePlacement",
    "ClusterResourceBinding",
    "ResourceBinding",
    "ClusterResourceSnapshot",
    "ResourceSnapshot",
    "ClusterSchedulingPolicySnapshot",
    "SchedulingPolicySnapshot",
    "Work",
    "ClusterStagedUpdateRun",
    "ClusterStagedUpdateStrategy",
    "ClusterApprovalRequest",
    "StagedUpdateRun",
    "StagedUpdateStrategy",
    "ApprovalRequest",
    "ClusterResourcePlacementEviction",
    "ClusterResourcePlacementDisruptionBudget",
    "ClusterResourceOverride",
    "ClusterResourceOverrideSnapshot",
    "ResourceOverride",
    "ResourceOverrideSnapshot",
    "ClusterResourcePlacementStatus",
)
DISABLED_GROUP_KINDS = frozenset(
    {(PLACEMENT_GROUP, kind) for kind in _PLACEMENT_KINDS}
    | {
        ("networking.fleet.azure.com", "ServiceImport"),
        ("networking.fleet.azure.com", "TrafficManagerProfile"),
        ("networking.fleet.azure.com", "TrafficManagerBackend"),
    }
)
DISABLED_GVKS = frozenset({("", "v1", "Pod"), ("", "v1", "Node")})


_SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
_ENDPOINTSLICE_MANAGED_BY = "endpointslice.kubernetes.io/managed-by"


def is_disabled(group: str, version: str, kind: str) -> bool:
    """True for kinds the hub never selects (the default deny list; envelopes are allowed)."""
    return (
        group in DISABLED_GROUPS
        or (group, kind) in DISABLED_GROUP_KINDS
        or (group, version, kind) in DISABLED_GVKS
    )


def is_being_deleted(obj: Mapping[str, Any]) -> bool:
    """An object written with `metadata.deletionTimestamp` is skipped like a deleting object."""
    meta = obj.get("metadata")
    return isinstance(meta, Mapping) and meta.get("deletionTimestamp") is not None


def never_propagated(
    group: str, version: str, kind: str, obj: Mapping[str, Any], has_same_named_service: bool
) -> bool:
    """`ShouldPropagateObj` inverted: objects a cluster creates for itself.

    PersistentVolumeClaims are propagated: gitfleet's hub runs no workloads (KubeFleet skips
    them only when workloads are enabled on the hub).
    """
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    gvk = (group, version, kind)
    if gvk in {("apps", "v1", "ReplicaSet"), ("apps", "v1", "ControllerRevision")}:
        return bool(meta.get("ownerReferences"))
    if gvk == ("", "v1", "ConfigMap"):
        return meta.get("name") == "kube-root-ca.crt"
    if gvk == ("", "v1", "ServiceAccount"):
        return meta.get("name") == "default"
    if gvk == ("", "v1", "Secret"):
        return obj.get("type") == _SERVICE_ACCOUNT_TOKEN
    if gvk == ("", "v1", "Endpoints"):
        return has_same_named_service
    if gvk == ("discovery.k8s.io", "v1", "EndpointSlice"):
        labels = meta.get("labels")
        return isinstance(labels, Mapping) and _ENDPOINTSLICE_MANAGED_BY in labels
    return False

"""Built-in Kubernetes kinds: their REST resources and scope, and the apply waves of §6.2.8.

Used by the in-memory cluster (its discovery table) and by the apply pipeline (wave order).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from gitfleet.agent.client import ResourceInfo


def _kinds(api_version: str, *entries: tuple[str, str, bool]) -> list[ResourceInfo]:
    return [ResourceInfo(api_version, kind, resource, ns) for kind, resource, ns in entries]


BUILTIN_KINDS: Final[tuple[ResourceInfo, ...]] = tuple(
    _kinds(
        "v1",
        ("Namespace", "namespaces", False),
        ("Node", "nodes", False),
        ("PersistentVolume", "persistentvolumes", False),
        ("ConfigMap", "configmaps", True),
        ("Secret", "secrets", True),
        ("Service", "services", True),
        ("ServiceAccount", "serviceaccounts", True),
        ("Pod", "pods", True),
        ("PersistentVolumeClaim", "persistentvolumeclaims", True),
        ("LimitRange", "limitranges", True),
        ("ResourceQuota", "resourcequotas", True),
        ("Endpoints", "endpoints", True),
    )
    + _kinds(
        "apps/v1",
        ("Deployment", "deployments", True),
        ("StatefulSet", "statefulsets", True),
        ("DaemonSet", "daemonsets", True),
        ("ReplicaSet", "replicasets", True),
        ("ControllerRevision", "controllerrevisions", True),
    )
    + _kinds("batch/v1", ("Job", "jobs", True), ("CronJob", "cronjobs", True))
    + _kinds(
        "rbac.authorization.k8s.io/v1",
        ("Role", "roles", True),
        ("RoleBinding", "rolebindings", True),
        ("ClusterRole", "clusterroles", False),
        ("ClusterRoleBinding", "clusterrolebindings", False),
    )
    + _kinds(
        "apiextensions.k8s.io/v1",
        ("CustomResourceDefinition", "customresourcedefinitions", False),
    )
    + _kinds("policy/v1", ("PodDisruptionBudget", "poddisruptionbudgets", True))
    + _kinds(
        "networking.k8s.io/v1",
        ("NetworkPolicy", "networkpolicies", True),
        ("Ingress", "ingresses", True),
        ("IngressClass", "ingressclasses", False),
    )
    + _kinds(
        "storage.k8s.io/v1",
        ("StorageClass", "storageclasses", False),
        ("CSIDriver", "csidrivers", False),
        ("CSINode", "csinodes", False),
        ("CSIStorageCapacity", "csistoragecapacities", True),
    )
    + _kinds("scheduling.k8s.io/v1", ("PriorityClass", "priorityclasses", False))
    + _kinds(
        "admissionregistration.k8s.io/v1",
        ("ValidatingWebhookConfiguration", "validatingwebhookconfigurations", False),
        ("MutatingWebhookConfiguration", "mutatingwebhookconfigurations", False),
    )
    + _kinds("apiregistration.k8s.io/v1", ("APIService", "apiservices", False))
)

_WAVES: Final[dict[str, int]] = {
    "Namespace": 0,
    "PriorityClass": 0,
    "NetworkPolicy": 1,
    "ResourceQuota": 1,
    "LimitRange": 1,
    "PodDisruptionBudget": 1,
    "ServiceAccount": 1,
    "Secret": 1,
    "ConfigMap": 1,
    "StorageClass": 1,
    "PersistentVolume": 1,
    "PersistentVolumeClaim": 1,
    "CustomResourceDefinition": 1,
    "IngressClass": 1,
    "ClusterRole": 2,
    "Role": 2,
    "ClusterRoleBinding": 3,
    "RoleBinding": 3,
    "Service": 4,
    "DaemonSet": 4,
    "Pod": 4,
    "ReplicationController": 4,
    "ReplicaSet": 4,
    "Deployment": 4,
    "HorizontalPodAutoscaler": 4,
    "StatefulSet": 4,
    "Job": 4,
    "CronJob": 4,
    "Ingress": 4,
    "APIService": 5,
    "MutatingWebhookConfiguration": 5,
    "ValidatingWebhookConfiguration": 5,
}
_CORE_GROUPS: Final = frozenset(
    {
        "",
        "apps",
        "batch",
        "rbac.authorization.k8s.io",
        "apiextensions.k8s.io",
        "policy",
        "networking.k8s.io",
        "storage.k8s.io",
        "scheduling.k8s.io",
        "admissionregistration.k8s.io",
        "apiregistration.k8s.io",
        "autoscaling",
    }
)
LAST_WAVE: Final = 999


def group_of(api_version: str) -> str:
    """The API group of an apiVersion ('' for the core group `v1`)."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def wave_of(api_version: str, kind: str) -> int:
    """The apply wave of a kind (§6.2.8); custom resources come last (999)."""
    if group_of(api_version) not in _CORE_GROUPS:
        return LAST_WAVE
    return _WAVES.get(kind, LAST_WAVE)


def crd_kinds(crd: Mapping[str, Any]) -> list[ResourceInfo]:
    """The kinds a CustomResourceDefinition serves, one per served version."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, namespaced = str(spec.get("group", "")), spec.get("scope") == "Namespaced"
    return [
        ResourceInfo(
            f"{group}/{v.get('name')}", str(names.get("kind")), str(names.get("plural")), namespaced
        )
        for v in spec.get("versions") or []
        if isinstance(v, dict) and v.get("served", True)
    ]

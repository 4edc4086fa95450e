"""The order of resources inside a resource snapshot (KubeFleet's `sortResources`, §7.3).

Known kinds by a fixed priority (matched on the kind name alone, whatever the group), then by
`group/version`, then by `namespace/name`; unknown kinds after all known ones, by Go's full GVK
string (`group/version, Kind=kind`), then `namespace/name`. Called by the index (one key per
object) and by the selector to sort a selection.
"""

from __future__ import annotations

from collections.abc import Iterable

KIND_ORDER: dict[str, int] = {
    kind: rank
    for rank, kind in enumerate(
        (
            "PriorityClass",
            "Namespace",
            "NetworkPolicy",
            "ResourceQuota",
            "LimitRange",
            "PodDisruptionBudget",
            "ServiceAccount",
            "Secret",
            "ConfigMap",
            "StorageClass",
            "PersistentVolume",
            "PersistentVolumeClaim",
            "CustomResourceDefinition",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding",
            "Service",
            "DaemonSet",
            "Pod",
            "ReplicationController",
            "ReplicaSet",
            "Deployment",
            "HorizontalPodAutoscaler",
            "StatefulSet",
            "Job",
            "CronJob",
            "IngressClass",
            "Ingress",
            "APIService",
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        )
    )
}

SortKey = tuple[int, int, str, str]


def group_version(group: str, version: str) -> str:
    """Go's `GroupVersion.String()`."""
    return f"{group}/{version}" if group else version


def sort_key(group: str, version: str, kind: str, namespace: str, name: str) -> SortKey:
    """A key whose natural order is KubeFleet's snapshot order."""
    rank = KIND_ORDER.get(kind)
    ident = f"{namespace}/{name}"
    if rank is None:
        return (1, 0, f"{group}/{version}, Kind={kind}", ident)
    return (0, rank, group_version(group, version), ident)


def sort_identities(items: Iterable[tuple[str, str, str, str, str]]) -> list[tuple[str, ...]]:
    """(group, version, kind, namespace, name) tuples in snapshot order (for tests and tools)."""
    return sorted(items, key=lambda item: sort_key(*item))

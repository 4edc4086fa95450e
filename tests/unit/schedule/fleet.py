"""Builders shared by the scheduler tests: cluster views and placements from plain dicts."""

from __future__ import annotations

from typing import Any

from gitfleet.api import ClusterResourcePlacement, MemberCluster, ResourcePlacement
from reconciler.schedule.clusters import ClusterView

SELECTORS = [{"group": "", "version": "v1", "kind": "Namespace", "name": "a"}]


def cluster(
    name: str,
    labels: dict[str, str] | None = None,
    *,
    taints: list[dict[str, str]] | None = None,
    props: dict[str, str] | None = None,
    usage: dict[str, dict[str, str]] | None = None,
    namespaces: dict[str, str] | None = None,
    ns_collected: bool = False,
    ineligible: str | None = None,
    leaving: bool = False,
) -> ClusterView:
    """A ClusterView; status parts only when given."""
    status: dict[str, Any] = {}
    if props:
        status["properties"] = {k: {"value": v} for k, v in props.items()}
    if usage:
        status["resourceUsage"] = usage
    if namespaces is not None:
        status["namespaces"] = namespaces
    if ns_collected:
        status["conditions"] = [
            {"type": "NamespaceCollectionSucceeded", "status": "True", "reason": "Collected"}
        ]
    metadata: dict[str, Any] = {"name": name, "labels": labels or {}}
    if leaving:
        metadata["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    body: dict[str, Any] = {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": metadata,
        "spec": {"taints": taints or []},
    }
    if status:
        body["status"] = status
    reason = (
        ineligible
        if ineligible is not None
        else ("cluster has left the fleet" if leaving else None)
    )
    return ClusterView(name, MemberCluster.model_validate(body), reason)


def fleet(*views: ClusterView) -> dict[str, ClusterView]:
    return {v.name: v for v in views}


def crp(placement_type: str = "PickAll", **policy: Any) -> ClusterResourcePlacement:
    return ClusterResourcePlacement.model_validate(
        {
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "p"},
            "spec": {
                "resourceSelectors": SELECTORS,
                "policy": {"placementType": placement_type, **policy},
            },
        }
    )


def rp(namespace: str, placement_type: str = "PickAll", **policy: Any) -> ResourcePlacement:
    return ResourcePlacement.model_validate(
        {
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ResourcePlacement",
            "metadata": {"name": "p", "namespace": namespace},
            "spec": {
                "resourceSelectors": [
                    {"group": "", "version": "v1", "kind": "ConfigMap", "name": "c"}
                ],
                "policy": {"placementType": placement_type, **policy},
            },
        }
    )


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "clusterAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": list(terms)}
        }
    }


def preferred(*terms: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {
        "clusterAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "preference": p} for w, p in terms
            ]
        }
    }


def prop(name: str, op: str, *values: str) -> dict[str, Any]:
    return {
        "propertySelector": {
            "matchExpressions": [{"name": name, "operator": op, "values": list(values)}]
        }
    }


def sorter(name: str, order: str = "Descending", **extra: Any) -> dict[str, Any]:
    return {"propertySorter": {"name": name, "sortOrder": order}, **extra}


def spread(key: str, max_skew: int = 1, when: str = "DoNotSchedule") -> dict[str, Any]:
    return {"topologyKey": key, "maxSkew": max_skew, "whenUnsatisfiable": when}

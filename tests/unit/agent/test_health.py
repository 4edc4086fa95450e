"""Availability per kind (§2.5) and cluster properties."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.agent.health import DATA_KINDS, availability
from gitfleet.agent.memory import InMemoryCluster
from gitfleet.agent.properties import collect_properties

from .conftest import NOW


def obj(
    api: str, kind: str, spec: Any = None, status: Any = None, generation: int = 3
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": "x", "generation": generation},
    }
    if spec is not None:
        out["spec"] = spec
    if status is not None:
        out["status"] = status
    return out


DEPLOY_OK = {"observedGeneration": 3, "availableReplicas": 2, "updatedReplicas": 2}
STS_OK = {
    "observedGeneration": 3,
    "availableReplicas": 1,
    "currentReplicas": 1,
    "updatedReplicas": 1,
    "currentRevision": "r1",
    "updateRevision": "r1",
}
DS_OK = {
    "observedGeneration": 3,
    "numberAvailable": 3,
    "desiredNumberScheduled": 3,
    "currentNumberScheduled": 3,
    "updatedNumberScheduled": 3,
}


def cond(type_: str, status: str, reason: str = "") -> dict[str, str]:
    return {"type": type_, "status": status, "reason": reason}


CASES = [
    (obj("apps/v1", "Deployment", {"replicas": 2}, DEPLOY_OK), "Available"),
    (
        obj("apps/v1", "Deployment", {"replicas": 2}, {**DEPLOY_OK, "observedGeneration": 2}),
        "NotYetAvailable",
    ),
    (
        obj("apps/v1", "Deployment", {"replicas": 2}, {**DEPLOY_OK, "unavailableReplicas": 1}),
        "NotYetAvailable",
    ),
    (
        obj(
            "apps/v1", "Deployment", {}, {**DEPLOY_OK, "availableReplicas": 1, "updatedReplicas": 1}
        ),
        "Available",
    ),
    (
        obj("apps/v1", "Deployment", {"replicas": 2}, {**DEPLOY_OK, "updatedReplicas": 1}),
        "NotYetAvailable",
    ),
    (obj("apps/v1", "StatefulSet", {}, STS_OK), "Available"),
    (obj("apps/v1", "StatefulSet", {}, {**STS_OK, "updateRevision": "r2"}), "NotYetAvailable"),
    (obj("apps/v1", "StatefulSet", {}, {**STS_OK, "updatedReplicas": 0}), "NotYetAvailable"),
    (obj("apps/v1", "DaemonSet", {}, DS_OK), "Available"),
    (obj("apps/v1", "DaemonSet", {}, {**DS_OK, "numberAvailable": 2}), "NotYetAvailable"),
    (obj("apps/v1", "DaemonSet", {}, {**DS_OK, "updatedNumberScheduled": 2}), "NotYetAvailable"),
    (obj("v1", "Service", {"clusterIPs": ["10.0.0.1"]}), "Available"),
    (obj("v1", "Service", {"type": "NodePort", "clusterIPs": ["None"]}), "Available"),
    (obj("v1", "Service", {"clusterIP": "10.0.0.1"}), "NotYetAvailable"),
    (obj("v1", "Service", {"clusterIPs": [""]}), "NotYetAvailable"),
    (
        obj(
            "v1",
            "Service",
            {"type": "LoadBalancer"},
            {"loadBalancer": {"ingress": [{"hostname": "lb"}]}},
        ),
        "Available",
    ),
    (
        obj(
            "v1",
            "Service",
            {"type": "LoadBalancer"},
            {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}},
        ),
        "Available",
    ),
    (
        obj("v1", "Service", {"type": "LoadBalancer", "clusterIPs": ["10.0.0.1"]}, {}),
        "NotYetAvailable",
    ),
    (obj("v1", "Service", {"type": "ExternalName"}), "NotTrackable"),
    (
        obj(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            {},
            {"conditions": [cond("Established", "True"), cond("NamesAccepted", "True")]},
        ),
        "Available",
    ),
    (
        obj(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            {},
            {"conditions": [cond("Established", "True")]},
        ),
        "NotYetAvailable",
    ),
    (
        obj(
            "policy/v1",
            "PodDisruptionBudget",
            {},
            {
                "observedGeneration": 3,
                "disruptionsAllowed": 1,
                "conditions": [cond("DisruptionAllowed", "True", "SufficientPods")],
            },
        ),
        "Available",
    ),
    (
        obj(
            "policy/v1",
            "PodDisruptionBudget",
            {},
            {
                "observedGeneration": 3,
                "disruptionsAllowed": 0,
                "conditions": [cond("DisruptionAllowed", "False", "InsufficientPods")],
            },
        ),
        "Available",
    ),
    (
        obj(
            "policy/v1",
            "PodDisruptionBudget",
            {},
            {
                "observedGeneration": 3,
                "disruptionsAllowed": 0,
                "conditions": [cond("DisruptionAllowed", "True", "SufficientPods")],
            },
        ),
        "NotYetAvailable",
    ),
    (
        obj(
            "policy/v1",
            "PodDisruptionBudget",
            {},
            {
                "observedGeneration": 2,
                "disruptionsAllowed": 1,
                "conditions": [cond("DisruptionAllowed", "True", "SufficientPods")],
            },
        ),
        "NotYetAvailable",
    ),
    (obj("policy/v1", "PodDisruptionBudget", {}, {"observedGeneration": 3}), "NotYetAvailable"),
    (obj("batch/v1", "Job", {}, {"succeeded": 1}), "NotTrackable"),
    (obj("batch/v1", "CronJob"), "NotTrackable"),
    (obj("example.com/v1", "Widget"), "NotTrackable"),
    (obj("example.com/v1", "ConfigMap"), "NotTrackable"),
    (obj("v1", "PersistentVolumeClaim"), "NotTrackable"),
]
DATA = [
    (obj(api, kind), "Available")
    for kind, api in sorted(
        {
            "Namespace": "v1",
            "Secret": "v1",
            "ConfigMap": "v1",
            "ServiceAccount": "v1",
            "LimitRange": "v1",
            "ResourceQuota": "v1",
            "Role": "rbac.authorization.k8s.io/v1",
            "ClusterRole": "rbac.authorization.k8s.io/v1",
            "RoleBinding": "rbac.authorization.k8s.io/v1",
            "ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
            "NetworkPolicy": "networking.k8s.io/v1",
            "IngressClass": "networking.k8s.io/v1",
            "CSIDriver": "storage.k8s.io/v1",
            "CSINode": "storage.k8s.io/v1",
            "StorageClass": "storage.k8s.io/v1",
            "CSIStorageCapacity": "storage.k8s.io/v1",
            "ControllerRevision": "apps/v1",
            "PriorityClass": "scheduling.k8s.io/v1",
        }.items()
    )
]


@pytest.mark.parametrize(("live", "state"), CASES + DATA)
def test_availability_per_kind(live: dict[str, Any], state: str) -> None:
    assert availability(live)[0] == state


def test_data_kinds_table_is_complete() -> None:
    assert {o["kind"] for o, _ in DATA} == DATA_KINDS


def node(
    name: str, cpu: str, memory: str, alloc_cpu: str, alloc_memory: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
    status = {
        "capacity": {"cpu": cpu, "memory": memory},
        "allocatable": {"cpu": alloc_cpu, "memory": alloc_memory},
    }
    return body, status


def pod(
    name: str, phase: str, cpu: str, memory: str, node_name: str = "n1"
) -> tuple[dict[str, Any], dict[str, Any]]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
        ]
    }
    if node_name:
        spec["nodeName"] = node_name
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "app"},
        "spec": spec,
    }
    return body, {"phase": phase}


@pytest.mark.parametrize(
    ("pods", "available"),
    [
        ([], {"cpu": "7", "memory": "30Gi"}),
        ([pod("a", "Running", "500m", "1Gi")], {"cpu": "6500m", "memory": "29Gi"}),
        (
            [
                pod("a", "Running", "500m", "1Gi"),
                pod("b", "Succeeded", "2", "8Gi"),
                pod("c", "Pending", "1", "1Gi", ""),
            ],
            {"cpu": "6500m", "memory": "29Gi"},
        ),
        ([pod("a", "Running", "100", "100Gi")], {"cpu": "0", "memory": "0"}),
    ],
)
def test_properties_from_nodes_and_pods(
    pods: list[tuple[dict[str, Any], dict[str, Any]]], available: dict[str, str]
) -> None:
    cluster = InMemoryCluster()
    cluster.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}},
        field_manager="t",
        force=False,
        dry_run=False,
    )
    for body, status in [
        node("n1", "4", "16Gi", "3500m", "15Gi"),
        node("n2", "4", "16Gi", "3500m", "15Gi"),
        *pods,
    ]:
        cluster.apply(body, field_manager="t", force=False, dry_run=False)
        meta = body["metadata"]
        cluster.set_status("v1", body["kind"], meta.get("namespace"), meta["name"], status)
    properties, usage = collect_properties(cluster, NOW)
    assert properties["kubernetes-fleet.io/node-count"].value == "2"
    assert usage.capacity == {"cpu": "8", "memory": "32Gi"}
    assert usage.allocatable == {"cpu": "7", "memory": "30Gi"}
    assert usage.available == available

"""Stripping before snapshotting (kubefleet.md §7.2): metadata, status, Service and Job cases."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reconciler.select import strip_object

BASE_META = {
    "name": "x",
    "namespace": "app",
    "labels": {"a": "b"},
    "finalizers": ["f"],
    "generateName": "x-",
    "deletionGracePeriodSeconds": 30,
}
SERVER_META = {
    "resourceVersion": "42",
    "generation": 3,
    "uid": "u-1",
    "selfLink": "/api/x",
    "deletionTimestamp": "2024-01-01T00:00:00Z",
    "managedFields": [{"manager": "kubectl"}],
    "ownerReferences": [{"kind": "Deployment", "name": "d", "uid": "1"}],
    "creationTimestamp": None,
}


def cm(**meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {**BASE_META, **meta}}


def svc(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": spec}


def job(spec: dict[str, Any], api_version: str = "batch/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "Job", "metadata": {"name": "j"}, "spec": spec}


UID = "controller-uid"
BUID = "batch.kubernetes.io/controller-uid"
TEMPLATE = {"metadata": {"creationTimestamp": None, "labels": {UID: "1", BUID: "1", "app": "j"}}}

CASES = [
    ("server metadata dropped, the rest kept", cm(**SERVER_META), cm()),
    ("status dropped", {**cm(), "status": {"phase": "x"}}, cm()),
    (
        "last-applied and revision annotations dropped, map removed when empty",
        cm(
            annotations={
                "kubectl.kubernetes.io/last-applied-configuration": "{}",
                "deployment.kubernetes.io/revision": "3",
            }
        ),
        cm(),
    ),
    (
        "other annotations kept",
        cm(annotations={"deployment.kubernetes.io/revision": "3", "team": "a"}),
        cm(annotations={"team": "a"}),
    ),
    ("empty annotations map removed", cm(annotations={}), cm()),
    (
        "service clusterIP set: clusterIP(s) removed",
        svc({"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"], "type": "ClusterIP"}),
        svc({"type": "ClusterIP"}),
    ),
    (
        "service clusterIP None: kept",
        svc({"clusterIP": "None", "clusterIPs": ["None"]}),
        svc({"clusterIP": "None", "clusterIPs": ["None"]}),
    ),
    (
        "service without clusterIP keeps clusterIPs",
        svc({"clusterIPs": ["10.0.0.1"]}),
        svc({"clusterIPs": ["10.0.0.1"]}),
    ),
    (
        "service nodePorts and healthCheckNodePort removed",
        svc(
            {
                "type": "LoadBalancer",
                "healthCheckNodePort": 32000,
                "ports": [{"port": 80, "nodePort": 30080}, {"port": 443}],
            }
        ),
        svc({"type": "LoadBalancer", "ports": [{"port": 80}, {"port": 443}]}),
    ),
    (
        "service rules only for apiVersion v1",
        {**svc({"clusterIP": "1.2.3.4"}), "apiVersion": "example.com/v1"},
        {**svc({"clusterIP": "1.2.3.4"}), "apiVersion": "example.com/v1"},
    ),
    (
        "job without manualSelector: controller-uid labels and template timestamp removed",
        job({"selector": {"matchLabels": {UID: "1", BUID: "1", "a": "b"}}, "template": TEMPLATE}),
        job(
            {
                "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"app": "j"}}},
            }
        ),
    ),
    (
        "job with manualSelector false is stripped too",
        job({"manualSelector": False, "selector": {"matchLabels": {UID: "1"}}}),
        job({"manualSelector": False, "selector": {"matchLabels": {}}}),
    ),
    (
        "job with manualSelector true: untouched",
        job(
            {"manualSelector": True, "selector": {"matchLabels": {UID: "1"}}, "template": TEMPLATE}
        ),
        job(
            {"manualSelector": True, "selector": {"matchLabels": {UID: "1"}}, "template": TEMPLATE}
        ),
    ),
    (
        "job rules only for batch/v1",
        job({"selector": {"matchLabels": {UID: "1"}}}, api_version="batch/v1beta1"),
        job({"selector": {"matchLabels": {UID: "1"}}}, api_version="batch/v1beta1"),
    ),
]


@pytest.mark.parametrize(("case", "given", "expected"), CASES, ids=[c[0] for c in CASES])
def test_strip(case: str, given: dict[str, Any], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(given)
    assert strip_object(given) == expected
    assert given == before, "input must not be mutated"


def test_strip_returns_independent_copy() -> None:
    given = cm()
    out = strip_object(given)
    out["metadata"]["labels"]["a"] = "changed"
    assert given["metadata"]["labels"]["a"] == "b"

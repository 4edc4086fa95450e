"""The agent against a real kube-apiserver: server-side apply, idempotence, conflicts, CRDs,
stringData Secrets, pruning, finalizers and availability (through the real `kube.py`)."""

from __future__ import annotations

import base64
import time
from typing import Any

import pytest

from gitfleet.agent.inventory import read_inventory
from tests.helpers.manifests import make_widget, make_widget_crd
from tests.kube.apiserver import ApiServer
from tests.kube.conftest import Counting, Names
from tests.kube.helpers import (
    agent_pass,
    cond,
    failures,
    other_manager_apply,
    pass_condition,
    set_status,
)
from tests.unit.agent.conftest import COMMIT2, SSA_CONFLICTS, cm, deployment, ns


def secret(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "Opaque",
        "stringData": {"password": "s3cret-value"},
    }


def service(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 8080}]},
    }


def test_first_pass_creates_with_ssa_and_second_pass_writes_nothing(
    kube: Counting, names: Names
) -> None:
    n = names.namespace
    objs = [ns(n), cm("cfg", n), deployment("web", n), service("web", n), secret("db", n)]
    first = agent_pass(kube, names.cluster, {names.key: objs})
    assert cond(first, names.key, "Applied") == ("True", "AllWorkHaveBeenApplied"), failures(
        first, names.key
    )
    assert len(kube.writes) >= len(objs)
    live = kube.get("apps/v1", "Deployment", n, "web")
    assert live is not None
    managers = {(m["manager"], m["operation"]) for m in live["metadata"]["managedFields"]}
    assert ("gitfleet", "Apply") in managers
    assert live["metadata"]["labels"]["gitfleet.io/cluster"] == names.cluster
    stored = kube.get("v1", "Secret", n, "db")
    assert stored is not None and "stringData" not in stored
    assert base64.b64decode(stored["data"]["password"]) == b"s3cret-value"
    versions = {o: kube.get(*o)["metadata"]["resourceVersion"] for o in _ids(n)}  # type: ignore[index]
    kube.writes.clear()
    second = agent_pass(kube, names.cluster, {names.key: objs}, first)
    assert kube.writes == []
    assert second.placements == first.placements
    assert {o: kube.get(*o)["metadata"]["resourceVersion"] for o in _ids(n)} == versions  # type: ignore[index]


def _ids(n: str) -> list[tuple[str, str, str | None, str]]:
    return [
        ("v1", "ConfigMap", n, "cfg"),
        ("apps/v1", "Deployment", n, "web"),
        ("v1", "Service", n, "web"),
        ("v1", "Secret", n, "db"),
    ]


@pytest.mark.parametrize(
    ("strategy", "replicas", "applied", "manager_text"),
    SSA_CONFLICTS,
    ids=["ssa-conflict-reported", "ssa-forced", "client-side-forced"],
)
def test_conflict_with_another_field_manager(
    kube: Counting,
    names: Names,
    strategy: dict[str, Any],
    replicas: int,
    applied: tuple[str, str],
    manager_text: str,
) -> None:
    n = names.namespace
    objs = [ns(n), deployment("web", n)]
    first = agent_pass(kube, names.cluster, {names.key: objs}, strategy=strategy)
    assert cond(first, names.key, "Applied") == ("True", "AllWorkHaveBeenApplied")
    scale = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": n},
        "spec": {"replicas": 5},
    }
    other_manager_apply(kube, scale)
    second = agent_pass(kube, names.cluster, {names.key: objs}, first, strategy=strategy)
    assert cond(second, names.key, "Applied") == applied
    live = kube.get("apps/v1", "Deployment", n, "web")
    assert live is not None and live["spec"]["replicas"] == replicas
    if manager_text:
        ((name, reason, message),) = failures(second, names.key)
        assert (name, reason) == ("web", "ManifestApplyFailed")
        assert manager_text in message and ".spec.replicas" in message


CRD = make_widget_crd(full=True)


def test_namespace_and_crd_first_then_custom_resource(kube: Counting, names: Names) -> None:
    n = names.namespace
    report = agent_pass(kube, names.cluster, {names.key: [make_widget(n), CRD, ns(n)]})
    assert failures(report, names.key) == []
    assert cond(report, names.key, "Applied") == ("True", "AllWorkHaveBeenApplied")
    assert cond(report, names.key, "Available") == ("True", "NotAllWorkAreAvailabilityTrackable")
    live = kube.get("example.com/v1", "Widget", n, "w")
    assert live is not None and live["spec"] == {"size": 1}
    kube.writes.clear()
    agent_pass(kube, names.cluster, {names.key: [make_widget(n), CRD, ns(n)]}, report)
    assert kube.writes == []


def test_crd_without_schema_is_rejected_by_the_real_server(kube: Counting, names: Names) -> None:
    bare = {**CRD, "metadata": {"name": "gadgets.example.com"}}
    bare["spec"] = {
        **CRD["spec"],  # type: ignore[dict-item]
        "names": {"kind": "Gadget", "plural": "gadgets"},
        "versions": [{"name": "v1", "served": True, "storage": True}],
    }
    report = agent_pass(kube, names.cluster, {names.key: [bare]})
    ((name, reason, message),) = failures(report, names.key)
    assert (name, reason) == ("gadgets.example.com", "ManifestApplyFailed")
    assert "openAPIV3Schema" in message


def test_prune_only_recorded_objects_and_report_finalizer_blocked_deletion(
    kube: Counting, names: Names, apiserver: ApiServer
) -> None:
    n = names.namespace
    held = cm("held", n)
    held["metadata"]["finalizers"] = ["example.com/hold"]
    first = agent_pass(kube, names.cluster, {names.key: [ns(n), cm("a", n), cm("b", n), held]})
    stranger = cm("stranger", n)
    stranger["metadata"]["labels"] = {
        "gitfleet.io/placement": names.key,
        "gitfleet.io/cluster": names.cluster,
    }
    other_manager_apply(kube, stranger, "someone-else")
    second = agent_pass(
        kube, names.cluster, {names.key: [ns(n), cm("a", n)]}, first, commit=COMMIT2
    )
    assert kube.get("v1", "ConfigMap", n, "b") is None
    assert kube.get("v1", "ConfigMap", n, "a") is not None
    assert kube.get("v1", "ConfigMap", n, "stranger") is not None  # never recorded: not pruned
    blocked = kube.get("v1", "ConfigMap", n, "held")
    assert blocked is not None and blocked["metadata"]["deletionTimestamp"]
    status, reason, message = pass_condition(second)
    assert (status, reason) == ("False", "PruneFailed")
    assert f"ConfigMap/{n}/held" in message and "example.com/hold" in message
    assert ("v1", "ConfigMap", n, "held") in read_inventory(kube)[names.key]
    kube.patch(
        "v1", "ConfigMap", n, "held", {"metadata": {"finalizers": None}}, field_manager="ctl"
    )
    assert kube.get("v1", "ConfigMap", n, "held") is None
    third = agent_pass(
        kube, names.cluster, {names.key: [ns(n), cm("a", n)]}, second, commit=COMMIT2
    )
    assert pass_condition(third)[0] == "True"
    assert ("v1", "ConfigMap", n, "held") not in read_inventory(kube)[names.key]


def test_pruned_namespace_stays_terminating_without_a_namespace_controller(
    kube: Counting, names: Names
) -> None:
    n = names.namespace
    first = agent_pass(
        kube, names.cluster, {names.key: [ns(n), cm("a", n)], "keep": [ns(n + "-k")]}
    )
    second = agent_pass(kube, names.cluster, {"keep": [ns(n + "-k")]}, first, commit=COMMIT2)
    live = kube.get("v1", "Namespace", None, n)
    assert live is not None and live["status"]["phase"] == "Terminating"
    status, reason, message = pass_condition(second)
    assert (status, reason) == ("False", "PruneFailed") and "spec.finalizers kubernetes" in message


def test_deployment_availability_follows_the_status_subresource(
    kube: Counting, names: Names, apiserver: ApiServer
) -> None:
    n = names.namespace
    objs = [ns(n), deployment("web", n, replicas=2), service("web", n)]
    first = agent_pass(kube, names.cluster, {names.key: objs})
    assert cond(first, names.key, "Available") == ("False", "NotAllWorkAreAvailable")
    live = kube.get("apps/v1", "Deployment", n, "web")
    assert live is not None
    status = {
        "observedGeneration": live["metadata"]["generation"],
        "replicas": 2,
        "updatedReplicas": 2,
        "readyReplicas": 2,
        "availableReplicas": 2,
    }
    set_status(apiserver, live, status)
    second = agent_pass(kube, names.cluster, {names.key: objs}, first)
    assert cond(second, names.key, "Available") == ("True", "AllWorkAreAvailable")
    set_status(apiserver, live, {**status, "availableReplicas": 1, "unavailableReplicas": 1})
    time.sleep(0.1)
    third = agent_pass(kube, names.cluster, {names.key: objs}, second)
    assert cond(third, names.key, "Available") == ("False", "NotAllWorkAreAvailable")

"""InMemoryCluster: the API behaviour the agent relies on, and the agent's finalizer handling."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.agent.client import Conflict, Invalid, NotFound, ServerError, Throttled
from gitfleet.agent.inventory import read_inventory
from gitfleet.agent.memory import InMemoryCluster
from gitfleet.agent.run import run_once
from gitfleet.api import find_condition

from .conftest import COMMIT, COMMIT2, NOW, cm, deployment, directory, ns, options


def make() -> InMemoryCluster:
    cluster = InMemoryCluster()
    cluster.apply(ns("app"), field_manager="m", force=False, dry_run=False)
    return cluster


def apply(
    cluster: InMemoryCluster, obj: dict[str, Any], manager: str = "m", **kw: bool
) -> dict[str, Any]:
    return cluster.apply(
        obj, field_manager=manager, force=kw.get("force", False), dry_run=kw.get("dry_run", False)
    )


def test_generation_and_resource_version() -> None:
    cluster = make()
    first = apply(cluster, deployment("d"))
    same = apply(cluster, deployment("d"))
    assert same["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    labelled = deployment("d")
    labelled["metadata"]["labels"] = {"a": "b"}
    meta_only = apply(cluster, labelled)
    assert meta_only["metadata"]["generation"] == 1
    assert meta_only["metadata"]["resourceVersion"] != first["metadata"]["resourceVersion"]
    changed = apply(cluster, deployment("d", replicas=3))
    assert changed["metadata"]["generation"] == 2 and "labels" not in changed["metadata"]


def test_dry_run_stores_nothing_and_status_is_a_subresource() -> None:
    cluster = make()
    apply(cluster, cm("a"), dry_run=True)
    assert cluster.get("v1", "ConfigMap", "app", "a") is None
    body = {**cm("a"), "status": {"x": 1}}
    apply(cluster, body)
    assert "status" not in cluster.get("v1", "ConfigMap", "app", "a")  # type: ignore[operator]
    cluster.set_status("v1", "ConfigMap", "app", "a", {"y": 2})
    apply(cluster, cm("a", k="2"))
    assert cluster.get("v1", "ConfigMap", "app", "a")["status"] == {"y": 2}  # type: ignore[index]


@pytest.mark.parametrize(
    ("second", "force", "error"),
    [("b", False, Conflict), ("b", True, None), ("m", False, None)],
)
def test_field_ownership_conflicts(second: str, force: bool, error: type[Exception] | None) -> None:
    cluster = make()
    apply(cluster, cm("a", k="1"))
    if error:
        with pytest.raises(error):
            apply(cluster, cm("a", k="2"), second, force=force)
        return
    result = apply(cluster, cm("a", k="2"), second, force=force)
    assert result["data"] == {"k": "2"}
    owners = {f["manager"]: f["fieldsV1"] for f in result["metadata"]["managedFields"]}
    assert "f:k" in owners[second]["f:data"]  # the API server's fieldsV1 encoding


def test_fields_removed_when_no_longer_applied_unless_shared() -> None:
    cluster = make()
    apply(cluster, cm("a", k="1", j="2"))
    apply(cluster, cm("a", j="2"), "other")
    result = apply(cluster, cm("a", z="3"))
    assert result["data"] == {"j": "2", "z": "3"}


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda c: apply(c, cm("a", namespace="nope")), NotFound),
        (
            lambda c: apply(c, {"apiVersion": "v1", "kind": "Nope", "metadata": {"name": "a"}}),
            NotFound,
        ),
        (
            lambda c: apply(
                c, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
            ),
            Invalid,
        ),
        (lambda c: c.delete("v1", "ConfigMap", "app", "missing"), NotFound),
    ],
)
def test_errors(call: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        call(make())


def test_injected_http_failures() -> None:
    cluster = make()
    cluster.fail_next(1, 429)
    cluster.fail_next(1, 500)
    with pytest.raises(Throttled):
        cluster.get("v1", "ConfigMap", "app", "a")
    with pytest.raises(ServerError):
        cluster.get("v1", "ConfigMap", "app", "a")
    assert cluster.get("v1", "ConfigMap", "app", "a") is None


def test_prune_of_object_with_finalizer_waits_for_controller() -> None:
    cluster = InMemoryCluster()
    held = cm("held")
    held["metadata"]["finalizers"] = ["example.com/cleanup"]
    report = run_once(
        cluster,
        "c1",
        directory("c1", {"app": [ns("app"), held, cm("b")]}),
        COMMIT,
        None,
        NOW,
        options(),
    )
    remaining = directory("c1", {"app": [ns("app"), cm("b")]})
    blocked = run_once(cluster, "c1", remaining, COMMIT2, report, NOW, options())
    live = cluster.get("v1", "ConfigMap", "app", "held")
    assert live is not None and live["metadata"]["deletionTimestamp"]
    passed = find_condition(blocked.conditions, "gitfleet.io/PassCompleted")
    assert passed is not None and (passed.status, passed.reason) == ("False", "PruneFailed")
    assert "ConfigMap/app/held" in passed.message and "example.com/cleanup" in passed.message
    assert ("v1", "ConfigMap", "app", "held") in read_inventory(cluster)["app"]
    cluster.patch(
        "v1",
        "ConfigMap",
        "app",
        "held",
        {"metadata": {"finalizers": None}},
        field_manager="controller",
    )
    assert cluster.get("v1", "ConfigMap", "app", "held") is None
    done = run_once(cluster, "c1", remaining, COMMIT2, blocked, NOW, options())
    passed = find_condition(done.conditions, "gitfleet.io/PassCompleted")
    assert passed is not None and passed.status == "True"
    assert ("v1", "ConfigMap", "app", "held") not in read_inventory(cluster)["app"]


def test_string_data_secret_is_stored_as_data_and_not_reapplied() -> None:
    cluster = InMemoryCluster()
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "app"},
        "stringData": {"password": "pw"},
    }
    files = directory("c1", {"app": [ns("app"), secret]})
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    live = cluster.get("v1", "Secret", "app", "s")
    assert live is not None and "stringData" not in live and live["data"] == {"password": "cHc="}
    writes = cluster.writes
    run_once(cluster, "c1", files, COMMIT, report, NOW, options())
    assert cluster.writes == writes

"""Helpers of the real-API tests: one agent pass, reading conditions, writing status as a
controller would (the status subresource), and a second field manager's writes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubernetes import config as kube_config
from kubernetes.dynamic import DynamicClient

from gitfleet.agent.client import ClusterClient, Obj
from gitfleet.agent.retry import Backoff
from gitfleet.agent.run import AgentOptions, run_once
from gitfleet.agent.sync import CrdWait
from gitfleet.api import AgentReport, PlacementReport, find_condition
from tests.kube.apiserver import ApiServer
from tests.unit.agent.conftest import COMMIT, NOW, directory

OPTIONS = AgentOptions(
    version="test",
    backoff=Backoff(attempts=3),
    crd_wait=CrdWait(polls=120, interval=0.25),
)


def agent_pass(
    client: ClusterClient,
    cluster: str,
    placements: Mapping[str, list[dict[str, Any]]],
    previous: AgentReport | None = None,
    *,
    strategy: Mapping[str, Any] | None = None,
    commit: str = COMMIT,
) -> AgentReport:
    """One `run_once` of the real agent code over a cluster directory built from `placements`."""
    files = directory(cluster, placements, strategy=strategy)
    return run_once(client, cluster, files, commit, previous, NOW, OPTIONS)


def placement(report: AgentReport, key: str) -> PlacementReport:
    return next(p for p in report.placements if p.key == key)


def cond(report: AgentReport, key: str, type_: str) -> tuple[str, str] | None:
    found = find_condition(placement(report, key).conditions, type_)
    return (found.status, found.reason) if found else None


def failures(report: AgentReport, key: str) -> list[tuple[str, str, str]]:
    """(name, reason, message) of every failed object of a placement."""
    return [
        (f.name, f.condition.reason, f.condition.message)
        for f in placement(report, key).failed_placements
    ]


def pass_condition(report: AgentReport) -> tuple[str, str, str]:
    found = find_condition(report.conditions, "gitfleet.io/PassCompleted")
    assert found is not None
    return found.status, found.reason, found.message


def dynamic(server: ApiServer) -> Any:
    """A raw dynamic client (for what a controller or a person would do)."""
    api_client = kube_config.new_client_from_config(config_file=str(server.kubeconfig))
    return DynamicClient(api_client)


def set_status(server: ApiServer, obj: Obj, status: Mapping[str, Any]) -> None:
    """Merge-patch the status subresource, as the controller-manager would."""
    dyn = dynamic(server)
    resource = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
    meta = obj["metadata"]
    resource.status.patch(
        body={"status": dict(status)},
        name=meta["name"],
        namespace=meta.get("namespace"),
        content_type="application/merge-patch+json",
    )


def other_manager_apply(client: ClusterClient, obj: Obj, manager: str = "kubectl-edit") -> Obj:
    """A server-side apply by another field manager (forced: it takes the fields it sets)."""
    return client.apply(obj, field_manager=manager, force=True, dry_run=False)

"""Shared helpers for the agent tests: cluster directories built from manifests, quickstart files."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gitfleet.agent.memory import InMemoryCluster
from gitfleet.agent.retry import Backoff
from gitfleet.agent.run import AgentOptions
from gitfleet.agent.sync import CrdWait
from gitfleet.api.canonical import content_hash, placement_content_hash
from gitfleet.api.output import (
    cluster_index_doc,
    cluster_index_path,
    placement_index_doc,
    placement_index_path,
)
from gitfleet.load.yamlio import dump_yaml
from tests.helpers.manifests import make_widget, make_widget_crd

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
COMMIT = "a" * 40
COMMIT2 = "b" * 40


# A namespaced custom resource kind and one object of it (apply and prune order tests).
CRD = make_widget_crd()
WIDGET = make_widget("app")

# Deployment `web` (2 replicas) applied, scaled to 5 by another field manager (kubectl-edit),
# applied again; by apply strategy: the replicas it ends with, Applied, text in the failure.
SSA_CONFLICTS: list[tuple[dict[str, Any], int, tuple[str, str], str]] = [
    ({"type": "ServerSideApply"}, 5, ("False", "NotAllWorkHaveBeenApplied"), "kubectl-edit"),
    (
        {"type": "ServerSideApply", "serverSideApplyConfig": {"force": True}},
        2,
        ("True", "AllWorkHaveBeenApplied"),
        "",
    ),
    ({"type": "ClientSideApply"}, 2, ("True", "AllWorkHaveBeenApplied"), ""),
]


class Sleeps(list[float]):
    """A sleep function that records instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def options(sleeps: Sleeps | None = None, attempts: int = 5) -> AgentOptions:
    sleep = sleeps if sleeps is not None else Sleeps()
    return AgentOptions(
        version="test",
        backoff=Backoff(attempts=attempts, sleep=sleep),
        crd_wait=CrdWait(polls=5, interval=1.0, sleep=sleep),
    )


def file_name(obj: Mapping[str, Any]) -> str:
    meta = obj["metadata"]
    parts = [str(obj["kind"]).lower(), meta.get("namespace", ""), meta["name"]]
    return "_".join(p for p in parts if p) + ".yaml"


def directory(
    cluster: str,
    placements: Mapping[str, list[dict[str, Any]]],
    strategy: Mapping[str, Any] | None = None,
    strategies: Mapping[str, Mapping[str, Any]] | None = None,
    snapshot: int = 0,
) -> dict[str, bytes]:
    """`clusters/<cluster>/...` files for `placement key -> manifests`."""
    files: dict[str, bytes] = {}
    entries = []
    for key, objs in sorted(placements.items()):
        listed = []
        for obj in objs:
            name = file_name(obj)
            files[f"clusters/{cluster}/{key}/{name}"] = dump_yaml(obj).encode()
            ident = {
                "apiVersion": obj["apiVersion"],
                "kind": obj["kind"],
                "name": obj["metadata"]["name"],
            }
            if obj["metadata"].get("namespace"):
                ident["namespace"] = obj["metadata"]["namespace"]
            listed.append({**ident, "file": name, "hash": content_hash(obj)})
        files[placement_index_path(cluster, key)] = dump_yaml(
            placement_index_doc(key, listed)
        ).encode()
        entry: dict[str, Any] = {
            "key": key,
            "name": key,
            "resourceSnapshotIndex": snapshot,
            "policySnapshotIndex": 0,
            "contentHash": placement_content_hash(listed),
        }
        chosen = (strategies or {}).get(key, strategy)
        if chosen is not None:
            entry["applyStrategy"] = dict(chosen)
        entries.append(entry)
    files[cluster_index_path(cluster)] = dump_yaml(cluster_index_doc(cluster, entries)).encode()
    return files


def ns(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def cm(name: str, namespace: str = "app", **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data or {"k": "v"},
    }


def deployment(name: str, namespace: str = "app", replicas: int = 2) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
            },
        },
    }


@pytest.fixture(scope="session")
def quickstart(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, bytes]]:
    """The quickstart example rendered by the real CLI: cluster -> its files."""
    out = tmp_path_factory.mktemp("qs") / "out"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "gitfleet",
            "render",
            str(ROOT / "examples/quickstart"),
            "--out",
            str(out),
            "--now",
            "2026-11-21T10:00:00Z",
        ],
        check=True,
        cwd=ROOT,
        capture_output=True,
    )
    clusters: dict[str, dict[str, bytes]] = {}
    for path in sorted((out / "clusters").rglob("*.yaml")):
        rel = path.relative_to(out).as_posix()
        clusters.setdefault(rel.split("/")[1], {})[rel] = path.read_bytes()
    return clusters


@pytest.fixture
def cluster() -> InMemoryCluster:
    return InMemoryCluster()

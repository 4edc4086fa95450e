"""Fixtures of the real-API tests: one etcd and kube-apiserver per session (a second API server
on the same etcd for the two-agent loop), and a fresh `KubeClusterClient` per test.

Every test uses its own names (namespaces, cluster and placement keys from `Names`) and starts
with an empty agent inventory (the inventory ConfigMap is per API server, one agent per cluster),
so the tests share the servers without seeing each other. Skipped, with the reason, when etcd,
kube-apiserver or openssl is missing (`hack/tools.sh` builds the first two).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from gitfleet.agent.client import ClusterClient, NotFound, Obj
from gitfleet.agent.inventory import INVENTORY_NAME, INVENTORY_NAMESPACE
from gitfleet.agent.kube import KubeClusterClient
from tests.kube.apiserver import ApiServer, Etcd, missing_tools

SKIP_REASON = missing_tools()
_COUNTER = itertools.count(1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if SKIP_REASON is None:
        return
    mark = pytest.mark.skip(reason=f"real API server: {SKIP_REASON}")
    for item in items:
        if "tests/kube/" in item.nodeid.replace("\\", "/"):
            item.add_marker(mark)


@pytest.fixture(scope="session")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Etcd]:
    server = Etcd.start(tmp_path_factory.mktemp("etcd"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def apiserver(etcd: Etcd, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    server = ApiServer.start(tmp_path_factory.mktemp("apiserver-a"), etcd, "cluster-a")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def apiserver_b(etcd: Etcd, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    server = ApiServer.start(tmp_path_factory.mktemp("apiserver-b"), etcd, "cluster-b")
    try:
        yield server
    finally:
        server.stop()


class Counting:
    """A `ClusterClient` proxy counting the writes (non-dry-run apply, patch, delete)."""

    def __init__(self, inner: ClusterClient) -> None:
        self.inner = inner
        self.writes: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def apply(self, obj: Any, *, field_manager: str, force: bool, dry_run: bool) -> Obj:
        if not dry_run:
            meta = obj.get("metadata") or {}
            self.writes.append(f"apply {obj.get('kind')}/{meta.get('name')}")
        return self.inner.apply(obj, field_manager=field_manager, force=force, dry_run=dry_run)

    def patch(self, *args: Any, **kwargs: Any) -> Obj:
        self.writes.append(f"patch {args[1]}/{args[3]}")
        return self.inner.patch(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> None:
        self.writes.append(f"delete {args[1]}/{args[3]}")
        self.inner.delete(*args, **kwargs)


@dataclass(frozen=True)
class Names:
    """Names unique to one test: a namespace, a cluster name and a placement key."""

    namespace: str
    cluster: str
    key: str


def fresh_inventory(client: ClusterClient) -> None:
    """Delete the agent inventory left by an earlier test (one agent per cluster)."""
    with contextlib.suppress(NotFound):
        client.delete("v1", "ConfigMap", INVENTORY_NAMESPACE, INVENTORY_NAME)


@pytest.fixture
def kube(apiserver: ApiServer) -> Counting:
    client = KubeClusterClient.from_kubeconfig(str(apiserver.kubeconfig))
    fresh_inventory(client)
    return Counting(client)


@pytest.fixture
def names() -> Names:
    n = next(_COUNTER)
    return Names(f"t{n}-app", f"c{n}", f"p{n}")

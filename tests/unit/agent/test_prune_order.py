"""Pruning runs in the reverse of the apply order: custom resources and workloads first,
namespaces late, CustomResourceDefinitions last of all."""

from __future__ import annotations

from typing import Any

from gitfleet.agent.memory import InMemoryCluster
from gitfleet.agent.run import run_once

from .conftest import COMMIT, COMMIT2, CRD, NOW, WIDGET, cm, deployment, directory, ns, options


class Deletions(InMemoryCluster):
    def __init__(self) -> None:
        super().__init__()
        self.deleted: list[str] = []

    def delete(
        self, api_version: str, kind: str, namespace: str | None, name: str, **kw: Any
    ) -> Any:
        self.deleted.append(kind)
        return super().delete(api_version, kind, namespace, name, **kw)


def test_prune_order_is_the_reverse_of_apply_order_with_crds_last() -> None:
    cluster = Deletions()
    objects = [CRD, ns("app"), cm("a"), deployment("d"), WIDGET]
    report = run_once(
        cluster, "c1", directory("c1", {"app": objects}), COMMIT, None, NOW, options()
    )
    run_once(cluster, "c1", directory("c1", {"app": []}), COMMIT2, report, NOW, options())
    assert cluster.deleted == [
        "Widget",
        "Deployment",
        "ConfigMap",
        "Namespace",
        "CustomResourceDefinition",
    ]

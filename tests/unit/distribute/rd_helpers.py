"""Fixture of the distribution test table (spec/replica-distribution.md §13): clusters eu-1,
eu-2 (region=eu), us-1..us-3 (region=us), ap-1 (region=ap); a CRP `web` placing everything in
namespace shop; a StatefulSet `web` with 3 replicas; RD `web` in namespace shop."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from gitfleet.api import parse_time
from gitfleet.repo.workdir import WorkdirTree
from reconciler.pass_ import PassResult, reconcile
from reconciler.state import State
from renderers import load_fleet

NOW = parse_time("2026-01-01T00:00:00Z")
CLUSTERS = {"eu-1": "eu", "eu-2": "eu", "us-1": "us", "us-2": "us", "us-3": "us", "ap-1": "ap"}


def cluster_doc(name: str, labels: Mapping[str, str]) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "cluster.kubernetes-fleet.io/v1",
            "kind": "MemberCluster",
            "metadata": {"name": name, "labels": dict(labels)},
            "spec": {
                "identity": {"kind": "ServiceAccount", "name": "fleet", "namespace": "fleet-system"}
            },
        }
    )


def statefulset(replicas: int | None = 3, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "web:1"}]},
        },
    }
    if replicas is not None:
        body["replicas"] = replicas
    body.update(spec)
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": body,
    }


def rd(spec: dict[str, Any], name: str = "web") -> dict[str, Any]:
    full = {"workload": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"}, **spec}
    return {
        "apiVersion": "gitfleet.io/v1alpha1",
        "kind": "ReplicaDistribution",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": full,
    }


def subset(name: str, region: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if region is not None:
        out["clusterSelector"] = {"matchLabels": {"region": region}}
    out.update(extra)
    return out


PLACEMENT = {
    "apiVersion": "placement.kubernetes-fleet.io/v1",
    "kind": "ClusterResourcePlacement",
    "metadata": {"name": "web"},
    "spec": {
        "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "shop"}],
        "policy": {"placementType": "PickAll"},
        # these tests read every cluster's allocation after one pass: no rollout waves
        "strategy": {"rollingUpdate": {"maxUnavailable": "100%"}},
    },
}


def write_fleet(
    root: Path,
    distributions: list[dict[str, Any]],
    workload: dict[str, Any] | None = None,
    clusters: Mapping[str, Mapping[str, str]] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> None:
    if root.exists():
        for p in sorted(root.rglob("*"), reverse=True):
            p.unlink() if p.is_file() else p.rmdir()
    files: dict[str, str] = {}
    for name, labels in (clusters or {c: {"region": r} for c, r in CLUSTERS.items()}).items():
        files[f"clusters/{name}.yaml"] = cluster_doc(name, labels)
    files["resources/shop.yaml"] = yaml.safe_dump_all(
        [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
            workload or statefulset(),
        ]
    )
    files["placements/web.yaml"] = yaml.safe_dump(PLACEMENT)
    files["distributions/rd.yaml"] = yaml.safe_dump_all(distributions)
    for path, doc in (extra or {}).items():
        files[path] = doc if isinstance(doc, str) else yaml.safe_dump_all(doc)
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def run(root: Path, prior: State | None = None) -> PassResult:
    fleet = load_fleet(WorkdirTree(root.resolve()))
    return reconcile(fleet, prior or State(), None, NOW)


def next_prior(result: PassResult) -> State:
    from reconciler.state import read_state

    state, problems = read_state(result.files)
    assert not problems
    return state


def status(result: PassResult, name: str = "web") -> dict[str, Any]:
    doc = yaml.safe_load(result.files[f"status/replicadistributions/shop/{name}.yaml"])
    return dict(doc["status"])


def workload_on(result: PassResult, cluster: str, placement: str = "web") -> dict[str, Any] | None:
    path = f"clusters/{cluster}/{placement}/statefulset.apps_shop_web.yaml"
    data = result.files.get(path)
    if data is None:
        for p, d in result.files.items():
            if p.startswith(f"clusters/{cluster}/{placement}/") and "_shop_web.yaml" in p:
                data = d
    return None if data is None else dict(yaml.safe_load(data))


def replicas(result: PassResult) -> dict[str, int]:
    out = {}
    for c in CLUSTERS:
        obj = workload_on(result, c)
        if obj is not None:
            out[c] = obj["spec"]["replicas"]
    return out


def condition(result: PassResult, type_: str, name: str = "web") -> tuple[str, str, str] | None:
    for c in status(result, name).get("conditions", []):
        if c["type"] == type_:
            return c["status"], c["reason"], c["message"]
    return None

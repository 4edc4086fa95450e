"""A small fleet for the ClusterGroupUpgrade test table (spec/cluster-group-upgrade.md §20):
MemberClusters a..f, placement `web` (CRP, External, latest snapshot 2, every cluster Bound at 1
and available there), CGU `cgu` in `default`. `Fleet.step(now)` runs the driver and applies its
binding moves; `done(c)` makes c's agent report the target snapshot Applied and Available."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import yaml

from gitfleet.api import parse_time
from gitfleet.api.limits import Limits
from gitfleet.load.model import FleetSnapshot
from gitfleet.load.snapshot import build_snapshot
from gitfleet.load.yamlio import parse_documents
from reconciler.rollout.cgu import drive_cluster_group_upgrades
from reconciler.rollout.model import (
    BOUND,
    BindingView,
    DriverResult,
    ObservedCondition,
    PlacementView,
    RolloutInputs,
)

T0 = parse_time("2026-01-01T00:00:00Z")
CLUSTERS = "abcdef"


def at(minutes: float = 0, seconds: int = 0) -> datetime:
    return T0 + timedelta(minutes=minutes, seconds=seconds)


def available(index: int, ok: bool = True) -> tuple[ObservedCondition, ...]:
    status = "True" if ok else "False"
    return (
        ObservedCondition("Applied", "True", "AppliedWorkSuccessfully"),
        ObservedCondition(
            "Available", status, "AvailableWorkSuccessfully" if ok else "NotAvailableYet"
        ),
    )


@dataclass
class Placement:
    name: str
    latest: int = 2
    strategy: str = "External"
    bindings: dict[str, BindingView] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    namespace: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}.{self.name}" if self.namespace else self.name

    def view(self) -> PlacementView:
        return PlacementView(
            key=self.key,
            kind="ResourcePlacement" if self.namespace else "ClusterResourcePlacement",
            name=self.name,
            namespace=self.namespace,
            strategy_type=self.strategy,
            placement_type="PickAll",
            number_of_clusters=None,
            cluster_names=tuple(sorted(self.bindings)),
            apply_strategy={},
            policy_index=0,
            policy_fulfilled=True,
            latest_resource_index=self.latest,
            resource_indexes=tuple(range(self.latest + 1)),
            bindings=tuple(self.bindings[c] for c in sorted(self.bindings)),
        )

    def doc(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": self.name}
        if self.annotations:
            meta["annotations"] = dict(self.annotations)
        if self.namespace:
            meta["namespace"] = self.namespace
        return {
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ResourcePlacement" if self.namespace else "ClusterResourcePlacement",
            "metadata": meta,
            "spec": {
                "resourceSelectors": [
                    {"group": "", "version": "v1", "kind": "Namespace", "name": "x"}
                ]
            }
            if not self.namespace
            else {
                "resourceSelectors": [
                    {"group": "", "version": "v1", "kind": "ConfigMap", "name": "x"}
                ]
            },
        }


def web(clusters: str = CLUSTERS, bound_at: int = 1, latest: int = 2) -> Placement:
    return Placement(
        "web",
        latest,
        bindings={
            c: BindingView(c, BOUND, bound_at, conditions=available(bound_at)) for c in clusters
        },
    )


def cgu(name: str = "cgu", **spec: Any) -> dict[str, Any]:
    meta = spec.pop("metadata", {})
    body: dict[str, Any] = {
        "clusters": list(CLUSTERS),
        "managedPolicies": ["web"],
        "remediationStrategy": {"maxConcurrency": 2, "timeout": 240},
        "enable": True,
    }
    for k, v in spec.items():
        if v is None:
            body.pop(k, None)
        elif k == "remediationStrategy":
            body[k] = {**body[k], **v}
        else:
            body[k] = v
    return {
        "apiVersion": "ran.openshift.io/v1alpha1",
        "kind": "ClusterGroupUpgrade",
        "metadata": {"name": name, "namespace": "default", **meta},
        "spec": body,
    }


@dataclass
class Fleet:
    cgus: list[dict[str, Any]]
    placements: list[Placement] = field(default_factory=lambda: [web()])
    labels: dict[str, dict[str, str]] = field(default_factory=lambda: {c: {} for c in CLUSTERS})
    output: dict[str, bytes] = field(default_factory=dict)
    last: DriverResult | None = None

    extra: list[dict[str, Any]] = field(default_factory=list)
    """More fleet documents (e.g. staged update runs), in rollouts/extra.yaml."""

    def snapshot(self) -> FleetSnapshot:
        files = {"rollouts/cgu.yaml": yaml.safe_dump_all(self.cgus) if self.cgus else ""}
        if self.extra:
            files["rollouts/extra.yaml"] = yaml.safe_dump_all(self.extra)
        files["placements/p.yaml"] = yaml.safe_dump_all([p.doc() for p in self.placements])
        docs, errors = [], []
        for path, text in files.items():
            found, problems = parse_documents(path, text, Limits())
            docs += found
            errors += problems
        snap = build_snapshot(docs, errors)
        return snap

    def placement(self, key: str = "web") -> Placement:
        return next(p for p in self.placements if p.key == key)

    def step(self, now: datetime) -> DriverResult:
        fleet = self.snapshot()
        inputs = RolloutInputs({p.key: p.view() for p in self.placements}, self.labels, now)
        result = drive_cluster_group_upgrades(fleet, inputs, self.output)
        for update in result.updates:
            p = self.placement(update.placement)
            for c, index in update.clusters.items():
                p.bindings[c] = replace(
                    p.bindings[c], state=BOUND, resource_index=index, conditions=()
                )
        self.output = dict(result.files)
        self.last = result
        return result

    def done(self, cluster: str, index: int = 2, key: str = "web", ok: bool = True) -> None:
        p = self.placement(key)
        p.bindings[cluster] = BindingView(cluster, BOUND, index, conditions=available(index, ok))

    def status(self, name: str = "cgu", ns: str = "default") -> dict[str, Any]:
        doc = yaml.safe_load(self.output[f"status/clustergroupupgrades/{ns}/{name}.yaml"])
        return dict(doc["status"])

    def cond(self, type_: str, name: str = "cgu") -> tuple[str, str, str] | None:
        for c in self.status(name).get("conditions", []):
            if c["type"] == type_:
                return c["status"], c["reason"], c["message"]
        return None

    def moved(self, key: str = "web") -> Mapping[str, int]:
        assert self.last is not None
        out: dict[str, int] = {}
        for u in self.last.updates:
            if u.placement == key:
                out.update(u.clusters)
        return out

    def index_of(self, cluster: str, key: str = "web") -> int | None:
        return self.placement(key).bindings[cluster].resource_index

    def events(self) -> list[str]:
        assert self.last is not None
        return [v for _, v in self.last.trailers]

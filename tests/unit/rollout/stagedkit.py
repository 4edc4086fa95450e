"""Test kit for the staged update run driver: fleets from plain dicts, placement views, and a
small simulator that feeds each pass's output back as the next pass's prior output and moves
bindings as the driver asks (as the rollout hook does)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from gitfleet.load.model import FleetSnapshot, PathCommit, SourceDoc
from gitfleet.load.snapshot import build_snapshot
from reconciler.rollout.model import (
    BOUND,
    SCHEDULED,
    UNSCHEDULED,
    BindingView,
    DriverResult,
    ObservedCondition,
    PlacementView,
    RolloutInputs,
)
from reconciler.rollout.staged import drive_staged_runs

API = "placement.kubernetes-fleet.io/v1beta1"
T0 = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)


def strategy(stages: list[dict[str, Any]], name: str = "strat") -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "ClusterStagedUpdateStrategy",
        "metadata": {"name": name},
        "spec": {"stages": stages},
    }


def run(
    name: str = "run1",
    placement: str = "app",
    strategy_name: str = "strat",
    state: str = "Run",
    index: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "placementName": placement,
        "stagedRolloutStrategyName": strategy_name,
        "state": state,
    }
    if index is not None:
        spec["resourceSnapshotIndex"] = index
    return {
        "apiVersion": API,
        "kind": "ClusterStagedUpdateRun",
        "metadata": {"name": name},
        "spec": spec,
    }


def approval(name: str, run_name: str, stage: str, generation: int | None = 1) -> dict[str, Any]:
    cond: dict[str, Any] = {
        "type": "Approved",
        "status": "True",
        "reason": "approved",
        "message": "lgtm",
        "lastTransitionTime": "2026-11-21T10:00:00Z",
    }
    if generation is not None:
        cond["observedGeneration"] = generation
    return {
        "apiVersion": API,
        "kind": "ClusterApprovalRequest",
        "metadata": {"name": name},
        "spec": {"parentStageRollout": run_name, "targetStage": stage},
        "status": {"conditions": [cond]},
    }


def fleet(*objects: dict[str, Any], commits: dict[str, PathCommit] | None = None) -> FleetSnapshot:
    docs = []
    for i, obj in enumerate(objects):
        folder = {"ClusterApprovalRequest": "approvals"}.get(obj["kind"], "rollouts")
        docs.append(
            SourceDoc(
                f"{folder}/{obj['metadata']['name']}.yaml", 0, 1, obj, text=yaml.safe_dump(obj)
            )
        )
        del i
    snap = build_snapshot(docs, [])
    assert not snap.errors, snap.errors
    return replace(snap, file_commits=commits or {})


def available(index: int) -> tuple[ObservedCondition, ...]:
    return (ObservedCondition("Available", "True", "AllWorkAreAvailable"),)


def binding(
    cluster: str, index: int | None = 0, state: str = BOUND, ok: bool = True
) -> BindingView:
    conds = available(index or 0) if ok else ()
    return BindingView(cluster, state, resource_index=index, conditions=conds)


def view(
    bindings: list[BindingView],
    *,
    strategy_type: str = "External",
    placement_type: str = "PickAll",
    number: int | None = None,
    names: tuple[str, ...] = (),
    policy_index: int = 0,
    fulfilled: bool = True,
    latest: int | None = 1,
    indexes: tuple[int, ...] = (0, 1),
    apply: dict[str, object] | None = None,
) -> PlacementView:
    return PlacementView(
        key="app",
        kind="ClusterResourcePlacement",
        name="app",
        namespace="",
        strategy_type=strategy_type,
        placement_type=placement_type,
        number_of_clusters=number,
        cluster_names=names,
        apply_strategy=apply or {"type": "ClientSideApply"},
        policy_index=policy_index,
        policy_fulfilled=fulfilled,
        latest_resource_index=latest,
        resource_indexes=indexes,
        bindings=tuple(bindings),
    )


@dataclass
class Sim:
    """Passes of the driver against one placement; bindings move as asked and become
    Available at once unless a cluster is listed in `slow`."""

    fleet: FleetSnapshot
    placement: PlacementView | None
    labels: dict[str, dict[str, str]]
    now: datetime = T0
    prior: dict[str, bytes] = field(default_factory=dict)
    slow: set[str] = field(default_factory=set)
    results: list[DriverResult] = field(default_factory=list)

    def step(self, advance: timedelta = timedelta(0)) -> DriverResult:
        self.now += advance
        views = {"app": self.placement} if self.placement is not None else {}
        inputs = RolloutInputs(views, self.labels, self.now)
        result = drive_staged_runs(self.fleet, inputs, self.prior)
        self.prior = dict(result.files)
        self.results.append(result)
        self._apply(result)
        return result

    def _apply(self, result: DriverResult) -> None:
        if self.placement is None:
            return
        bindings = {b.cluster: b for b in self.placement.bindings}
        for update in result.updates:
            for cluster, index in update.clusters.items():
                ok = cluster not in self.slow
                bindings[cluster] = binding(cluster, index, BOUND, ok)
            for cluster in update.delete:
                bindings.pop(cluster, None)
        self.placement = replace(self.placement, bindings=tuple(bindings.values()))

    def finish(self, cluster: str) -> None:
        self.slow.discard(cluster)
        assert self.placement is not None
        bindings = [
            binding(b.cluster, b.resource_index, b.state, True) if b.cluster == cluster else b
            for b in self.placement.bindings
        ]
        self.placement = replace(self.placement, bindings=tuple(bindings))

    def status(self, name: str = "run1") -> dict[str, Any]:
        doc = yaml.safe_load(self.prior[f"status/updateruns/{name}.yaml"])
        assert isinstance(doc, dict)
        return doc["status"]  # type: ignore[no-any-return]


def cond(holder: dict[str, Any], type_: str) -> tuple[str, str] | None:
    for c in holder.get("conditions") or []:
        if c["type"] == type_:
            return c["status"], c["reason"]
    return None


def clusters_at(sim: Sim, index: int) -> list[str]:
    assert sim.placement is not None
    return sorted(b.cluster for b in sim.placement.bindings if b.resource_index == index)


__all__ = ["BOUND", "SCHEDULED", "UNSCHEDULED"]

"""Initialization of a staged update run (spec/kubefleet.md §4.2), run once per run.

`initialize` checks the placement, its latest policy snapshot and bindings, freezes the strategy
into `status.stagedUpdateStrategySnapshot`, computes the stages (label selector, sorting label,
order) and the deletion stage, and picks the resource snapshot index; every failure is terminal
for the run and carries KubeFleet's message. `compute_stages` is shared with re-validation
(§4.3), which recomputes the stages from the frozen snapshot every pass.
Called by `reconciler.rollout.staged`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gitfleet.api.duration import DurationError, parse_duration_ns
from gitfleet.api.staged import StageConfig, UpdateStrategySpec
from reconciler.rollout.model import UNSCHEDULED, PlacementView
from reconciler.rollout.stagedstatus import DELETE_STAGE, RunRef, request_name


class InitError(Exception):
    """Initialization failed (terminal for the run); the message is KubeFleet's."""


@dataclass(frozen=True)
class Stage:
    """One computed stage: its clusters in update order."""

    name: str
    clusters: tuple[str, ...]


def selected_clusters(view: PlacementView) -> tuple[list[str], list[str]]:
    """(selected, to-be-deleted) clusters of the latest policy snapshot (§4.2 step 3); a
    binding being deleted (an evicted Bound one too) is to be deleted."""
    selected = sorted(b.cluster for b in view.bindings if b.state != UNSCHEDULED and not b.deleting)
    deleting = sorted(b.cluster for b in view.bindings if b.state == UNSCHEDULED or b.deleting)
    return selected, deleting


def observed_count(view: PlacementView, selected: Sequence[str]) -> int:
    """policyObservedClusterCount: N for PickN, the names for PickFixed, else the selection."""
    if view.placement_type == "PickN":
        if view.number_of_clusters is None:
            raise InitError(
                f"the policy snapshot `{policy_snapshot(view)}` does not have a valid "
                "number-of-clusters annotation"
            )
        return view.number_of_clusters
    if view.placement_type == "PickFixed":
        return len(view.cluster_names)
    return len(selected)


def policy_snapshot(view: PlacementView) -> str:
    return f"{view.name}-{view.policy_index}"


def check_placement(view: PlacementView | None) -> PlacementView:
    """§4.2 step 1 (also a §4.3 abort)."""
    if view is None:
        raise InitError("parent placement not found")
    if view.strategy_type != "External":
        raise InitError(
            "parent placement does not have an external rollout strategy, current strategy: "
            f"{view.strategy_type}"
        )
    return view


def check_tasks(stage: StageConfig) -> None:
    """§4.2 step 5, the task rules (the loader reports the same rules earlier)."""
    before = stage.before_stage_tasks or []
    if len(before) > 1:
        raise InitError("beforeStageTasks can have at most one task")
    for i, task in enumerate(before):
        if task.type != "Approval":
            raise InitError(
                f"task {i} of type {task.type} is not allowed in beforeStageTasks, "
                "allowed type: Approval"
            )
        if task.wait_time is not None:
            raise InitError(f"task {i} of type Approval cannot have wait duration set")
    seen: set[str] = set()
    for i, task in enumerate(stage.after_stage_tasks or []):
        if task.type in seen:
            raise InitError(f"afterStageTasks cannot have two tasks of the same type: {task.type}")
        seen.add(task.type)
        if task.type != "TimedWait":
            continue
        if task.wait_time is None:
            raise InitError(f"task {i} of type TimedWait has wait duration set to nil")
        try:
            wait = parse_duration_ns(task.wait_time)
        except DurationError as exc:
            raise InitError(
                f"task {i} of type TimedWait has an invalid wait duration: {exc}"
            ) from None
        if wait <= 0:
            raise InitError(f"task {i} of type TimedWait has wait duration <= 0")


def _atoi(value: str) -> int | None:
    return int(value) if re.fullmatch(r"[+-]?[0-9]+", value) else None


def _order(
    stage: StageConfig, members: list[str], labels: Mapping[str, Mapping[str, str]]
) -> list[str]:
    key = stage.sorting_label_key
    if not key:
        return sorted(members)
    ranked: list[tuple[int, str]] = []
    for cluster in members:
        value = labels.get(cluster, {}).get(key, "")
        number = _atoi(value)
        if number is None:
            raise InitError(
                f"the sorting label `{key}:{value}` on cluster `{cluster}` is not valid: "
                f'strconv.Atoi: parsing "{value}": invalid syntax'
            )
        ranked.append((number, cluster))
    return [cluster for _, cluster in sorted(ranked)]


def compute_stages(
    stages: Sequence[StageConfig],
    selected: Sequence[str],
    labels: Mapping[str, Mapping[str, str]],
) -> list[Stage]:
    """Stage membership and order (§4.2 step 5); InitError on any rule."""
    chosen = set(selected)
    placed: set[str] = set()
    out: list[Stage] = []
    for stage in stages:
        check_tasks(stage)
        selector = stage.label_selector
        members = [
            c
            for c in sorted(chosen)
            if selector is not None and selector.matches(labels.get(c, {}))
        ]
        for cluster in members:
            if cluster in placed:
                raise InitError(f"cluster `{cluster}` appears in more than one stages")
            placed.add(cluster)
        out.append(Stage(stage.name, tuple(_order(stage, members, labels))))
    missing = sorted(chosen - placed)
    if missing:
        raise InitError(
            f"some clusters are not placed in any stage, total {len(missing)}, showing up to "
            f"10: {', '.join(missing[:10])}"
        )
    return out


def strategy_snapshot(spec: UpdateStrategySpec) -> dict[str, Any]:
    """The strategy as frozen into the run (waitTime stripped from Approval tasks)."""
    doc = spec.dump()
    for stage in doc.get("stages", []):
        for field in ("beforeStageTasks", "afterStageTasks"):
            for task in stage.get(field) or []:
                if task.get("type") == "Approval":
                    task.pop("waitTime", None)
    return doc


def resource_index(ref: RunRef, view: PlacementView) -> int:
    """§4.2 step 7: the run's index, or the placement's latest."""
    text = ref.run.spec.resource_snapshot_index
    if text is None or text == "":
        if view.latest_resource_index is None:
            raise InitError(f"no resourceSnapshots found for placement `{view.name}`")
        return view.latest_resource_index
    if not re.fullmatch("[0-9]+", text):
        raise InitError(
            f"invalid resource snapshot index `{text}` provided, expected an integer >= 0"
        )
    if int(text) not in view.resource_indexes:
        raise InitError(
            f"no resourceSnapshots with index `{int(text)}` found for placement `{view.name}`"
        )
    return int(text)


def _task_status(tasks: Sequence[Any], run: str, stage: str, before: bool) -> list[dict[str, Any]]:
    out = []
    for task in tasks:
        entry: dict[str, Any] = {"type": task.type}
        if task.type == "Approval":
            entry["approvalRequestName"] = request_name(run, stage, before)
        out.append(entry)
    return out


def stage_status(ref: RunRef, config: StageConfig, stage: Stage) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "stageName": stage.name,
        "clusters": [{"clusterName": c} for c in stage.clusters],
    }
    before = _task_status(config.before_stage_tasks or [], ref.name, stage.name, True)
    after = _task_status(config.after_stage_tasks or [], ref.name, stage.name, False)
    if before:
        doc["beforeStageTaskStatus"] = before
    if after:
        doc["afterStageTaskStatus"] = after
    return doc


def initialize(
    ref: RunRef,
    view: PlacementView | None,
    labels: Mapping[str, Mapping[str, str]],
    status: dict[str, Any],
) -> None:
    """Fill the run's status (conditions aside) step by step, as far as it gets; InitError with
    KubeFleet's message on the first failure."""
    view = check_placement(view)
    status["appliedStrategy"] = dict(view.apply_strategy)
    if not view.policy_fulfilled:
        raise InitError(f"policy snapshot `{policy_snapshot(view)}` not fully scheduled yet")
    selected, deleting = selected_clusters(view)
    count = observed_count(view, selected)
    status["policySnapshotIndexUsed"] = str(view.policy_index)
    status["policyObservedClusterCount"] = count
    if not selected and not deleting:
        raise InitError(
            "no scheduled or to-be-deleted bindings found for the latest policy snapshot"
        )
    if view.placement_type != "PickAll" and len(selected) != count:
        raise InitError(
            f"the number of selected bindings {len(selected)} is not equal to the observed "
            f"cluster count {count}"
        )
    if ref.strategy is None:
        raise InitError("referenced updateStrategy not found")
    snapshot = strategy_snapshot(ref.strategy.spec)
    status["stagedUpdateStrategySnapshot"] = snapshot
    configs = UpdateStrategySpec.model_validate(snapshot).stages
    stages = compute_stages(configs, selected, labels)
    status["stagesStatus"] = [stage_status(ref, c, s) for c, s in zip(configs, stages, strict=True)]
    status["deletionStageStatus"] = {
        "stageName": DELETE_STAGE,
        "clusters": [{"clusterName": c} for c in deleting],
    }
    index = resource_index(ref, view)
    status["resourceSnapshotIndexUsed"] = str(index)
    freeze_overrides(status, view, index)


def freeze_overrides(status: dict[str, Any], view: PlacementView, index: int) -> None:
    """§4.2 step 8: each cluster's override snapshot names, recorded at initialization
    (KubeFleet's `clusterResourceOverrideSnapshots` / `resourceOverrideSnapshots`)."""
    names = view.override_snapshots.get(index, {})
    for stage in status.get("stagesStatus") or []:
        for entry in stage.get("clusters") or []:
            cro, ro = names.get(entry["clusterName"], ((), ()))
            if cro:
                entry["clusterResourceOverrideSnapshots"] = list(cro)
            if ro:
                entry["resourceOverrideSnapshots"] = [
                    {"name": n.split("/", 1)[1], "namespace": n.split("/", 1)[0]} for n in ro
                ]

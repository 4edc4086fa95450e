"""Re-validation of an initialized staged update run on every later pass (spec/kubefleet.md §4.3).

Any difference between what the run recorded at initialization and the placement as it is now
(strategy type, apply strategy, policy snapshot index, cluster count, the stages recomputed from
the frozen strategy snapshot, to-be-deleted clusters) or an inconsistent stage progression aborts
the run: `revalidate` raises `InitError` with the reason, and the caller fails the run.
Called by `reconciler.rollout.staged`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitfleet.api.intstr import IntOrStringError, floor_scale
from gitfleet.api.staged import StageConfig, UpdateStrategySpec
from reconciler.rollout.model import PlacementView
from reconciler.rollout.stagedinit import (
    InitError,
    check_placement,
    compute_stages,
    observed_count,
    selected_clusters,
)
from reconciler.rollout.stagedstatus import STARTED, SUCCEEDED, is_false, is_true


def frozen_stages(status: Mapping[str, Any]) -> list[StageConfig]:
    """The strategy snapshot recorded at initialization."""
    return UpdateStrategySpec.model_validate(
        status.get("stagedUpdateStrategySnapshot") or {}
    ).stages


def max_concurrency(config: StageConfig, clusters: int) -> int:
    """§4.4: floorScale(maxConcurrency, stage size), at least 1; integers are not capped."""
    try:
        return max(1, floor_scale(config.max_concurrency, clusters))
    except IntOrStringError as exc:
        raise InitError(f"invalid maxConcurrency {config.max_concurrency!r}: {exc}") from None


def _compare_stages(
    status: Mapping[str, Any], view: PlacementView, labels: Mapping[str, Mapping[str, str]]
) -> None:
    selected, _ = selected_clusters(view)
    stages = compute_stages(frozen_stages(status), selected, labels)
    recorded = status.get("stagesStatus") or []
    if len(stages) != len(recorded):
        raise InitError("the number of stages in the updateRun has changed")
    for i, (stage, old) in enumerate(zip(stages, recorded, strict=True)):
        if stage.name != old.get("stageName"):
            raise InitError(f"index `{i}` stage name in the updateRun has changed")
        names = [c.get("clusterName") for c in old.get("clusters") or []]
        if len(names) != len(stage.clusters):
            raise InitError(f"the number of clusters in index `{i}` stage has changed")
        for j, (new, was) in enumerate(zip(stage.clusters, names, strict=True)):
            if new != was:
                raise InitError(f"the `{j}` cluster in the `{i}` stage has changed")


def in_flight(stage: Mapping[str, Any]) -> list[str]:
    """Clusters of a stage that started and have not succeeded."""
    return [
        c["clusterName"]
        for c in stage.get("clusters") or []
        if is_true(c.get("conditions"), STARTED) and not is_true(c.get("conditions"), SUCCEEDED)
    ]


def _progression(status: Mapping[str, Any]) -> None:
    stages = status.get("stagesStatus") or []
    configs = frozen_stages(status)
    finished_open = True
    updating: list[str] = []
    for stage, config in zip(stages, configs, strict=False):
        name = stage.get("stageName")
        if is_false(stage.get("conditions"), SUCCEEDED):
            raise InitError(f"the stage `{name}` has failed")
        done = is_true(stage.get("conditions"), SUCCEEDED)
        if done and not finished_open:
            raise InitError(f"the finished stage `{name}` is after an unfinished stage")
        finished_open = finished_open and done
        flying = in_flight(stage)
        if flying:
            updating.append(str(name))
            limit = max_concurrency(config, len(stage.get("clusters") or []))
            if len(flying) > limit:
                raise InitError(
                    f"the number of updating clusters {len(flying)} in stage `{name}` is more "
                    f"than maxConcurrency {limit}"
                )
    if len(updating) > 1:
        raise InitError(f"more than one stage is updating: {', '.join(updating)}")


def revalidate(
    status: Mapping[str, Any], view: PlacementView | None, labels: Mapping[str, Mapping[str, str]]
) -> None:
    """§4.3; InitError (the abort reason) when the run can no longer go on."""
    view = check_placement(view)
    if status.get("appliedStrategy") != dict(view.apply_strategy):
        raise InitError("the apply strategy in the updateRun is outdated")
    if str(view.policy_index) != status.get("policySnapshotIndexUsed"):
        raise InitError("the policy snapshot index used in the updateRun is outdated")
    selected, deleting = selected_clusters(view)
    if observed_count(view, selected) != status.get("policyObservedClusterCount"):
        raise InitError("the cluster count initialized in the updateRun is outdated")
    _compare_stages(status, view, labels)
    _progression(status)
    recorded = {
        c.get("clusterName")
        for c in (status.get("deletionStageStatus") or {}).get("clusters") or []
    }
    for cluster in deleting:
        if cluster not in recorded:
            raise InitError(f"the cluster `{cluster}` to be deleted is not in the deletion stage")

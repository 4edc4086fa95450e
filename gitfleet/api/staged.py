"""Staged rollouts (§4.1): ClusterStagedUpdateStrategy, ClusterStagedUpdateRun,
ClusterApprovalRequest and their namespaced twins used with ResourcePlacements
(StagedUpdateStrategy, StagedUpdateRun, ApprovalRequest; v1beta1 only, like ResourcePlacement).

Validation combines the CRD rules (stage name pattern and length, at most 31 stages,
maxConcurrency >= 1 or 1%..100%, waitTime syntax) with the task rules KubeFleet checks when a
run initialises (§4.2), using KubeFleet's messages. Approvals keep `status.conditions`: a user
approves by committing an `Approved=True` condition. `reconciler.rollout` consumes these models.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field

from gitfleet.api.base import KubeModel, check_namespace, check_object_name, prefix
from gitfleet.api.conditions import Condition
from gitfleet.api.duration import DurationError, parse_duration_ns
from gitfleet.api.errors import FieldIssue
from gitfleet.api.intstr import CONCURRENCY_PERCENT_PATTERN, IntOrString, is_concurrency_value
from gitfleet.api.meta import KubeObject
from gitfleet.api.selectors import LabelSelector

StageTaskType = Literal["TimedWait", "Approval"]
UpdateRunState = Literal["Initialize", "Run", "Stop"]

STAGE_NAME_PATTERN = "^[a-z0-9]+$"
WAIT_TIME_PATTERN = r"^(?:[0-9]+(\.[0-9]+)?(?:s|m|h))+$"
_PLACEMENT_APIS = Literal[
    "placement.kubernetes-fleet.io/v1beta1", "placement.kubernetes-fleet.io/v1"
]
_NAMESPACED_APIS = Literal["placement.kubernetes-fleet.io/v1beta1"]


class StageTask(KubeModel):
    """A before- or after-stage task."""

    type: StageTaskType
    wait_time: str | None = None

    def wait_ns(self) -> int | None:
        """waitTime in nanoseconds (None when unset)."""
        return None if self.wait_time is None else parse_duration_ns(self.wait_time)


class StageConfig(KubeModel):
    """One stage of a strategy."""

    name: str
    label_selector: LabelSelector | None = None
    sorting_label_key: str | None = None
    max_concurrency: IntOrString = 1
    before_stage_tasks: list[StageTask] | None = None
    after_stage_tasks: list[StageTask] | None = None


def _wait_time_issue(field: str, task: StageTask) -> FieldIssue | None:
    text = task.wait_time or ""
    if not re.fullmatch(WAIT_TIME_PATTERN[1:-1], text):
        return FieldIssue(field, f"should match '{WAIT_TIME_PATTERN}'")
    try:
        parse_duration_ns(text)
    except DurationError as exc:
        return FieldIssue(field, str(exc))
    return None


def _before_tasks(tasks: list[StageTask]) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    if len(tasks) > 1:
        issues.append(FieldIssue("", "beforeStageTasks can have at most one task"))
    for i, task in enumerate(tasks):
        if task.type != "Approval":
            issues.append(
                FieldIssue(
                    f"[{i}].type",
                    f"task {i} of type {task.type} is not "
                    "allowed in beforeStageTasks, allowed type: Approval",
                )
            )
        elif task.wait_time is not None:
            issues.append(
                FieldIssue(
                    f"[{i}].waitTime", f"task {i} of type Approval cannot have wait duration set"
                )
            )
    return issues


def _after_tasks(tasks: list[StageTask]) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    if len(tasks) > 2:
        issues.append(FieldIssue("", "must have at most 2 items"))
    seen: set[str] = set()
    for i, task in enumerate(tasks):
        if task.type in seen:
            issues.append(
                FieldIssue(
                    f"[{i}].type",
                    f"afterStageTasks cannot have two tasks of the same type: {task.type}",
                )
            )
        seen.add(task.type)
        if task.type == "Approval" and task.wait_time is not None:
            issues.append(
                FieldIssue(
                    f"[{i}].waitTime", "AfterStageTaskType is Approval, waitTime is not allowed"
                )
            )
        if task.type == "TimedWait":
            issues += _timed_wait(i, task)
    return issues


def _timed_wait(i: int, task: StageTask) -> list[FieldIssue]:
    if task.wait_time is None:
        return [
            FieldIssue(
                f"[{i}].waitTime", f"task {i} of type TimedWait has wait duration set to nil"
            )
        ]
    bad = _wait_time_issue(f"[{i}].waitTime", task)
    if bad:
        return [bad]
    if parse_duration_ns(task.wait_time) <= 0:
        return [FieldIssue(f"[{i}].waitTime", f"task {i} of type TimedWait has wait duration <= 0")]
    return []


def _stage_rules(stage: StageConfig) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    if len(stage.name) > 63 or not re.fullmatch("[a-z0-9]+", stage.name):
        issues.append(
            FieldIssue(
                "name",
                f"should match '{STAGE_NAME_PATTERN}' and be at most "
                f'63 characters: "{stage.name}"',
            )
        )
    if stage.label_selector is not None:
        issues += prefix("labelSelector", stage.label_selector.validate_rules())
    if not is_concurrency_value(stage.max_concurrency):
        message = (
            "maxConcurrency must be at least 1"
            if isinstance(stage.max_concurrency, int)
            else f"should match '{CONCURRENCY_PERCENT_PATTERN}'"
        )
        issues.append(FieldIssue("maxConcurrency", message))
    issues += prefix("beforeStageTasks", _before_tasks(stage.before_stage_tasks or []))
    issues += prefix("afterStageTasks", _after_tasks(stage.after_stage_tasks or []))
    return issues


class UpdateStrategySpec(KubeModel):
    """Ordered stages (at most 31)."""

    stages: list[StageConfig] = Field(max_length=31)


class _StrategyBase(KubeObject):
    spec: UpdateStrategySpec

    def validate_rules(self) -> list[FieldIssue]:
        """Name, unique stage names, per-stage rules."""
        issues = super().validate_rules() + check_object_name(self.name, file_name=True)
        seen: set[str] = set()
        for i, stage in enumerate(self.spec.stages):
            issues += prefix(f"spec.stages[{i}]", _stage_rules(stage))
            if stage.name in seen:
                issues.append(
                    FieldIssue(f"spec.stages[{i}].name", f'stage name "{stage.name}" is not unique')
                )
            seen.add(stage.name)
        return issues


class ClusterStagedUpdateStrategy(_StrategyBase):
    """A reusable list of stages."""

    api_version: _PLACEMENT_APIS
    kind: Literal["ClusterStagedUpdateStrategy"]


class StagedUpdateStrategy(_StrategyBase):
    """A reusable list of stages for runs of ResourcePlacements in its namespace."""

    api_version: _NAMESPACED_APIS
    kind: Literal["StagedUpdateStrategy"]

    def validate_rules(self) -> list[FieldIssue]:
        """As the cluster-scoped kind, plus a namespace."""
        return super().validate_rules() + check_namespace(self.namespace)


class UpdateRunSpec(KubeModel):
    """Which placement, resource snapshot and strategy a run uses; its desired state."""

    placement_name: str = Field(max_length=255)
    resource_snapshot_index: str | None = None
    staged_rollout_strategy_name: str
    state: UpdateRunState = "Initialize"


class _RunBase(KubeObject):
    spec: UpdateRunSpec
    status: dict[str, Any] | None = None

    def validate_rules(self) -> list[FieldIssue]:
        """Name (DNS-1123 label), references present, snapshot index an integer >= 0."""
        issues = super().validate_rules() + check_object_name(self.name, file_name=True)
        if not self.spec.placement_name:
            issues.append(FieldIssue("spec.placementName", "required field is missing"))
        if not self.spec.staged_rollout_strategy_name:
            issues.append(FieldIssue("spec.stagedRolloutStrategyName", "required field is missing"))
        index = self.spec.resource_snapshot_index
        if index and not re.fullmatch("[0-9]+", index):
            issues.append(
                FieldIssue(
                    "spec.resourceSnapshotIndex",
                    f"invalid resource snapshot index `{index}` provided, expected an integer >= 0",
                )
            )
        return issues


class ClusterStagedUpdateRun(_RunBase):
    """One staged release of a ClusterResourcePlacement's resources."""

    api_version: _PLACEMENT_APIS
    kind: Literal["ClusterStagedUpdateRun"]


class StagedUpdateRun(_RunBase):
    """One staged release of a ResourcePlacement (same namespace) with a StagedUpdateStrategy."""

    api_version: _NAMESPACED_APIS
    kind: Literal["StagedUpdateRun"]

    def validate_rules(self) -> list[FieldIssue]:
        """As the cluster-scoped kind, plus a namespace."""
        return super().validate_rules() + check_namespace(self.namespace)


class ApprovalRequestSpec(KubeModel):
    """The run and stage an approval is for."""

    parent_stage_rollout: str
    target_stage: str


class ApprovalRequestStatus(KubeModel):
    """Approved (set by the user) and ApprovalAccepted conditions."""

    conditions: list[Condition] | None = None


class _ApprovalBase(KubeObject):
    spec: ApprovalRequestSpec
    status: ApprovalRequestStatus | None = None

    def is_approved(self) -> bool:
        """Whether an `Approved` condition with status True is present."""
        conditions = self.status.conditions if self.status else None
        return any(c.type == "Approved" and c.status == "True" for c in conditions or [])

    def validate_rules(self) -> list[FieldIssue]:
        """Name must be a DNS-1123 subdomain; run and stage must be named."""
        issues = super().validate_rules() + check_object_name(self.name, file_name=False)
        if not self.spec.parent_stage_rollout:
            issues.append(FieldIssue("spec.parentStageRollout", "required field is missing"))
        if not self.spec.target_stage:
            issues.append(FieldIssue("spec.targetStage", "required field is missing"))
        return issues


class ClusterApprovalRequest(_ApprovalBase):
    """A request for (or, committed with Approved=True, the grant of) a stage approval."""

    api_version: _PLACEMENT_APIS
    kind: Literal["ClusterApprovalRequest"]


class ApprovalRequest(_ApprovalBase):
    """The namespaced twin of ClusterApprovalRequest (for StagedUpdateRuns)."""

    api_version: _NAMESPACED_APIS
    kind: Literal["ApprovalRequest"]

    def validate_rules(self) -> list[FieldIssue]:
        """As the cluster-scoped kind, plus a namespace."""
        return super().validate_rules() + check_namespace(self.namespace)


AnyStrategy = ClusterStagedUpdateStrategy | StagedUpdateStrategy
AnyUpdateRun = ClusterStagedUpdateRun | StagedUpdateRun
AnyApprovalRequest = ClusterApprovalRequest | ApprovalRequest

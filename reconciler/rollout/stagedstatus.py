"""The staged update run's status document: KubeFleet's reasons and messages (§4.5), condition
helpers on the plain status mapping, and where run and approval documents live in the output.

A run's whole memory is its status as KubeFleet shows it (`status/updateruns/<name>.yaml`, or
`status/updateruns/<namespace>/<name>.yaml` for a StagedUpdateRun): the frozen strategy
snapshot, the stages with their clusters and tasks, and conditions whose `lastTransitionTime`s
are the hub's own record of when things happened (every timer is measured from them). As in
KubeFleet (`meta.SetStatusCondition`), a transition time changes only when the status changes.
Called by the other `reconciler.rollout.staged*` modules.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import yaml

from gitfleet.api.conditions import format_time, parse_time
from gitfleet.api.staged import AnyApprovalRequest, AnyStrategy, AnyUpdateRun
from gitfleet.load.model import Origin
from reconciler.output import placement_key, yaml_bytes
from reconciler.priorparse import parse_own

DELETE_STAGE = "kubernetes-fleet.io/deleteStage"
STUCK_AFTER_SECONDS = 300
APPROVAL_RECHECK_SECONDS = 60

# Run conditions (§4.5)
INITIALIZED, PROGRESSING, SUCCEEDED = "Initialized", "Progressing", "Succeeded"
STARTED = "Started"
INIT_OK, INIT_FAILED = "UpdateRunInitializedSuccessfully", "UpdateRunInitializedFailed"
RUN_PROGRESSING, RUN_WAITING, RUN_STUCK = (
    "UpdateRunProgressing",
    "UpdateRunWaiting",
    "UpdateRunStuck",
)
RUN_STOPPING, RUN_STOPPED = "UpdateRunStopping", "UpdateRunStopped"
RUN_SUCCEEDED, RUN_FAILED = "UpdateRunSucceeded", "UpdateRunFailed"
STAGE_STARTED, STAGE_WAITING = "StageUpdatingStarted", "StageUpdatingWaiting"
STAGE_SUCCEEDED, STAGE_SKIPPED = "StageUpdatingSucceeded", "StageUpdatingSkippedNoClusters"
STAGE_STOPPING, STAGE_STOPPED = "StageUpdatingStopping", "StageUpdatingStopped"
STAGE_FAILED = "StageUpdatingFailed"
CLUSTER_STARTED, CLUSTER_SUCCEEDED = "ClusterUpdatingStarted", "ClusterUpdatingSucceeded"
CLUSTER_FAILED = "ClusterUpdatingFailed"
TASK_CREATED, TASK_APPROVED = "ApprovalRequestCreated", "ApprovalRequestApproved"
TASK_ELAPSED = "WaitTimeElapsed"
TASK_CREATED_REASON = "StageTaskApprovalRequestCreated"
TASK_APPROVED_REASON = "StageTaskApprovalRequestApproved"
TASK_ELAPSED_REASON = "AfterStageTaskWaitTimeElapsed"
ACCEPTED, ACCEPTED_REASON = "ApprovalAccepted", "ApprovalRequestApprovalAccepted"

SKIPPED_MESSAGE = "Stage skipped because it has no clusters"
ABORTED_MESSAGE = "The stages are aborted due to a non-recoverable error"


@dataclass(frozen=True)
class RunRef:
    """One run with what the driver needs to find its strategy, placement and files."""

    run: AnyUpdateRun
    origin: Origin | None
    strategy: AnyStrategy | None

    @property
    def namespace(self) -> str:
        return self.run.namespace or ""

    @property
    def name(self) -> str:
        return self.run.name

    @property
    def placement(self) -> str:
        """The placement key (`<name>`, or `<namespace>.<name>` for a ResourcePlacement)."""
        return placement_key(self.run.spec.placement_name, self.namespace)

    @property
    def source(self) -> str:
        """`ClusterStagedUpdateRun/<name>` or `StagedUpdateRun/<namespace>/<name>`."""
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.run.kind}/{ns}{self.name}"

    @property
    def request_kind(self) -> str:
        return "ApprovalRequest" if self.namespace else "ClusterApprovalRequest"

    def where(self) -> tuple[str, int | None]:
        return (self.origin.file, self.origin.line) if self.origin else ("", None)


RUN_STATUS_PREFIX = "status/updateruns/"
APPROVAL_PREFIX = "status/approvals/"


def run_status_path(name: str, namespace: str = "") -> str:
    """Output path of a run's status document."""
    return f"{RUN_STATUS_PREFIX}{namespace + '/' if namespace else ''}{name}.yaml"


def approval_status_path(name: str, namespace: str = "") -> str:
    """Output path of an approval request the hub created."""
    return f"{APPROVAL_PREFIX}{namespace + '/' if namespace else ''}{name}.yaml"


def request_name(run: str, stage: str, before: bool) -> str:
    """KubeFleet's approval request name `<run>-before-<stage>` / `<run>-after-<stage>`."""
    return f"{run}-{'before' if before else 'after'}-{stage}"


def read_doc(prior: Mapping[str, bytes], path: str) -> dict[str, Any] | None:
    """A document the hub wrote earlier, as a private copy (None when absent or unreadable)."""
    data = prior.get(path)
    if data is None:
        return None
    try:
        doc = parse_own(data)
    except yaml.YAMLError:
        return None
    return copy.deepcopy(doc) if isinstance(doc, dict) else None


def dump(doc: Mapping[str, Any]) -> bytes:
    return yaml_bytes(doc)


def find(conditions: list[dict[str, Any]] | None, type_: str) -> dict[str, Any] | None:
    return next((c for c in conditions or [] if c.get("type") == type_), None)


def is_true(conditions: list[dict[str, Any]] | None, type_: str) -> bool:
    cond = find(conditions, type_)
    return cond is not None and cond.get("status") == "True"


def is_false(conditions: list[dict[str, Any]] | None, type_: str) -> bool:
    cond = find(conditions, type_)
    return cond is not None and cond.get("status") == "False"


def since(conditions: list[dict[str, Any]] | None, type_: str) -> datetime | None:
    """The recorded lastTransitionTime of a condition."""
    cond = find(conditions, type_)
    stamp = cond.get("lastTransitionTime") if cond else None
    try:
        return parse_time(stamp) if isinstance(stamp, str) else None
    except ValueError:
        return None


def set_cond(
    holder: dict[str, Any],
    type_: str,
    status: str,
    reason: str,
    message: str,
    generation: int,
    now: datetime,
) -> None:
    """Set one condition on `holder["conditions"]`; the transition time moves only when the
    status changes (metav1 SetStatusCondition)."""
    conditions: list[dict[str, Any]] = holder.setdefault("conditions", [])
    old = find(conditions, type_)
    stamp = format_time(now)
    if old is not None and old.get("status") == status and old.get("lastTransitionTime"):
        stamp = old["lastTransitionTime"]
    new = {
        "lastTransitionTime": stamp,
        "message": message,
        "observedGeneration": generation,
        "reason": reason,
        "status": status,
        "type": type_,
    }
    if old is None:
        conditions.append(new)
    else:
        conditions[conditions.index(old)] = new


def bump_generations(node: Any, generation: int) -> None:
    """Every condition below `node` now observes `generation` (§4.4: a state change does not
    reset progress)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "conditions" and isinstance(value, list):
                for cond in value:
                    if isinstance(cond, dict):
                        cond["observedGeneration"] = generation
            else:
                bump_generations(value, generation)
    elif isinstance(node, list):
        for item in node:
            bump_generations(item, generation)


def approval_key(request: AnyApprovalRequest) -> tuple[str, str]:
    return (request.namespace or "", request.name)

"""Execution of a staged update run, one pass at a time (spec/kubefleet.md §4.4).

Stages run strictly in order, then the deletion stage. An empty stage is skipped with its
tasks. A stage waits for its before-stage Approval, then walks its clusters in order: at most
maxConcurrency (floorScale of the stage size, at least 1; integers uncapped) are in flight, a
cluster that finished this pass frees its slot in the same pass, a started cluster whose binding
moved elsewhere was pre-empted (the run fails). State Stop lets in-flight clusters finish and
starts none. After the clusters: TimedWait (from the recorded time the stage stopped
progressing) and Approval. A cluster in flight for 5 minutes marks the run UpdateRunStuck.
Works on a `reconciler.rollout.stagedstep.Step` (what the pass asks of the placement). Called by
`reconciler.rollout.staged`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from gitfleet.api.conditions import format_time
from gitfleet.api.staged import StageConfig
from reconciler.rollout import stagedapproval as ap
from reconciler.rollout import stagedstatus as st
from reconciler.rollout.model import UNSCHEDULED
from reconciler.rollout.stagedcheck import frozen_stages, in_flight, max_concurrency
from reconciler.rollout.stagedinit import InitError
from reconciler.rollout.stagedstatus import find, is_true, set_cond
from reconciler.rollout.stagedstep import Step


def execute(step: Step) -> None:
    """Advance the run as far as it can go this pass; InitError aborts it."""
    for stage, config in zip(
        step.status.get("stagesStatus") or [], frozen_stages(step.status), strict=True
    ):
        if is_true(stage.get("conditions"), st.SUCCEEDED):
            continue
        if not _run_stage(step, stage, config):
            return
    _run_deletion(step)


def _run_stage(step: Step, stage: dict[str, Any], config: StageConfig) -> bool:
    """True when the stage is done (and the next one may start this pass)."""
    name = stage["stageName"]
    if not stage.get("clusters"):
        for type_ in (st.PROGRESSING, st.SUCCEEDED):
            status = "False" if type_ == st.PROGRESSING else "True"
            step.cond(stage, type_, status, st.STAGE_SKIPPED, st.SKIPPED_MESSAGE)
        return True
    started = any(is_true(c.get("conditions"), st.STARTED) for c in stage["clusters"])
    if not started and not _before_tasks(step, stage):
        return False
    flying, done = _clusters(step, stage, config)
    if flying:
        _in_flight_conditions(step, stage, flying)
        return False
    if step.stopping:
        _stopped(step, stage)
        return False
    if not done:
        return False
    step.cond(
        stage,
        st.PROGRESSING,
        "False",
        st.STAGE_WAITING,
        f"Stage {name} is waiting for after-stage tasks",
    )
    step.run_cond(
        st.PROGRESSING,
        "False",
        st.RUN_WAITING,
        f"The updateRun is waiting for after-stage tasks in stage {name} to complete",
    )
    if not _after_tasks(step, stage, config):
        return False
    for type_ in (st.PROGRESSING, st.SUCCEEDED):
        status = "False" if type_ == st.PROGRESSING else "True"
        step.cond(stage, type_, status, st.STAGE_SUCCEEDED, f"Stage {name} completed successfully")
    stage.setdefault("endTime", format_time(step.now))
    step.run_cond(st.PROGRESSING, "True", st.RUN_PROGRESSING, "The updateRun is progressing")
    return True


def _stopped(step: Step, stage: dict[str, Any]) -> None:
    step.cond(
        stage, st.PROGRESSING, "False", st.STAGE_STOPPED, f"Stage {stage['stageName']} is stopped"
    )
    step.run_cond(st.PROGRESSING, "False", st.RUN_STOPPED, "The updateRun is stopped")


def _waiting_before(step: Step, stage: dict[str, Any]) -> None:
    name = stage["stageName"]
    step.cond(
        stage,
        st.PROGRESSING,
        "False",
        st.STAGE_WAITING,
        f"Stage {name} is waiting for before-stage tasks",
    )
    step.run_cond(
        st.PROGRESSING,
        "False",
        st.RUN_WAITING,
        f"The updateRun is waiting for before-stage tasks in stage {name} to complete",
    )


def _before_tasks(step: Step, stage: dict[str, Any]) -> bool:
    for task in stage.get("beforeStageTaskStatus") or []:
        if is_true(task.get("conditions"), st.TASK_APPROVED):
            continue
        if step.stopping:
            _stopped(step, stage)
            return False
        if not _approval(step, stage, task, before=True):
            _waiting_before(step, stage)
            return False
    return True


def _after_tasks(step: Step, stage: dict[str, Any], config: StageConfig) -> bool:
    passed = True
    for task, spec in zip(
        stage.get("afterStageTaskStatus") or [], config.after_stage_tasks or [], strict=False
    ):
        if task["type"] == "TimedWait":
            passed = _timed_wait(step, stage, task, spec.wait_ns() or 0) and passed
        elif not is_true(task.get("conditions"), st.TASK_APPROVED):
            passed = _approval(step, stage, task, before=False) and passed
    return passed


def _timed_wait(step: Step, stage: dict[str, Any], task: dict[str, Any], wait_ns: int) -> bool:
    if is_true(task.get("conditions"), st.TASK_ELAPSED):
        return True
    base = st.since(stage.get("conditions"), st.PROGRESSING) or step.now
    due = base + timedelta(microseconds=wait_ns // 1000)
    if step.now < due:
        step.wakeups.append(due)
        return False
    step.cond(task, st.TASK_ELAPSED, "True", st.TASK_ELAPSED_REASON, "Wait time elapsed")
    return True


def _approval(step: Step, stage: dict[str, Any], task: dict[str, Any], before: bool) -> bool:
    """Create (or keep) the request and accept a counting approval; True when approved."""
    name, stage_name, ref = task["approvalRequestName"], stage["stageName"], step.ref
    doc = st.read_doc(step.prior, st.approval_status_path(name, ref.namespace))
    if doc is None:
        doc = ap.request_doc(ref, stage_name, name, before)
        ap.note_preexisting(doc, step.approvals, ref, name)
    if doc.get("spec") != {"parentStageRollout": ref.name, "targetStage": stage_name}:
        raise InitError(f"the approval request `{name}` targets another updateRun or stage")
    step.requests[name] = doc
    step.cond(
        task, st.TASK_CREATED, "True", st.TASK_CREATED_REASON, "ApprovalRequest object is created"
    )
    verdict = ap.judge(doc, step.approvals, ref, stage_name)
    if verdict.approved:
        step.trailers += ap.accept(doc, verdict, step.approvals, step.now)
        step.cond(
            task,
            st.TASK_APPROVED,
            "True",
            st.TASK_APPROVED_REASON,
            "ApprovalRequest object is approved",
        )
        return True
    ap.note_refusal(doc, verdict)
    if verdict.found is not None:
        origin = step.approvals.origins.get((ref.namespace, name))
        file, line = (origin.file, origin.line) if origin else ("", None)
        step.errors.append(
            (
                file,
                line,
                "status.conditions",
                f"approval of `{name}` does not count: {verdict.reason}",
            )
        )
    step.trailers.append((ap.PENDING_TRAILER, f"{name} (gitfleet approve {ref.name} {stage_name})"))
    return False


def _finished(step: Step, cluster: str) -> bool | None:
    """True: succeeded; False: still in flight; None: pre-empted."""
    binding = step.binding(cluster)
    if binding is None or binding.resource_index != step.target:
        return None
    available, diff = binding.condition("Available"), binding.condition("DiffReported")
    return bool((available and available.status == "True") or (diff and diff.status == "True"))


def _blocked(step: Step, cluster: str, entry: Mapping[str, Any]) -> str | None:
    """Why the cluster cannot start now: its snapshot cannot be rendered from the recorded
    commit, or the override snapshots frozen at initialization (§4.2 step 8) were replaced."""
    why = step.view.unavailable.get(step.target)
    if why is not None:
        return why
    frozen = (
        tuple(entry.get("clusterResourceOverrideSnapshots") or ()),
        tuple(
            f"{r['namespace']}/{r['name']}" for r in entry.get("resourceOverrideSnapshots") or ()
        ),
    )
    now = step.view.override_snapshots.get(step.target, {}).get(cluster, ((), ()))
    if frozen != now:
        was = ", ".join(frozen[0] + frozen[1]) or "none"
        are = ", ".join(now[0] + now[1]) or "none"
        return (
            f"the override snapshots frozen at initialization for cluster `{cluster}` "
            f"({was}) are no longer the current ones ({are}); gitfleet renders current "
            "override content only: restore the override or create a new run"
        )
    return None


def _clusters(step: Step, stage: dict[str, Any], config: StageConfig) -> tuple[list[str], bool]:
    """Walk the stage's clusters; (in flight, all succeeded)."""
    limit = max_concurrency(config, len(stage["clusters"]))
    flying: list[str] = []
    for entry in stage["clusters"]:
        cluster, conds = entry["clusterName"], entry.get("conditions")
        if is_true(conds, st.SUCCEEDED):
            continue
        if is_true(conds, st.STARTED):
            outcome = _finished(step, cluster)
            if outcome is None:
                step.cond(
                    entry,
                    st.SUCCEEDED,
                    "False",
                    st.CLUSTER_FAILED,
                    "The cluster was updated by another run",
                )
                raise InitError(
                    f"the cluster `{cluster}` in the stage `{stage['stageName']}` has been updated by another updateRun or its binding changed"
                )
            if outcome:
                step.cond(
                    entry,
                    st.SUCCEEDED,
                    "True",
                    st.CLUSTER_SUCCEEDED,
                    "Cluster update completed successfully",
                )
                continue
            flying.append(cluster)
        elif not step.stopping and len(flying) < limit:
            why = _blocked(step, cluster, entry)
            if why is not None:
                file, line = step.ref.where()
                message = f"{step.ref.source}: cannot start cluster `{cluster}`: {why}"
                step.errors.append((file, line, "spec.resourceSnapshotIndex", message))
                break
            step.moves[cluster] = step.target
            step.cond(entry, st.STARTED, "True", st.CLUSTER_STARTED, "Cluster update started")
            stage.setdefault("startTime", format_time(step.now))
            flying.append(cluster)
    done = all(is_true(e.get("conditions"), st.SUCCEEDED) for e in stage["clusters"])
    return flying, done


def _in_flight_conditions(step: Step, stage: dict[str, Any], flying: list[str]) -> None:
    name = stage["stageName"]
    if step.stopping:
        step.cond(stage, st.PROGRESSING, "Unknown", st.STAGE_STOPPING, f"Stage {name} is stopping")
        step.run_cond(
            st.PROGRESSING,
            "Unknown",
            st.RUN_STOPPING,
            f"The updateRun is stopping; waiting for clusters {', '.join(flying)} in stage {name} to finish",
        )
    else:
        step.cond(
            stage, st.PROGRESSING, "True", st.STAGE_STARTED, f"Stage {name} is updating clusters"
        )
        step.run_cond(st.PROGRESSING, "True", st.RUN_PROGRESSING, "The updateRun is progressing")
    stuck: list[str] = []
    for entry in stage["clusters"]:
        began = st.since(entry.get("conditions"), st.STARTED)
        if entry["clusterName"] not in flying or began is None:
            continue
        due = began + timedelta(seconds=st.STUCK_AFTER_SECONDS)
        if due <= step.now:
            stuck.append(entry["clusterName"])
        else:
            step.wakeups.append(due)
    if stuck:
        shown = ", ".join(stuck[:3]) + ("..." if len(stuck) > 3 else "")
        step.run_cond(
            st.PROGRESSING,
            "False",
            st.RUN_STUCK,
            f"The updateRun is stuck waiting for {shown} cluster(s) in stage {name} to finish updating, please check placement status for potential errors",
        )


def _run_deletion(step: Step) -> None:
    stage = step.status.setdefault(
        "deletionStageStatus", {"stageName": st.DELETE_STAGE, "clusters": []}
    )
    remaining = False
    for entry in stage.get("clusters") or []:
        cluster, conds = entry["clusterName"], entry.get("conditions")
        if is_true(conds, st.SUCCEEDED):
            continue
        binding = step.binding(cluster)
        if binding is None or binding.state != UNSCHEDULED:
            step.cond(
                entry,
                st.SUCCEEDED,
                "True",
                st.CLUSTER_SUCCEEDED,
                "Cluster update completed successfully",
            )
            continue
        remaining = True
        if not is_true(conds, st.STARTED):
            if step.stopping:
                continue
            step.cond(entry, st.STARTED, "True", st.CLUSTER_STARTED, "Cluster update started")
        step.deletes.add(cluster)
    if remaining:
        if step.deletes:
            step.cond(
                stage,
                st.PROGRESSING,
                "True",
                st.STAGE_STARTED,
                "Deleting the bindings of clusters no longer selected",
            )
            step.run_cond(
                st.PROGRESSING, "True", st.RUN_PROGRESSING, "The updateRun is progressing"
            )
        else:
            _stopped(step, stage)
        return
    for type_ in (st.PROGRESSING, st.SUCCEEDED):
        status = "False" if type_ == st.PROGRESSING else "True"
        step.cond(stage, type_, status, st.STAGE_SUCCEEDED, "Stage completed successfully")
        step.run_cond(type_, status, st.RUN_SUCCEEDED, "The updateRun completed successfully")


def fail(step_status: dict[str, Any], message: str, generation: int, now: datetime) -> None:
    """Abort: the updating stage and the run fail (terminal)."""
    stages = [
        *(step_status.get("stagesStatus") or []),
        step_status.get("deletionStageStatus") or {},
    ]
    current = next(
        (s for s in stages if s and not is_true(s.get("conditions"), st.SUCCEEDED)), None
    )
    if current is not None and (
        find(current.get("conditions"), st.PROGRESSING) or in_flight(current)
    ):
        for type_ in (st.PROGRESSING, st.SUCCEEDED):
            set_cond(current, type_, "False", st.STAGE_FAILED, message, generation, now)
    set_cond(
        step_status, st.PROGRESSING, "False", st.RUN_FAILED, st.ABORTED_MESSAGE, generation, now
    )
    set_cond(step_status, st.SUCCEEDED, "False", st.RUN_FAILED, message, generation, now)

"""The staged update run driver (spec/kubefleet.md §4): every (Cluster)StagedUpdateRun of the
fleet, one pass, as a pure function.

`drive_staged_runs(fleet, inputs, prior_output) -> DriverResult` is the external-driver contract
of `reconciler.rollout.model`. For each run it reads back the run's status document from the
previous output (its whole memory), checks that the immutable spec fields did not change and
that the state transition is allowed, initializes it once (§4.2), re-validates (§4.3) and
executes (§4.4) it, and returns the clusters of its External placement to move now, the bindings
to delete, the run and approval request documents, user errors, the earliest due time and the
commit trailers (who approved). Time is only `inputs.now` and the times recorded in the output.
Called by the pass (registered as a rollout driver).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from gitfleet.api.staged import UpdateRunSpec
from gitfleet.load.model import FleetSnapshot
from reconciler.rollout import stagedstatus as st
from reconciler.rollout.guard import kept, run_fault
from reconciler.rollout.model import DriverResult, ExternalUpdate, PlacementView, RolloutInputs
from reconciler.rollout.stagedapproval import Approvals
from reconciler.rollout.stagedcheck import revalidate
from reconciler.rollout.stagedexec import execute, fail
from reconciler.rollout.stagedinit import InitError, initialize
from reconciler.rollout.stagedstep import Step

IMMUTABLE = (
    ("placement_name", "placementName"),
    ("resource_snapshot_index", "resourceSnapshotIndex"),
    ("staged_rollout_strategy_name", "stagedRolloutStrategyName"),
)
FORBIDDEN_TRANSITIONS = {("Initialize", "Stop"), ("Run", "Initialize"), ("Stop", "Initialize")}


@dataclass
class _Collected:
    updates: list[ExternalUpdate] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    errors: list[tuple[str, int | None, str, str]] = field(default_factory=list)
    wakeups: list[Any] = field(default_factory=list)
    trailers: list[tuple[str, str]] = field(default_factory=list)


def run_refs(fleet: FleetSnapshot) -> Iterator[st.RunRef]:
    """Every run of the fleet with its strategy (None when missing) and origin."""
    for name, run in sorted(fleet.update_runs.items()):
        origin = fleet.origins.get(("ClusterStagedUpdateRun", "", name))
        strategy = fleet.strategies.get(run.spec.staged_rollout_strategy_name)
        yield st.RunRef(run, origin, strategy)
    for (ns, name), nrun in sorted(fleet.staged_update_runs.items()):
        origin = fleet.origins.get(("StagedUpdateRun", ns, name))
        nstrategy = fleet.staged_strategies.get((ns, nrun.spec.staged_rollout_strategy_name))
        yield st.RunRef(nrun, origin, nstrategy)


def approvals_of(fleet: FleetSnapshot) -> Approvals:
    objects: dict[tuple[str, str], Any] = {("", n): a for n, a in fleet.approvals.items()}
    objects.update(fleet.staged_approvals)
    origins = {}
    for (ns, name), found in objects.items():
        origin = fleet.origins.get((found.kind, ns, name))
        if origin is not None:
            origins[(ns, name)] = origin
    return Approvals(objects, origins, fleet.file_commits)


def _spec_problem(spec: UpdateRunSpec, prior: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, message) when the run's spec changed in a way KubeFleet forbids."""
    recorded = prior.get("spec") or {}
    for attr, name in IMMUTABLE:
        if getattr(spec, attr) != recorded.get(name):
            was = recorded.get(name)
            return (
                f"spec.{name}",
                f"spec.{name} is immutable (was {was!r}); create a new run instead",
            )
    old = recorded.get("state", "Initialize")
    if (old, spec.state) in FORBIDDEN_TRANSITIONS:
        return (
            "spec.state",
            f"invalid state transition: cannot transition from {old} to {spec.state}",
        )
    return None


def _prior_requests(
    ref: st.RunRef, status: Mapping[str, Any], prior: Mapping[str, bytes]
) -> dict[str, bytes]:
    """The request documents the run created earlier (kept for the run's lifetime)."""
    out: dict[str, bytes] = {}
    for stage in status.get("stagesStatus") or []:
        for task in (stage.get("beforeStageTaskStatus") or []) + (
            stage.get("afterStageTaskStatus") or []
        ):
            name = task.get("approvalRequestName")
            path = st.approval_status_path(str(name), ref.namespace)
            if name and st.is_true(task.get("conditions"), st.TASK_CREATED) and path in prior:
                out[path] = prior[path]
    return out


SNAPSHOT_COMMIT = "gitfleet.io/resource-snapshot-commit"
"""Annotation of a run's status document: the source commit its resource snapshot renders from."""


def _new_doc(
    ref: st.RunRef, generation: int, status: dict[str, Any], view: PlacementView | None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": ref.name, "generation": generation}
    if ref.namespace:
        meta["namespace"] = ref.namespace
    used = str(status.get("resourceSnapshotIndexUsed", ""))
    commit = view.resource_commits.get(int(used)) if view is not None and used.isdigit() else None
    if commit:
        meta["annotations"] = {SNAPSHOT_COMMIT: commit}
    return {
        "apiVersion": ref.run.api_version,
        "kind": ref.run.kind,
        "metadata": meta,
        "spec": ref.run.spec.dump(),
        "status": status,
    }


def _step_run(
    ref: st.RunRef,
    inputs: RolloutInputs,
    prior: Mapping[str, bytes],
    approvals: Approvals,
    out: _Collected,
) -> None:
    path = st.run_status_path(ref.name, ref.namespace)
    file, line = ref.where()
    before = st.read_doc(prior, path) or {}
    generation = int((before.get("metadata") or {}).get("generation") or 1)
    if before:
        problem = _spec_problem(ref.run.spec, before)
        if problem is not None:
            out.errors.append((file, line, *problem))
            out.files[path] = prior[path]
            out.files.update(_prior_requests(ref, before.get("status") or {}, prior))
            return
        if before.get("spec") != ref.run.spec.dump():
            generation += 1
    status: dict[str, Any] = before.get("status") or {}
    st.bump_generations(status, generation)
    view = inputs.placements.get(ref.placement)
    now = inputs.now
    if st.find(status.get("conditions"), st.INITIALIZED) is None:
        try:
            initialize(ref, view, inputs.cluster_labels, status)
        except InitError as exc:
            st.set_cond(status, st.INITIALIZED, "False", st.INIT_FAILED, str(exc), generation, now)
            out.errors.append((file, line, "spec", f"{ref.source} failed to initialize: {exc}"))
        else:
            st.set_cond(
                status,
                st.INITIALIZED,
                "True",
                st.INIT_OK,
                "The UpdateRun initialized successfully",
                generation,
                now,
            )
    out.files.update(_prior_requests(ref, status, prior))
    runnable = (
        st.is_true(status.get("conditions"), st.INITIALIZED)
        and ref.run.spec.state != "Initialize"
        and st.find(status.get("conditions"), st.SUCCEEDED) is None
    )
    if runnable and view is None:
        fail(status, "parent placement not found", generation, now)
        out.errors.append(
            (file, line, "spec.placementName", f"{ref.source} failed: parent placement not found")
        )
    elif runnable and view is not None:
        step = Step(ref, status, view, generation, now, approvals, prior)
        try:
            revalidate(status, view, inputs.cluster_labels)
            execute(step)
        except InitError as exc:
            fail(status, str(exc), generation, now)
            out.errors.append((file, line, "spec", f"{ref.source} failed: {exc}"))
        _collect(ref, step, out)
    out.files[path] = st.dump(_new_doc(ref, generation, status, view))


def _collect(ref: st.RunRef, step: Step, out: _Collected) -> None:
    for name, doc in step.requests.items():
        out.files[st.approval_status_path(name, ref.namespace)] = st.dump(doc)
    if step.moves or step.deletes:
        out.updates.append(
            ExternalUpdate(
                placement=ref.placement,
                source=ref.source,
                clusters=dict(sorted(step.moves.items())),
                delete=frozenset(step.deletes),
                apply_strategy=step.status.get("appliedStrategy"),
            )
        )
    out.errors += step.errors
    out.wakeups += step.wakeups
    out.trailers += step.trailers


def _faulted(ref: st.RunRef, prior: Mapping[str, bytes], exc: Exception) -> _Collected:
    """A run whose step raised: its previous documents, a located error, and an empty update
    so its placement says it waits for this run (`reconciler.rollout.guard`)."""
    path = st.run_status_path(ref.name, ref.namespace)
    out = _Collected(files=kept(prior, [path]))
    out.errors.append(run_fault(ref.source, *ref.where(), exc))
    try:
        status = (st.read_doc(prior, path) or {}).get("status") or {}
        out.files.update(_prior_requests(ref, status, prior))
        out.updates.append(ExternalUpdate(placement=ref.placement, source=ref.source))
    except Exception:  # an unreadable prior status keeps the run's own document only
        return out
    return out


def _merge(out: _Collected, one: _Collected) -> None:
    out.updates += one.updates
    out.files.update(one.files)
    out.errors += one.errors
    out.wakeups += one.wakeups
    out.trailers += one.trailers


def drive_staged_runs(
    fleet: FleetSnapshot, inputs: RolloutInputs, prior_output: Mapping[str, bytes]
) -> DriverResult:
    """One pass of every staged update run (the rollout driver for External placements)."""
    approvals = approvals_of(fleet)
    out = _Collected()
    for ref in run_refs(fleet):
        one = _Collected()
        try:
            _step_run(ref, inputs, prior_output, approvals, one)
        except Exception as exc:  # one run's fault fails it alone
            one = _faulted(ref, prior_output, exc)
        _merge(out, one)
    return DriverResult(
        updates=tuple(out.updates),
        files=dict(sorted(out.files.items())),
        errors=tuple(sorted(set(out.errors), key=lambda e: (e[0], e[1] or 0, e[2], e[3]))),
        wakeup=min(out.wakeups) if out.wakeups else None,
        trailers=tuple(dict.fromkeys(out.trailers)),
    )

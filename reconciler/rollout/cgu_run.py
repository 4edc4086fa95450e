"""One ClusterGroupUpgrade through one pass: the pre-start checks, the start and the batch loop
(spec/cluster-group-upgrade.md §8-§12).

`advance` mutates the CGU's working copy (`CguRun`) and returns the binding moves, events and
wake-up times of this pass. Time comes only from `now` and the times recorded in the run.
Called by the driver (`reconciler.rollout.cgu`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from gitfleet.api.cgu import (
    BLOCKING_MODE_ANNOTATION,
    CLUSTER_FILTERING_ANNOTATION,
    ClusterActions,
)
from gitfleet.api.conditions import format_time, parse_time
from reconciler.rollout.cgu_select import (
    COMPLIANT,
    NON_COMPLIANT,
    build_plan,
    cluster_compliant,
    compliance,
    computed_max_concurrency,
    go_list,
    is_report_diff,
    placement_key_of,
    select_clusters,
)
from reconciler.rollout.cgu_spec import Blocker, CguInput
from reconciler.rollout.cgu_state import CguRun, Cond, Op, Target
from reconciler.rollout.model import BOUND, SCHEDULED, PlacementView

TIMED_OUT = "Policy remediation took too long"
ALL_COMPLIANT = "All clusters are compliant with all the managed policies"
NO_CLUSTERS = (
    "No clusters available for remediation after filtering out non-completed clusters from "
    "blocking CGUs"
)


@dataclass
class Step:
    """What one CGU did in one pass."""

    updates: dict[str, dict[str, int]] = field(default_factory=dict)
    events: list[tuple[str, str, str]] = field(default_factory=list)
    """(reason, action, message)."""
    wakeups: list[datetime] = field(default_factory=list)


@dataclass(frozen=True)
class Context:
    views: Mapping[str, PlacementView]
    labels: Mapping[str, Mapping[str, str]]
    soak: Mapping[str, int]
    """Placement key -> valid soak seconds."""
    now: datetime
    blockers: Mapping[tuple[str, str], Blocker]


def set_cond(
    run: CguRun, type_: str, status: str, reason: str, message: str, now: datetime
) -> None:
    old = run.conditions.get(type_)
    same = old is not None and (old.status, old.reason, old.message) == (status, reason, message)
    since = old.since if same and old is not None else format_time(now)
    run.conditions[type_] = Cond(status, reason, message, since)


def _elapsed(now: datetime, since: datetime) -> int:
    return max(0, int((now - since).total_seconds()))


class Runner:
    """Advances one CGU; `inp` is its spec (live or last valid) and identity."""

    def __init__(self, inp: CguInput, run: CguRun, ctx: Context) -> None:
        self.inp, self.run, self.ctx, self.out = inp, run, ctx, Step()
        self.name = inp.name

    # -- events and actions -------------------------------------------------------------
    def event(self, reason: str, action: str, message: str) -> None:
        self.out.events.append((reason, action, message))

    def record(self, cluster: str, phase: str, action: ClusterActions | None) -> None:
        if action is None:
            return
        remove = tuple(
            dict.fromkeys(
                [*(action.delete_cluster_labels or {}), *(action.remove_cluster_labels or [])]
            )
        )
        op = Op(
            self.run.next_seq(),
            format_time(self.ctx.now),
            cluster,
            phase,
            dict(action.add_cluster_labels or {}),
            remove,
            dict(action.add_cluster_annotations or {}),
            tuple(action.remove_cluster_annotations or ()),
        )
        if op.add_labels or op.remove_labels or op.add_annotations or op.remove_annotations:
            self.run.ops.append(op)
            self.out.wakeups.append(self.ctx.now)

    def after_completion(self) -> ClusterActions | None:
        raw = (self.run.live.get("actions") or {}).get("afterCompletion")
        return None if raw is None else ClusterActions.model_validate(raw)

    # -- compliance ---------------------------------------------------------------------
    def targets_now(self) -> list[tuple[str, int]]:
        return [(t.key, t.index) for t in self.run.targets]

    def compliant(self, cluster: str) -> bool:
        return cluster_compliant(cluster, self.targets_now(), self.ctx.views)

    # -- pre-start ----------------------------------------------------------------------
    def pre_start(self) -> bool:
        """§8.1 steps 1-9; True when the CGU starts in this pass."""
        run, now, spec = self.run, self.ctx.now, self.inp.spec
        if self.inp.invalid is not None:
            run.conditions = {k: v for k, v in run.conditions.items() if k == "Validated"}
            set_cond(run, "Validated", "False", *self.inp.invalid, now)
            return False
        selection = select_clusters(spec, self.ctx.labels)
        for entry in selection.warnings:
            self.event("CguInvalidSelector", "", f"ignoring malformed cluster selector: {entry}")
        if selection.error is not None:
            for t in ("Validated", "Progressing"):
                run.conditions.pop(t, None)
            message = f"Unable to select clusters: {selection.error}"
            self.failure_event("ClustersSelected", message)
            set_cond(run, "ClustersSelected", "False", "ClusterNotFound", message, now)
            return False
        set_cond(
            run,
            "ClustersSelected",
            "True",
            "ClusterSelectionCompleted",
            "All selected clusters are valid",
            now,
        )
        clusters = list(selection.clusters)
        run.computed_max = computed_max_concurrency(
            spec.remediation_strategy.max_concurrency, len(clusters)
        )
        if not self.managed(clusters):
            run.conditions.pop("Progressing", None)
            return False
        set_cond(run, "Validated", "True", "ValidationCompleted", "Completed validation", now)
        self.make_plan(clusters)
        if not spec.enable:
            set_cond(run, "Progressing", "False", "NotEnabled", "Not enabled", now)
            return False
        if run.started_at is None:
            run.started_at = now
        if self.blocked():
            return False
        return self.filter_clusters(clusters)

    def failure_event(self, type_: str, message: str) -> None:
        old = self.run.conditions.get(type_)
        if old is None or old.message != message:
            self.event(
                "CguValidationFailure",
                "RemediationOnHoldDueToValidationFailure",
                f"ClusterGroupUpgrade {self.name}: validation failure: {message}",
            )

    def managed(self, clusters: Sequence[str]) -> bool:
        """§6: missing / invalid placements, compliant-before and for-upgrade lists."""
        run, views = self.run, self.ctx.views
        missing, invalid, targets, before = [], [], [], []
        for entry in dict.fromkeys(self.inp.spec.managed_policies or []):
            view = views.get(placement_key_of(entry))
            if view is None:
                missing.append(entry)
            elif view.strategy_type != "External":
                invalid.append(entry)
            else:
                index = view.latest_resource_index or 0
                report_diff = is_report_diff(view)
                if any(compliance(view, c, index, report_diff) == NON_COMPLIANT for c in clusters):
                    targets.append(
                        Target(entry, view.key, view.kind, view.name, view.namespace, index)
                    )
                else:
                    before.append(entry)
        if missing or invalid:
            message = (
                f"Invalid managed policies: {go_list(invalid)} "
                if invalid
                else f"Missing managed policies: {go_list(missing)} "
            )
            self.failure_event("Validated", message)
            set_cond(run, "Validated", "False", "NotAllManagedPoliciesExist", message, self.ctx.now)
            return False
        run.targets, run.compliant_before = targets, before
        return True

    def make_plan(self, clusters: Sequence[str]) -> None:
        spec, run = self.inp.spec, self.run
        done = {c for c in clusters if self.compliant(c)}
        plan = build_plan(
            clusters, spec.remediation_strategy.canaries or [], run.computed_max or 0, done
        )
        run.plan = [list(b) for b in plan.batches]
        run.canary_batches = plan.canary_batches
        self.compliant_clusters = list(plan.compliant)

    def blocked(self) -> bool:
        """§8.2: explicit blockers (missing / not completed), then implicit ones."""
        missing, incomplete = [], []
        partial = self.inp.annotations.get(BLOCKING_MODE_ANNOTATION) == "partial"
        for cr in self.inp.spec.blocking_c_rs or []:
            blocker = self.ctx.blockers.get((cr.namespace or self.inp.namespace, cr.name))
            if blocker is None:
                missing.append(cr.name)
            elif not blocker.completed(partial):
                incomplete.append(cr.name)
        incomplete += self.implicit_blockers()
        now = self.ctx.now
        if missing:
            set_cond(
                self.run,
                "Progressing",
                "False",
                "MissingBlockingCR",
                f"Missing blocking CRs: {go_list(missing)}",
                now,
            )
        elif incomplete:
            message = f"Blocking CRs that are not completed: {go_list(incomplete)}"
            set_cond(self.run, "Progressing", "False", "IncompleteBlockingCR", message, now)
        return bool(missing or incomplete)

    def implicit_blockers(self) -> list[str]:
        mine = {(t.key, c) for t in self.run.targets for batch in self.run.plan for c in batch}
        out = []
        for (ns, name), blocker in sorted(self.ctx.blockers.items()):
            if (ns, name) == (self.inp.namespace, self.inp.name) or not blocker.in_progress:
                continue
            if mine & blocker.claims:
                out.append(name if ns == self.inp.namespace else f"{ns}/{name}")
        return out

    def filter_clusters(self, clusters: list[str]) -> bool:
        """§8.2 partial-mode filtering; rebuild the plan; False when the CGU ended Failed."""
        ann = self.inp.annotations
        if (
            ann.get(BLOCKING_MODE_ANNOTATION) != "partial"
            or ann.get(CLUSTER_FILTERING_ANNOTATION) != "true"
        ):
            return True
        blockers = [
            self.ctx.blockers[(cr.namespace or self.inp.namespace, cr.name)]
            for cr in self.inp.spec.blocking_c_rs or []
        ]
        kept = [c for c in clusters if all(c in b.complete_clusters for b in blockers)]
        if not kept:
            set_cond(self.run, "Progressing", "False", "Completed", NO_CLUSTERS, self.ctx.now)
            set_cond(self.run, "Succeeded", "False", "Failed", NO_CLUSTERS, self.ctx.now)
            self.finish(False)
            return False
        self.make_plan(kept)
        return True

    # -- start and batches ----------------------------------------------------------------
    def start(self) -> None:
        """§9.1."""
        run, now = self.run, self.ctx.now
        self.event(
            "CguStarted",
            "RemediationStarted",
            f"ClusterGroupUpgrade {self.name} started remediating policies",
        )
        for c in self.compliant_clusters:
            run.clusters.append({"name": c, "state": "complete"})
            self.record(c, "afterCompletion", self.after_completion())
        actions = self.inp.spec.actions
        for batch in run.plan:
            for c in batch:
                self.record(c, "beforeEnable", actions.before_enable if actions else None)
        if not run.plan:
            set_cond(run, "Progressing", "False", "Completed", ALL_COMPLIANT, now)
            set_cond(
                run,
                "Succeeded",
                "True",
                "Completed",
                "All clusters already compliant with the specified managed policies",
                now,
            )
            self.finish(True)
            return
        set_cond(
            run, "Progressing", "True", "InProgress", "Remediating non-compliant policies", now
        )
        self.progress()

    def timeout_s(self) -> int:
        """T in seconds, from the live (or last valid) spec."""
        strategy = self.run.live.get("remediationStrategy") or {}
        return int(strategy.get("timeout", 240)) * 60

    def paused(self) -> bool:
        return self.run.live.get("enable", True) is False

    def progress(self) -> None:
        """§9.2: repeat until a step ends the pass."""
        run, now = self.run, self.ctx.now
        assert run.started_at is not None
        total = len(run.plan)
        for _ in range(total + 1):
            if run.current_batch == 0:
                run.current_batch = 1
            b = run.current_batch
            batch = run.plan[b - 1]
            if run.batch_started_at is None and not self.paused():
                run.progress = {c: {"state": "NotStarted"} for c in batch}
                run.batch_started_at = now
                self.event(
                    "CguStarted",
                    "RemediationInBatchStarted",
                    f"ClusterGroupUpgrade {self.name}: batch index {b} upgrade started",
                )
            deadline = run.started_at + timedelta(seconds=self.timeout_s())
            if _elapsed(now, run.started_at) >= self.timeout_s():
                self.record_timeouts(batch, b)
                self.end_timed_out(TIMED_OUT)
                return
            self.out.wakeups.append(deadline)
            self.set_paused_condition()
            if run.batch_started_at is None:
                return  # paused before the batch started
            for c in batch:
                self.advance_cluster(c)
            done = all(run.progress.get(c, {}).get("state") == "Completed" for c in batch)
            if b == total:
                if done and all(self.compliant(c) for prev in run.plan[:-1] for c in prev):
                    self.event(
                        "CguSuccess", "RemediationInBatchCompleted", self.batch_done_message(b)
                    )
                    set_cond(run, "Progressing", "False", "Completed", ALL_COMPLIANT, now)
                    set_cond(run, "Succeeded", "True", "Completed", ALL_COMPLIANT, now)
                    self.finish(True)
                return
            if done:
                self.event("CguSuccess", "RemediationInBatchCompleted", self.batch_done_message(b))
                if self.paused():
                    return
                run.current_batch, run.batch_started_at = b + 1, None
                continue
            if not self.batch_expired(b, total):
                return
            self.record_timeouts(batch, b)
            if b <= run.canary_batches:
                self.end_timed_out(f"{TIMED_OUT} on canary clusters")
                return
            if self.run.live.get("batchTimeoutAction") == "Abort":
                self.end_timed_out(f"{TIMED_OUT} on some clusters")
                return
            if self.paused():
                return
            run.current_batch, run.batch_started_at = b + 1, None

    def set_paused_condition(self) -> None:
        if self.paused():
            message = (
                "Paused: enable is false; clusters in flight finish, no new cluster or batch starts"
            )
            set_cond(self.run, "Progressing", "True", "Paused", message, self.ctx.now)
        else:
            set_cond(
                self.run,
                "Progressing",
                "True",
                "InProgress",
                "Remediating non-compliant policies",
                self.ctx.now,
            )

    def batch_done_message(self, b: int) -> str:
        return f"ClusterGroupUpgrade {self.name}: all clusters in the batch index {b} are compliant with managed policies"

    def batch_expired(self, b: int, total: int) -> bool:
        """§10.1 in integers; records the batch deadline as a wake-up."""
        run = self.run
        assert run.started_at is not None and run.batch_started_at is not None
        remaining = self.timeout_s() - int((run.batch_started_at - run.started_at).total_seconds())
        rb = total - (b - 1)
        if _elapsed(self.ctx.now, run.batch_started_at) * rb >= remaining:
            return True
        self.out.wakeups.append(run.batch_started_at + timedelta(seconds=-(-remaining // rb)))
        return False

    def record_timeouts(self, batch: Sequence[str], b: int) -> None:
        """§10.3."""
        appended = False
        for c in batch:
            entry = self.run.progress.get(c)
            if entry is None:
                self.run.clusters.append({"name": c, "state": "timedout"})
            elif entry.get("state") == "InProgress":
                policy = self.run.targets[int(entry.get("policyIndex", 0))].entry
                self.run.clusters.append(
                    {
                        "name": c,
                        "state": "timedout",
                        "currentPolicy": {"name": policy, "status": "NonCompliant"},
                    }
                )
            else:
                continue
            appended = True
        if appended:
            self.event(
                "CguTimedout",
                "RemediationInBatchTimeout",
                f"ClusterGroupUpgrade {self.name}: some clusters in the batch index {b} timed out remediating policies",
            )

    def end_timed_out(self, message: str) -> None:
        set_cond(self.run, "Progressing", "False", "TimedOut", message, self.ctx.now)
        set_cond(self.run, "Succeeded", "False", "TimedOut", message, self.ctx.now)
        self.finish(False)

    def finish(self, success: bool) -> None:
        """§11."""
        run = self.run
        run.completed_at = self.ctx.now
        run.current_batch, run.batch_started_at, run.progress = 0, None, {}
        if success:
            self.event(
                "CguSuccess",
                "RemediationCompleted",
                f"ClusterGroupUpgrade {self.name} succeeded remediating policies",
            )
        else:
            self.event(
                "CguTimedout",
                "RemediationTimeout",
                f"ClusterGroupUpgrade {self.name} timed-out remediating policies",
            )

    def advance_cluster(self, cluster: str) -> None:
        """§9.3 with the soak rule of §9.4."""
        entry = self.run.progress.setdefault(cluster, {"state": "NotStarted"})
        if entry["state"] == "Completed":
            return
        if entry["state"] == "NotStarted":
            if self.paused():
                return
            entry.update(state="InProgress", policyIndex=0)
            self.event(
                "CguStarted",
                "RemediationInClusterStarted",
                f"ClusterGroupUpgrade {self.name}: cluster {cluster} upgrade started",
            )
        i = int(entry.get("policyIndex", 0))
        while i < len(self.run.targets) and self.satisfied(cluster, entry, self.run.targets[i]):
            i += 1
        if i == len(self.run.targets):
            self.run.progress[cluster] = {"state": "Completed"}
            self.run.clusters.append({"name": cluster, "state": "complete"})
            self.record(cluster, "afterCompletion", self.after_completion())
            self.event(
                "CguSuccess",
                "RemediationInClusterCompleted",
                f"ClusterGroupUpgrade {self.name}: cluster {cluster} upgrade finished successfully",
            )
            return
        entry["policyIndex"] = i
        self.remediate(self.run.targets[i], cluster)

    def satisfied(self, cluster: str, entry: dict[str, Any], target: Target) -> bool:
        view = self.ctx.views.get(target.key)
        result = compliance(view, cluster, target.index, is_report_diff(view))
        if result == NON_COMPLIANT:
            entry.pop("firstCompliantAt", None)
            return False
        soak = self.ctx.soak.get(target.key)
        if result != COMPLIANT or soak is None:
            return True
        now = self.ctx.now
        first = entry.setdefault("firstCompliantAt", format_time(now))
        since = parse_time(first)
        if _elapsed(now, since) >= soak:
            entry.pop("firstCompliantAt", None)
            return True
        self.out.wakeups.append(since + timedelta(seconds=soak))
        return False

    def remediate(self, target: Target, cluster: str) -> None:
        view = self.ctx.views.get(target.key)
        if view is None or view.strategy_type != "External":
            return
        binding = next((b for b in view.bindings if b.cluster == cluster), None)
        if binding is None or binding.deleting:
            return
        behind = binding.resource_index is None or binding.resource_index < target.index
        if binding.state == SCHEDULED or (binding.state == BOUND and behind):
            self.out.updates.setdefault(target.key, {})[cluster] = target.index


def advance(inp: CguInput, run: CguRun, ctx: Context) -> Step:
    """One pass of one CGU (§8-§11)."""
    runner = Runner(inp, run, ctx)
    if run.finished:
        return runner.out
    if not run.started:
        if not runner.pre_start():
            return runner.out
        runner.start()
        return runner.out
    runner.progress()
    return runner.out

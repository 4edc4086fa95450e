"""One ClusterGroupUpgrade through one pass: the pre-start checks, the start and the batch loop
(spec/cluster-group-upgrade.md §8-§12).

`advance` mutates the CGU's working copy (`CguRun`) and returns the binding moves, events and
wake-up times of this pass. Time comes only from `now` and the times recorded in the run.
Called by the driver (`reconciler.rollout.cgu`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from gitfleet.api.conditions import format_time, parse_time
from reconciler.rollout.cgu_base import (
    ALL_COMPLIANT,
    TIMED_OUT,
    Context,
    Step,
    _elapsed,
    set_cond,
)
from reconciler.rollout.cgu_prestart import PreStart
from reconciler.rollout.cgu_select import (
    COMPLIANT,
    NON_COMPLIANT,
    compliance,
    is_report_diff,
)
from reconciler.rollout.cgu_spec import CguInput
from reconciler.rollout.cgu_state import CguRun, Target
from reconciler.rollout.model import BOUND, SCHEDULED


class Runner(PreStart):
    """Advances one CGU; `inp` is its spec (live or last valid) and identity."""

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
        """§9.2: run batches until one says the pass ends (at most B + 1 rounds)."""
        for _ in range(len(self.run.plan) + 1):
            if not self.batch_round():
                return

    def begin_batch(self, b: int, batch: list[str]) -> None:
        """§9.2 step 2: initialise the batch's progress and start time (not while paused)."""
        run = self.run
        if run.current_batch == 0:
            run.current_batch = 1
        if run.batch_started_at is None and not self.paused():
            run.progress = {c: {"state": "NotStarted"} for c in batch}
            run.batch_started_at = self.ctx.now
            message = f"ClusterGroupUpgrade {self.name}: batch index {b} upgrade started"
            self.event("CguStarted", "RemediationInBatchStarted", message)

    def overall_expired(self, b: int, batch: list[str]) -> bool:
        """§10.2: checked before any progress; records the batch's timeouts when expired."""
        run = self.run
        assert run.started_at is not None
        if _elapsed(self.ctx.now, run.started_at) >= self.timeout_s():
            self.record_timeouts(batch, b)
            self.end_timed_out(TIMED_OUT)
            return True
        self.out.wakeups.append(run.started_at + timedelta(seconds=self.timeout_s()))
        return False

    def batch_round(self) -> bool:
        """One round of §9.2; True when the next batch starts in this pass."""
        run, now = self.run, self.ctx.now
        b = run.current_batch or 1
        batch = run.plan[b - 1]
        self.begin_batch(b, batch)
        if self.overall_expired(b, batch):
            return False
        self.set_paused_condition()
        if run.batch_started_at is None:
            return False  # paused before the batch started
        for c in batch:
            self.advance_cluster(c)
        done = all(run.progress.get(c, {}).get("state") == "Completed" for c in batch)
        if b == len(run.plan):
            if done and all(self.compliant(c) for prev in run.plan[:-1] for c in prev):
                self.event("CguSuccess", "RemediationInBatchCompleted", self.batch_done_message(b))
                set_cond(run, "Progressing", "False", "Completed", ALL_COMPLIANT, now)
                set_cond(run, "Succeeded", "True", "Completed", ALL_COMPLIANT, now)
                self.finish(True)
            return False
        if done:
            if self.paused():
                return False  # the next batch starts when enable is true again
            self.event("CguSuccess", "RemediationInBatchCompleted", self.batch_done_message(b))
        elif not self.batch_timed_out(b):
            return False
        if self.paused() or self.run.finished:
            return False
        run.current_batch, run.batch_started_at = b + 1, None
        return True

    def batch_timed_out(self, b: int) -> bool:
        """§9.2 step 4c: False while the batch has time; else records the timeouts and ends
        the CGU (canary batch, Abort) or lets the next batch start (Continue)."""
        if not self.batch_expired(b, len(self.run.plan)):
            return False
        self.record_timeouts(self.run.plan[b - 1], b)
        if b <= self.run.canary_batches:
            self.end_timed_out(f"{TIMED_OUT} on canary clusters")
        elif self.run.live.get("batchTimeoutAction") == "Abort":
            self.end_timed_out(f"{TIMED_OUT} on some clusters")
        return True

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

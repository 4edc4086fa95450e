"""Shared pieces of the ClusterGroupUpgrade runner (spec/cluster-group-upgrade.md §8-§14): the
per-pass `Step` result, the `Context` a CGU reads, condition timing, and `RunnerBase` (events,
label/annotation action ops, compliance against the frozen targets). Used by
`reconciler.rollout.cgu_prestart` and `reconciler.rollout.cgu_run`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from gitfleet.api.cgu import (
    ClusterActions,
)
from gitfleet.api.conditions import format_time
from reconciler.rollout.cgu_select import (
    cluster_compliant,
)
from reconciler.rollout.cgu_spec import Blocker, CguInput
from reconciler.rollout.cgu_state import CguRun, Cond, Op
from reconciler.rollout.model import PlacementView

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


class RunnerBase:
    """State and helpers shared by the pre-start checks and the batch loop of one CGU."""

    def __init__(self, inp: CguInput, run: CguRun, ctx: Context) -> None:
        self.inp, self.run, self.ctx, self.out = inp, run, ctx, Step()
        self.name = inp.name

    # -- events and actions -------------------------------------------------------------
    def event(self, reason: str, action: str, message: str) -> None:
        """Record an event; batch events name the batch's clusters in the commit trailer."""
        if action.startswith("RemediationInBatch") and self.run.current_batch:
            batch = self.run.plan[self.run.current_batch - 1]
            message = f"{message} [{' '.join(batch)}]"
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

"""KubeFleet's rolling-update controller (spec/kubefleet.md §2.3-2.4) as a pure function.

`pick_bindings` classifies a RollingUpdate placement's bindings (failed / diffReported / ready are
`BindingView`'s KubeFleet definitions), computes the target number per placement type and the
ceil-scaled budgets (maxToRemove from maxUnavailable, maxToAdd from maxSurge), and selects: every
applyFailed candidate (never limited), then remove candidates and update candidates up to
maxToRemove, then the first maxToAdd bounding candidates. Unselected update and bounding
candidates are stale (RolloutStarted False with KubeFleet's message). It also says why each
waiting cluster waits and when the hub should look again (`wait_time`); clusters that
have the latest content and wait to become ready are explained by the caller. Called by the pass's
rollout stage (`reconciler.rollstage`) and by `gitfleet plan`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from gitfleet.api.intstr import ceil_scale
from reconciler.rollout.model import BOUND, SCHEDULED, UNSCHEDULED, BindingView, Wait

STALE_REASON = "RolloutNotStartedYet"
STALE_MESSAGE = "The resources cannot be updated to the latest because of the rollout strategy"
STARTED_REASON = "RolloutStarted"
STARTED_MESSAGE = "Detected the new changes on the resources and started the rollout process"


@dataclass(frozen=True)
class RollingConfig:
    """`spec.strategy.rollingUpdate` with KubeFleet's defaults (§2.1)."""

    max_unavailable: int | str = "25%"
    max_surge: int | str = "25%"
    unavailable_period_seconds: int = 60

    @property
    def period(self) -> timedelta:
        return timedelta(seconds=self.unavailable_period_seconds)


@dataclass(frozen=True)
class Classes:
    """§2.3: the binding lists `pickBindingsToRoll` builds (cluster names, listing order)."""

    scheduler_targeted: int = 0
    ready: tuple[str, ...] = ()
    can_be_ready: tuple[str, ...] = ()
    can_be_unavailable: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    update: tuple[str, ...] = ()
    apply_failed: tuple[str, ...] = ()
    bounding: tuple[str, ...] = ()
    up_to_date: tuple[str, ...] = ()
    waits: tuple[timedelta, ...] = ()
    """Positive waits of not-yet-ready untrackable bindings."""
    all_ready: bool = True
    """Every Unscheduled and Bound binding is ready."""
    not_ready: int = 0
    """Unscheduled and Bound bindings that are not ready (updating, failed or unavailable)."""
    unready: tuple[str, ...] = ()
    """Their clusters, in listing order (the rollout stage explains only these and the
    bindings it changed, `rollstage._settling`)."""


@dataclass(frozen=True)
class RollingDecision:
    """What the rolling update does this pass."""

    target: int
    max_unavailable: int
    max_surge: int
    max_to_remove: int
    max_to_add: int
    update: tuple[str, ...] = ()
    """Bound/Scheduled clusters that move to the latest content now (KubeFleet order)."""
    delete: tuple[str, ...] = ()
    """Unscheduled clusters whose bindings are deleted now (their files removed)."""
    stale: tuple[str, ...] = ()
    """Clusters that get RolloutStarted False (`STALE_MESSAGE`)."""
    waits: tuple[Wait, ...] = ()
    wait_time: timedelta | None = None
    """When to reconcile again (None: nothing to wait for; 0: at once)."""
    need_roll: bool = True
    classes: Classes = field(default_factory=Classes)


def target_number(
    placement_type: str, scheduler_targeted: int, fixed_names: int, number_of_clusters: int | None
) -> int:
    """§2.4 calculateRealTarget: PickAll -> Scheduled+Bound; PickFixed -> len(clusterNames);
    PickN -> numberOfClusters."""
    if placement_type == "PickFixed":
        return fixed_names
    if placement_type == "PickN":
        return number_of_clusters or 0
    return scheduler_targeted


def classify(views: Sequence[BindingView], now: datetime, period: timedelta) -> Classes:
    """§2.3 classification, per binding state (one list per class, appended in place)."""
    ready_: list[str] = []
    can_be_ready: list[str] = []
    can_be_unavailable: list[str] = []
    remove: list[str] = []
    update: list[str] = []
    apply_failed: list[str] = []
    bounding: list[str] = []
    up_to_date: list[str] = []
    waits: list[timedelta] = []
    unready: list[str] = []
    targeted, all_ready = 0, True
    zero = timedelta(0)
    for b in views:
        state, cluster = b.state, b.cluster
        if state == SCHEDULED:
            targeted += 1
            bounding.append(cluster)
            continue
        ready, wait = b.ready(now, period)
        if state in (UNSCHEDULED, BOUND):
            all_ready = all_ready and ready
            if not ready:
                unready.append(cluster)
                if wait is not None and wait > zero:
                    waits.append(wait)
            if not b.failed and not b.diff_reported:
                can_be_ready.append(cluster)
            if ready:
                ready_.append(cluster)
                if b.deleting:
                    can_be_unavailable.append(cluster)
        if state == UNSCHEDULED:
            if not b.deleting:
                remove.append(cluster)
        elif state == BOUND:
            targeted += 1
            if not b.deleting:
                kind = up_to_date if b.up_to_date else apply_failed if b.failed else update
                kind.append(cluster)
    return Classes(
        scheduler_targeted=targeted,
        ready=tuple(ready_),
        can_be_ready=tuple(can_be_ready),
        can_be_unavailable=tuple(can_be_unavailable),
        remove=tuple(remove),
        update=tuple(update),
        apply_failed=tuple(apply_failed),
        bounding=tuple(bounding),
        up_to_date=tuple(up_to_date),
        waits=tuple(waits),
        all_ready=all_ready,
        not_ready=len(unready),
        unready=tuple(unready),
    )


def _wait_time(classes: Classes, period: timedelta) -> timedelta:
    """§2.4: 0 when every Unscheduled/Bound binding is ready, else the smallest timer."""
    if classes.all_ready:
        return timedelta(0)
    return min((period, *classes.waits))


def pick_bindings(
    views: Sequence[BindingView],
    config: RollingConfig,
    now: datetime,
    *,
    placement_type: str = "PickAll",
    fixed_names: int = 0,
    number_of_clusters: int | None = None,
    classes: Classes | None = None,
) -> RollingDecision:
    """§2.4 determineBindingsToUpdate over `views` (in binding listing order). `classes`:
    `classify(views, now, config.period)` when the caller has it."""
    c = classify(views, now, config.period) if classes is None else classes
    target = target_number(placement_type, c.scheduler_targeted, fixed_names, number_of_clusters)
    max_unavailable = ceil_scale(config.max_unavailable, target)
    max_surge = ceil_scale(config.max_surge, target)
    max_to_remove = (len(c.ready) - len(c.can_be_unavailable)) - (target - max_unavailable)
    max_to_add = target + max_surge - len(c.can_be_ready)
    budgets = (target, max_unavailable, max_surge, max_to_remove, max_to_add)
    if not (c.remove or c.update or c.bounding or c.apply_failed):
        return RollingDecision(
            *budgets,
            wait_time=None if c.all_ready else _wait_time(c, config.period),
            need_roll=False,
            classes=c,
        )
    removable = [*c.remove, *c.update][: max(max_to_remove, 0)]
    added = list(c.bounding[: max(max_to_add, 0)])
    # Membership in sets: a fleet-wide placement lists thousands of clusters in these.
    removing, adding, removed = set(removable), set(added), set(c.remove)
    stale = [n for n in c.update if n not in removing] + [n for n in c.bounding if n not in adding]
    decision = RollingDecision(
        *budgets,
        update=(*c.apply_failed, *(n for n in removable if n not in removed), *added),
        delete=tuple(n for n in removable if n in removed),
        stale=tuple(stale),
        wait_time=_wait_time(c, config.period),
        classes=c,
    )
    return replace(decision, waits=tuple(_stale_waits(decision, config)))


def _stale_waits(d: RollingDecision, config: RollingConfig) -> list[Wait]:
    c = d.classes
    updates, bounding = set(c.update), set(c.bounding)
    moving = sum(1 for n in d.update if n in updates) + len(d.delete)
    updating = c.not_ready + moving
    out = []
    for name in d.stale:
        if name in bounding:
            message = (
                f"waiting: maxSurge {d.max_surge} reached, {len(c.can_be_ready)} of "
                f"{d.target} cluster(s) already placed or updating"
            )
        else:
            message = (
                f"waiting: maxUnavailable {d.max_unavailable} reached, "
                f"{updating} cluster{'' if updating == 1 else 's'} updating"
            )
            if config.max_unavailable != d.max_unavailable:
                message += f" (maxUnavailable {config.max_unavailable} of {d.target})"
        out.append(Wait(name, message))
    return out


__all__ = [
    "STALE_MESSAGE",
    "STALE_REASON",
    "STARTED_MESSAGE",
    "STARTED_REASON",
    "RollingConfig",
    "RollingDecision",
    "classify",
    "pick_bindings",
    "target_number",
]

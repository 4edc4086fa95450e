"""The pass's rollout stage: which scheduled clusters get each placement's latest content now.

After scheduling and overrides (`placement.place`), `roll_out` runs three steps:
1. observe (`_observe_all`): every targeted cluster's desired content hash and, per binding, the
   agent's Applied/Available/DiffReported - only from a report naming the exact content the hub
   gave that cluster - timed by the hub's own `now` (a dry run without any status source assumes
   them); a settled placement whose inputs did not change takes last pass's rollout (`rollmemo`);
2. drive (`reconciler.rolldrive`): the rollout drivers (`reconciler.rollout.drivers`) and the
   evictions (`reconciler.rollout.eviction`) on a `PlacementView` of every placement;
3. roll (`_roll_all`): RollingUpdate placements move bindings through `rolling.pick_bindings`
   (§2.3-2.4), External placements only where a driver's `ExternalUpdate` says so.
Clusters not moved keep their previous files (`assemble`). A placement whose bindings changed
by a few clusters reads only those bindings where it can: their names, classes and whether they
already carry RolloutStarted are remembered per placement by position (`reconciler.rollsplice`,
`reconciler.rollclass`). Pure; called by `reconciler.pass_`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from itertools import compress
from operator import not_, or_
from typing import Any

from gitfleet.api.errors import FleetError
from gitfleet.api.report import AgentReport
from gitfleet.load.model import FleetSnapshot
from reconciler.isolate import guarded
from reconciler.output import placement_key
from reconciler.placement import PlacementPlan
from reconciler.rollclass import classify_placement
from reconciler.rolldelete import begin, blocked, settle
from reconciler.rolldrive import drive
from reconciler.rollexternal import external_into
from reconciler.rollmemo import (
    bound_names,
    given_contents,
    index_token,
    keep,
    known_reports,
    reuse,
    rollout_inputs,
    same_manifests,
)
from reconciler.rollmove import moved, with_started
from reconciler.rollout.drivers import Driver
from reconciler.rollout.model import (
    UNSCHEDULED,
    DriverResult,
    PlacementView,
)
from reconciler.rollout.rolling import RollingDecision, pick_bindings
from reconciler.rollsplice import Column
from reconciler.rollsync import is_live
from reconciler.rollview import (
    ReportEntries,
    assumed_ready,
    binding_view,
    binding_views,
    cluster_names,
    deleting_views,
    observe,
    placement_view,
    report_entries,
)
from reconciler.state import Binding, PlacementState

PriorIndex = Mapping[str, Mapping[str, Mapping[str, Any]]]


@dataclass(frozen=True)
class RolloutOutcome:
    """What the stage adds to the pass besides the plans it updated in place."""

    files: Mapping[str, bytes] = field(default_factory=dict)
    errors: tuple[FleetError, ...] = ()
    wakeup: datetime | None = None
    trailers: tuple[tuple[str, str], ...] = ()


_NO_TIME = datetime(1970, 1, 1, tzinfo=UTC)


def _started_as_is(b: Binding) -> bool:
    """`_apply_rolling` gives `b` back as it is when nothing rolls: Unscheduled, or it already
    has exactly RolloutStarted True (`with_started` gives the very object back whatever the
    time when it does, so any time asks it)."""
    return b.state == UNSCHEDULED or with_started(b, "True", _NO_TIME) is b


_AS_IS: Column[bool] = Column(_started_as_is)
"""Placement key -> `_started_as_is` of each binding (`rollsplice.Column`)."""


def _apply_rolling(plan: PlacementPlan, decision: RollingDecision, now: datetime) -> set[str]:
    """Move, mark stale or mark started each binding as `decision` says; returns the clusters
    whose binding changed. Only the bindings of clusters the decision names are looked at, and
    when nothing rolls those not known to have RolloutStarted True already (`_AS_IS`, read only
    for bindings that are not last call's objects); the state is kept when none changed."""
    update, stale = set(decision.update), set(decision.stale)
    bindings = plan.state.bindings
    asked = update.union(stale).__contains__
    picked = map(asked, cluster_names(plan.key, bindings))
    if not decision.need_roll:
        picked = map(or_, picked, map(not_, _AS_IS.of(plan.key, bindings)))
    out, changed = list(bindings), set()
    for i in list(compress(range(len(bindings)), picked)):
        b = made = bindings[i]
        if b.cluster in update and b.state != UNSCHEDULED:
            made = moved(plan, b, now)
        elif b.cluster in stale and b.state != UNSCHEDULED:
            made = with_started(b, "False", now)
        elif not decision.need_roll and b.state != UNSCHEDULED:
            made = with_started(b, "True", now)
        if made is not b:
            changed.add(b.cluster)
            out[i] = made
    if changed:
        plan.state = replace(plan.state, bindings=tuple(out))
    plan.waits.update({w.cluster: w.message for w in decision.waits})
    return changed


def _roll(
    plan: PlacementPlan,
    now: datetime,
    assume: frozenset[str],
    prior_index: PriorIndex,
    seen: tuple[PlacementState, PlacementView],
) -> datetime | None:
    """A RollingUpdate placement; returns when a timer of it is due. `seen`: the state the
    drivers' view of it was made from, and that view (its bindings' views while unchanged)."""
    waiting = blocked(plan) if plan.state.deleting else []
    if waiting:  # §2.2 step 2: no rollout this round
        for cluster in waiting:
            plan.waits[cluster] = (
                f"waiting: cluster {cluster} is still removing the objects of this placement"
            )
        return None
    if plan.state is seen[0]:
        views = seen[1].bindings
    else:
        views = (*binding_views(plan, assume), *deleting_views(plan))
    fixed = plan.fixed_names or 0
    decision = pick_bindings(
        views,
        plan.rolling,
        now,
        placement_type=plan.placement_type,
        fixed_names=fixed,
        number_of_clusters=plan.number_of_clusters,
        classes=classify_placement(plan.key, views, now, plan.rolling.period),
    )
    changed = _apply_rolling(plan, decision, now)
    deleting = set(decision.delete)
    begin(
        plan,
        [
            b.cluster
            for b in (plan.state.bindings if deleting else ())
            if b.cluster in deleting and b.state == UNSCHEDULED
        ],
        prior_index,
        assume,
    )
    timers = [w for w in decision.classes.waits if w > timedelta(0)]
    _settling(plan, now, assume, bool(decision.stale), changed.union(decision.classes.unready))
    if decision.stale and assume & set(decision.classes.ready):
        return now  # clusters without agents count as ready: the next wave is due at once
    return now + min(timers) if timers else None


def _settling(
    plan: PlacementPlan,
    now: datetime,
    assume: frozenset[str],
    blocking: bool,
    candidates: set[str],
) -> None:
    """Clusters with the latest content that are not ready yet: an untrackable timer always
    shows; waiting for a report shows while other clusters wait for this one. `candidates`:
    the clusters whose binding the rollout changed or whose view it classified not ready
    (`Classes.unready`) - every other binding it decided on is ready or not Bound, so only
    these are looked at (a step per binding of the placement is two set lookups), and of them
    only those whose view is not `assumed_ready` (a dry run's are all)."""
    if not candidates:
        return
    every = plan.state.bindings
    picked = map(candidates.__contains__, cluster_names(plan.key, every))
    bindings = [every[i] for i in compress(range(len(every)), picked)]
    if assume:
        bindings = [b for b in bindings if not assumed_ready(b, assume)]
    latest = plan.target()
    index, desired = (latest.index if latest else None), plan.desired
    live = {b.cluster for b in bindings if is_live(b, index, desired)}  # `live_clusters`'s
    period = plan.rolling.period
    for b in bindings:
        if b.cluster not in live:
            continue
        view = binding_view(plan, b, assume)
        if view.failed:
            continue
        ready, wait = view.ready(now, period)
        if ready:
            continue
        if wait is not None:
            seconds = int(wait.total_seconds())
            plan.waits[b.cluster] = (
                f"waiting: untrackable objects, {seconds} s of unavailablePeriodSeconds left"
            )
        elif blocking:
            plan.waits[b.cluster] = (
                "waiting: for the agent to report this content Applied and Available"
            )


def _drop_departed(plan: PlacementPlan, clusters: frozenset[str], names: Sequence[str]) -> None:
    """A cluster that left the fleet frees its slot: its Unscheduled binding goes at once.
    `names`: the bindings' clusters in order; only the bindings of departed ones are read (the
    others are sliced over in C) and the state is kept when none goes."""
    bindings = plan.state.bindings
    if len(names) != len(bindings):  # never, as observing keeps them: read the bindings
        names = [b.cluster for b in bindings]
    away = compress(range(len(names)), map(not_, map(clusters.__contains__, names)))
    gone = [i for i in away if bindings[i].state == UNSCHEDULED]
    if not gone:
        return
    kept: list[Binding] = []
    for start, end in zip([0, *(i + 1 for i in gone)], [*gone, len(bindings)], strict=True):
        kept += bindings[start:end]
    plan.state = replace(plan.state, bindings=tuple(kept))


def _observe(
    plan: PlacementPlan,
    reports: Mapping[str, AgentReport],
    entries: ReportEntries,
    now: datetime,
    prior_index: Mapping[str, Mapping[str, Mapping[str, Any]]],
    clusters: frozenset[str],
    assume_ready: frozenset[str],
    views: dict[str, PlacementView],
    made: dict[str, PlacementState],
    token: int,
    known: tuple[Any, ...] | None = None,
) -> None:
    # observing keeps each binding's cluster, in its place
    names, named = bound_names(plan.key, plan.state.bindings)
    given = given_contents(plan, prior_index, token)
    observe(plan, entries, now, prior_index, given, known_reports(known))
    if not clusters.issuperset(named):
        _drop_departed(plan, clusters, names)
    settle(plan, reports, clusters, assume_ready)
    views[plan.key] = placement_view(plan, assume_ready)
    made[plan.key] = plan.state


def _roll_into(
    plan: PlacementPlan,
    now: datetime,
    assume: frozenset[str],
    prior_index: PriorIndex,
    wakeups: list[datetime],
    seen: tuple[PlacementState, PlacementView],
) -> None:
    due = _roll(plan, now, assume, prior_index, seen)
    if due is not None:
        wakeups.append(due)


@dataclass
class _Observed:
    """The placements observed this pass (by key: their plans, the state each had before, with
    the rollout inputs read, and the state observing made), and every placement's view."""

    live: dict[str, PlacementPlan] = field(default_factory=dict)
    before: dict[str, tuple[tuple[Any, ...] | None, PlacementState]] = field(default_factory=dict)
    made: dict[str, PlacementState] = field(default_factory=dict)
    views: dict[str, PlacementView] = field(default_factory=dict)


def roll_out(
    plans: Mapping[str, PlacementPlan],
    fleet: FleetSnapshot,
    prior_output: Mapping[str, bytes],
    reports: Mapping[str, AgentReport],
    now: datetime,
    *,
    prior_index: Mapping[str, Mapping[str, Mapping[str, Any]]],
    clusters: frozenset[str],
    drivers: Sequence[Driver] = (),
    assume_ready: frozenset[str] = frozenset(),
) -> RolloutOutcome:
    """The rollout stage over every placement (plans are updated in place): observe each one
    (or take its settled rollout as it was), run the drivers and evictions on every
    placement's view (`rolldrive`), then move each observed placement's bindings. A placement
    whose own rollout work raises is held (`reconciler.isolate`); the others roll out."""
    seen = (prior_index, clusters, assume_ready, index_token(prior_index))
    observed = _observe_all(plans, fleet, reports, now, seen)
    driven = drive(drivers, fleet, observed.views, prior_output, now)
    files: dict[str, bytes] = dict(driven.evicted.files)
    errors = [FleetError(*e) for r in driven.results for e in r.errors]
    for key, gone in driven.evicted.deleted.items():
        begin(observed.live[key], gone, prior_index, assume_ready)
    wakeups = [r.wakeup for r in driven.results if r.wakeup is not None]
    wakeups += _roll_all(observed, driven.results, now, prior_index, assume_ready, errors)
    for r in driven.results:
        files.update(r.files)
    return RolloutOutcome(
        files=files,
        errors=tuple(errors),
        wakeup=min(wakeups) if wakeups else None,
        trailers=tuple(t for r in driven.results for t in r.trailers),
    )


def _observe_all(
    plans: Mapping[str, PlacementPlan],
    fleet: FleetSnapshot,
    reports: Mapping[str, AgentReport],
    now: datetime,
    seen: tuple[PriorIndex, frozenset[str], frozenset[str], int],
) -> _Observed:
    """Every placement that is not held, observed (`_observe`) or, settled and unchanged, last
    pass's rollout (`rollmemo.reuse`). `seen`: prior index, clusters, assumed ready, token."""
    out = _Observed()
    entries = report_entries(reports)
    evicting = {placement_key(e.spec.placement_name) for e in fleet.evictions.values()}
    for key, plan in sorted(plans.items()):
        if plan.held:
            continue
        same_manifests(plan)
        known = None if key in evicting else rollout_inputs(plan, entries, *seen)
        view = reuse(plan, known)
        if view is not None:  # settled and unchanged: last pass's rollout (`rollmemo`)
            out.views[key] = view
            continue
        out.before[key] = (known, plan.state)
        work = partial(
            _observe,
            *(plan, reports, entries, now, *seen[:3], out.views, out.made),
            seen[3],
            known,
        )
        if guarded(plan, "observing the rollout of", work):
            out.live[key] = plan
    return out


def _roll_all(
    observed: _Observed,
    results: Sequence[DriverResult],
    now: datetime,
    prior_index: PriorIndex,
    assume_ready: frozenset[str],
    errors: list[FleetError],
) -> list[datetime]:
    """Each observed placement's bindings moved: External ones as the drivers' updates say,
    the others by their rolling update (remembered when settled: `rollmemo.keep`); the
    wakeups they ask for."""
    wakeups: list[datetime] = []
    for key, plan in observed.live.items():
        if plan.strategy_type == "External":
            updates = [u for r in results for u in r.updates if u.placement == key]
            external = partial(external_into, plan, updates, now, prior_index, assume_ready, errors)
            guarded(plan, "rolling out", external)
            continue
        due: list[datetime] = []
        seen = (observed.made[key], observed.views[key])
        work = partial(_roll_into, plan, now, assume_ready, prior_index, due, seen)
        guarded(plan, "rolling out", work)
        wakeups += due
        keep(plan, *observed.before[key], min(due, default=None), observed.views[key])
    return wakeups

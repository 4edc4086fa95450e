"""The pure reconcile pass (DESIGN.md §3): fleet snapshot + prior state + cluster status + now
-> output tree + new state + errors.

`reconcile` runs the stages of `reconciler.passstages.PIPELINE` in order on one `PassRun`:
cluster views and eligibility -> per placement (`placement.place`: selection, scheduling,
overrides, manifests) -> hold placements whose inputs failed to load (their previous output
stays, nothing is pruned) or whose own work raised (`reconciler.isolate`: that placement's
error, never the pass's) -> replica distribution -> Secrets encrypted per cluster
(`reconciler.sealing`; age encryption is the pass's one source of randomness, and it reuses the
previous ciphertext whenever it can) -> rollout -> per-cluster files and index (resolving
conflicts between placements) -> decisions, status and state files. No clock, disk or network
in here; the one exception is `PassResult.stage_timings`, each stage's wall and CPU seconds
(`reconciler.steptimer`), diagnostics that reach no output and no comparison of results.
Called by the CLI (`render`, `validate`) and the hub loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from gitfleet.api import MemberCluster
from gitfleet.api.errors import FleetError
from gitfleet.api.report import AgentReport
from gitfleet.load.model import FleetSnapshot
from reconciler.govern.deletion import HELD_TRAILER, DeletionHold
from reconciler.history import NO_HISTORY, HistoricalSources
from reconciler.passstages import PIPELINE, PassRun
from reconciler.placement import PlacementPlan
from reconciler.rollout.drivers import DRIVERS, Driver
from reconciler.schedule.outcome import ClusterExplanation
from reconciler.state import State
from reconciler.steptimer import StepTimer


@dataclass(frozen=True)
class PassResult:
    """Everything one pass produces."""

    files: dict[str, bytes]
    """The complete output tree: path -> bytes (an `OutputFiles`: in no particular order;
    `sorted_paths()` lists the paths sorted)."""
    state: State
    errors: tuple[FleetError, ...]
    """Every user error found, sorted (loader errors included)."""
    explanations: Mapping[str, Mapping[str, ClusterExplanation]] = field(default_factory=dict)
    """placement key -> cluster -> what the scheduler decided and why (`gitfleet explain`)."""
    next_wakeup: datetime | None = None
    """When a rollout timer is due (unavailablePeriodSeconds, a driver's wait): pass again then."""
    trailers: tuple[tuple[str, str], ...] = ()
    """Commit trailers the rollout drivers ask for."""
    plans: Mapping[str, PlacementPlan] = field(default_factory=dict)
    """The placements' plans after the rollout (CLI summaries: held placements, waits)."""
    deletion_holds: tuple[DeletionHold, ...] = ()
    """Placements the mass-deletion guard holds (deleted placements included), by key."""
    stage_timings: tuple[tuple[str, float], ...] = field(default=(), compare=False)
    """Wall seconds of each stage of the pass, in order (`STAGES`; diagnostics only)."""
    stage_cpu_timings: tuple[tuple[str, float], ...] = field(default=(), compare=False)
    """CPU seconds of the same stages (this process: the pass runs no other)."""


STAGES = tuple(name for name, _ in PIPELINE)
"""The names of the stages `reconcile` runs and times, in order (`passstages.PIPELINE`: cluster
views, tenancy and overlays; each placement's selection, scheduling, overrides and manifests;
held and deleted placements and replica distribution; Secret sealing; the rollout; per-cluster
files and indexes; sync records and decisions; placement status; cluster status, profiles and
held placements' status; state; errors)."""


def reconcile(
    fleet: FleetSnapshot,
    prior: State,
    statuses: Mapping[str, MemberCluster] | None,
    now: datetime,
    reports: Mapping[str, AgentReport] | None = None,
    drivers: Sequence[Driver] = DRIVERS,
    history: HistoricalSources = NO_HISTORY,
) -> PassResult:
    """One pass. `statuses` is None when there is no cluster status source at all (a dry run:
    every declared cluster is taken as joined and healthy, and every cluster as having applied
    what it was given). `reports` are the agents' reports (the running hub, or a dry run with
    `--reports`); when given they are the status source and feed Applied/Available and the
    rollout. `drivers` move External placements (`reconciler.rollout.drivers`). `history`:
    older resource snapshots read at their recorded commits (`reconciler.history`: the shell
    fills it for `needed_snapshots(fleet, prior)`), for rollbacks and pins."""
    run = PassRun(fleet, prior, statuses, now, reports, drivers, history)
    laps = StepTimer()
    for name, stage in PIPELINE:
        stage(run)
        laps.lap(name)
    return PassResult(
        files=run.files,
        state=State(run.states, run.files, run.override_snapshots),
        errors=run.all_errors,
        explanations={key: plan.explanations for key, plan in run.plans.items()},
        next_wakeup=run.rollout.wakeup,
        trailers=run.rollout.trailers + tuple((HELD_TRAILER, key) for key in sorted(run.holds)),
        plans=run.plans,
        deletion_holds=tuple(h for _, h in sorted(run.holds.items())),
        stage_timings=tuple(laps.timings),
        stage_cpu_timings=tuple(laps.cpu_timings),
    )

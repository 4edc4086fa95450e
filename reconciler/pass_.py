"""The pure reconcile pass (DESIGN.md §3): fleet snapshot + prior state + cluster status + now
-> output tree + new state + errors.

Steps: cluster views and eligibility -> resource index -> per placement (`placement.place`) ->
hold placements whose inputs failed to load (their previous output stays, nothing is pruned) or
whose own work raised (`reconciler.isolate`: that placement's error, never the pass's) ->
replica distribution -> Secrets encrypted per cluster (`reconciler.sealing`; age encryption is
the pass's one source of randomness, and it reuses the previous ciphertext whenever it can) ->
rollout -> resolve conflicts between placements -> per-cluster files and index -> status and
state files. No clock, disk or network in here; the one exception is `PassResult.stage_timings`,
each stage's wall and CPU seconds (`reconciler.steptimer`), diagnostics that reach no output and
no comparison of results. Called by the CLI (`render`, `validate`) and the hub loop.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from gitfleet.api import MemberCluster
from gitfleet.api.errors import FleetError
from gitfleet.api.output import placement_status_path
from gitfleet.api.report import AgentReport
from gitfleet.load.model import FleetSnapshot, Origin
from reconciler.assemble import assemble_clusters
from reconciler.clusterstatus import cluster_status_files
from reconciler.distributions import apply_distributions
from reconciler.govern.checks import Governance
from reconciler.govern.deletion import (
    HELD_TRAILER,
    DeletionHold,
    approved_keys,
    deleted_holds,
    held_status_file,
)
from reconciler.govern.tenancy import NO_TENANCY, Tenancy, govern_fleet
from reconciler.history import NO_HISTORY, HistoricalSources
from reconciler.isolate import failed_plan
from reconciler.output import OutputFiles, placement_key
from reconciler.override import build_override_index, next_override_snapshots, snapshot_name
from reconciler.placememo import pass_key, place_reusing
from reconciler.placement import AnyPlacement, PassInputs, PlacementPlan
from reconciler.priorindex import read_prior_index
from reconciler.priorparse import paths_under
from reconciler.publish import decision_files, profile_files
from reconciler.reports import statuses_from_reports
from reconciler.rollout.cgu import overlay_entries, with_label_overlay, with_overlay_status
from reconciler.rollout.drivers import DRIVERS, Driver
from reconciler.rollstage import roll_out
from reconciler.rollsync import record_sync
from reconciler.schedule.clusters import ClusterView, EligibilityPolicy
from reconciler.schedule.inventory import build_cluster_views
from reconciler.schedule.outcome import ClusterExplanation
from reconciler.sealing import seal_secrets
from reconciler.select import build_index
from reconciler.state import PlacementState, Snapshot, State, canonical_state, state_files
from reconciler.statusdocs import placement_status_files
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


STAGES = (
    "prepare",
    "plan",
    "distribute",
    "seal",
    "rollout",
    "assemble",
    "decisions",
    "placement status",
    "cluster status",
    "state",
    "finish",
)
"""The stages `reconcile` times, in order: cluster views, tenancy and overlays; each placement's
selection, scheduling, overrides and manifests; held and deleted placements and replica
distribution; Secret sealing; the rollout; per-cluster files and indexes; sync records and
decisions; placement status; cluster status, profiles and held placements' status; state;
errors and the result."""


def _eligibility(fleet: FleetSnapshot, has_status: bool) -> EligibilityPolicy:
    spec = fleet.fleet.spec
    return EligibilityPolicy(
        mode=spec.cluster_eligibility,
        has_status_source=has_status,
        heartbeat_timeout=spec.heartbeat_timeout_delta(),
        health_timeout=spec.health_timeout_delta(),
    )


def _placements(fleet: FleetSnapshot) -> dict[str, tuple[AnyPlacement, Origin | None]]:
    out: dict[str, tuple[AnyPlacement, Origin | None]] = {}
    for name, crp in fleet.placements.items():
        out[placement_key(name)] = (crp, fleet.origins.get(("ClusterResourcePlacement", "", name)))
    for (ns, name), rp in fleet.resource_placements.items():
        out[placement_key(name, ns)] = (rp, fleet.origins.get(("ResourcePlacement", ns, name)))
    return out


def _plan_all(
    fleet: FleetSnapshot,
    prior: State,
    views: Mapping[str, ClusterView],
    tenancy: Tenancy = NO_TENANCY,
    history: HistoricalSources = NO_HISTORY,
) -> tuple[
    dict[str, PlacementPlan],
    dict[str, Origin | None],
    list[FleetError],
    dict[str, tuple[Snapshot, ...]],
]:
    index = build_index(fleet.resources)
    errors = [issue.to_error() for issue in index.issues]
    overrides, override_errors = build_override_index(fleet)
    errors += override_errors
    snapshots = next_override_snapshots(prior.overrides, overrides.hashes())
    inputs = PassInputs(
        commit=fleet.commit,
        broken_files=fleet.error_files,
        max_objects=fleet.fleet.limits().max_objects_per_placement,
        overrides=overrides.with_snapshots(snapshots),
        override_names={k: snapshot_name(k, v[-1].index) for k, v in snapshots.items() if v},
        governance=Governance(
            tenancy,
            fleet.fleet.spec.deletion_budget,
            approved_keys(fleet),
            frozenset(
                (placement_key(e.spec.placement_name), e.spec.cluster_name)
                for e in fleet.evictions.values()
            ),
        ),
        history=history,
    )
    plans: dict[str, PlacementPlan] = {}
    origins: dict[str, Origin | None] = {}
    whole_pass = pass_key(views, index, inputs)
    for key, (placement, origin) in sorted(_placements(fleet).items()):
        prior_ps = prior.placements.get(key) or PlacementState(key=key)
        file = origin.file if origin is not None else ""
        try:
            plan = place_reusing(key, placement, prior_ps, views, index, inputs, whole_pass)
        except Exception as exc:  # one placement's fault fails it alone
            plan = failed_plan(key, placement, prior_ps, file, exc)
        if origin is not None and plan.state.origin_file != origin.file:
            plan.state = replace(plan.state, origin_file=origin.file)
        plans[key], origins[key] = plan, origin
    return plans, origins, errors, snapshots


def _kept_states(
    fleet: FleetSnapshot, prior: State, plans: Mapping[str, PlacementPlan]
) -> dict[str, PlacementState]:
    """Placements that vanished only because their file failed to load: kept as they were."""
    return {
        key: ps
        for key, ps in prior.placements.items()
        if key not in plans and ps.origin_file in fleet.error_files
    }


def _kept_decisions(kept: Mapping[str, PlacementState], prior: State) -> dict[str, bytes]:
    """A kept placement keeps its PlacementDecision slices too. Only the matching paths are
    read: `prior.output` may be a lazy view of the previous output commit."""
    if not kept:
        return {}
    slices = [re.compile(rf"decisions/{re.escape(key)}-[0-9]+\.yaml") for key in sorted(kept)]
    paths = paths_under(prior.output, "decisions/")
    return {p: prior.output[p] for p in paths if any(s.fullmatch(p) for s in slices)}


def _plan_errors(
    plans: Mapping[str, PlacementPlan], origins: Mapping[str, Origin | None]
) -> list[FleetError]:
    out = []
    for key, plan in plans.items():
        origin = origins.get(key)
        for fieldpath, message in plan.errors:
            if origin is None:
                out.append(FleetError("", None, fieldpath, f"placement {key}: {message}"))
            else:
                out.append(FleetError(origin.file, origin.line, fieldpath, message, origin.doc))
        for fault, clusters in plan.override_faults.items():
            shown = ", ".join(clusters[:10]) + (
                f" (+{len(clusters) - 10})" if len(clusters) > 10 else ""
            )
            where = f"placement {key} on {len(clusters)} cluster(s): {shown}"
            out.append(
                FleetError(
                    fault.file, fault.line, fault.field, f"{fault.message} ({where})", fault.doc
                )
            )
    return out


def _assumed_ready(
    fleet: FleetSnapshot,
    statuses: Mapping[str, MemberCluster] | None,
    reports: Mapping[str, AgentReport] | None,
) -> frozenset[str]:
    """Clusters taken as having applied, available, whatever they were given: every cluster in a
    dry run without any status source, and clusters without a report under AssumeJoined."""
    if statuses is None and reports is None:
        return frozenset(fleet.clusters)
    if fleet.fleet.spec.cluster_eligibility == "AssumeJoined":
        return frozenset(c for c in fleet.clusters if c not in (reports or {}))
    return frozenset()


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
    laps = StepTimer()
    overlay = overlay_entries(fleet, prior.output)  # ClusterGroupUpgrade label/annotation actions
    fleet = with_label_overlay(fleet, prior.output)
    fleet, tenancy = govern_fleet(fleet)
    assume_ready = _assumed_ready(fleet, statuses, reports)
    if reports is not None:
        statuses = {**(statuses or {}), **statuses_from_reports(fleet.clusters, reports, now)}
    views = build_cluster_views(
        fleet.clusters, statuses or {}, _eligibility(fleet, statuses is not None), now
    )
    laps.lap("prepare")
    plans, origins, errors, override_snapshots = _plan_all(fleet, prior, views, tenancy, history)
    laps.lap("plan")
    kept = _kept_states(fleet, prior, plans)
    deleted = deleted_holds(fleet, prior.placements, plans, views)
    kept |= {key: prior.placements[key] for key in deleted}
    distributed = apply_distributions(fleet, plans, views, prior.output, now)
    errors += distributed.errors
    laps.lap("distribute")
    seal_secrets(plans, fleet, views, prior.output)  # after every manifest change, before rollout
    laps.lap("seal")
    prior_index = read_prior_index(prior.output) if prior.output else {}
    rollout = roll_out(
        plans,
        fleet,
        prior.output,
        reports or {},
        now,
        prior_index=prior_index,
        clusters=frozenset(views),
        drivers=drivers,
        assume_ready=assume_ready,
    )
    errors += rollout.errors
    laps.lap("rollout")
    assembled = assemble_clusters(plans, kept, prior, views, prior_index, fleet.fleet.limits())
    files = OutputFiles.of_assembly(assembled.files, assembled.since)  # the assembly: a base
    laps.lap("assemble")
    record_sync(plans, now)  # a conflict lost now makes the binding failed for the next pass
    files.add(rollout.files)
    files.add(distributed.files)
    files.add(distributed.status_files(files))  # reads `clusters/` files only
    files.add(_kept_decisions(kept, prior))
    for plan in plans.values():  # unchanged states become last pass's objects (stage memos)
        plan.state = canonical_state(plan.state)
    files.add(decision_files(plans, prior))  # before status: it may hold a placement
    laps.lap("decisions")
    files.add(placement_status_files(plans, prior, reports or {}, now))
    laps.lap("placement status")
    files.add(profile_files(views))
    files.add(
        cluster_status_files(
            views,
            statuses is not None,
            fleet.fleet.spec.cluster_eligibility,
            prior,
            now,
            fleet.fleet.spec.cluster_status_record_interval_delta(),
        )
    )
    files.settle()  # what follows reads status files: only this pass's
    files.add(with_overlay_status(files, overlay))
    states = {key: plan.state for key, plan in plans.items()} | kept
    for key in kept:  # a held, unreadable or deleted placement keeps its status file too
        path = placement_status_path(key)
        data = prior.output.get(path)
        if key in deleted:
            data = held_status_file(data, deleted[key], now)
        if data is not None:
            files.add({path: data})
    state = State(placements=states, overrides=override_snapshots)
    laps.lap("cluster status")
    files.add(state_files(state, files, assembled.indexed, (assembled.files, assembled.since)))
    laps.lap("state")
    files.follow(assembled.files, assembled.since)
    errors += _plan_errors(plans, origins)
    for key, ps in sorted(kept.items()):
        if key in deleted:
            continue
        errors.append(
            FleetError(
                ps.origin_file,
                None,
                "",
                f"placement {key} keeps its previous output until its file loads again",
            )
        )
    all_errors = tuple(sorted(set(fleet.errors) | set(errors)))
    holds = {k: p.deletion_hold for k, p in plans.items() if p.deletion_hold} | deleted
    laps.lap("finish")
    return PassResult(
        files=files,
        state=State(states, files, override_snapshots),
        errors=all_errors,
        explanations={key: plan.explanations for key, plan in plans.items()},
        next_wakeup=rollout.wakeup,
        trailers=rollout.trailers + tuple((HELD_TRAILER, key) for key in sorted(holds)),
        plans=plans,
        deletion_holds=tuple(h for _, h in sorted(holds.items()) if h is not None),
        stage_timings=tuple(laps.timings),
        stage_cpu_timings=tuple(laps.cpu_timings),
    )

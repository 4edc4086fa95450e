"""The stages of the pure pass, in order (`PIPELINE`), each a function of one `PassRun`: the
pass's inputs and what the stages before it added. `reconciler.pass_.reconcile` runs them one
after the other, timing each, and makes the `PassResult` of what they leave.

prepare (cluster views, tenancy, CGU overlays) -> plan (each placement's selection,
scheduling, overrides and manifests) -> distribute (held and deleted placements, replica
distribution) -> seal (Secrets encrypted per cluster) -> roll (the rollout) -> assemble
(per-cluster files and indexes) -> decide (sync records, kept decisions, PlacementDecisions) ->
placement status -> cluster status (profiles, cluster status, overlay status, held
placements' status) -> state -> finish (errors). A stage reads only what earlier stages set,
and sets its own. Three values are shared: later stages add to `errors` and to `files` (the
output tree), and update the placements' plans in place (seal, roll, decide: `PlacementPlan` is
the pass's working record of a placement). Called by `pass_`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from gitfleet.api import MemberCluster
from gitfleet.api.errors import FleetError
from gitfleet.api.output import placement_status_path
from gitfleet.api.report import AgentReport
from gitfleet.load.model import FleetSnapshot, Origin
from reconciler.assemble import AssembledClusters, assemble_clusters
from reconciler.clusterstatus import cluster_status_files
from reconciler.distributions import DistributionsResult, apply_distributions
from reconciler.govern.checks import Governance
from reconciler.govern.deletion import (
    DeletionHold,
    approved_keys,
    deleted_holds,
    held_status_file,
)
from reconciler.govern.tenancy import Tenancy, govern_fleet
from reconciler.history import HistoricalSources
from reconciler.isolate import failed_plan
from reconciler.output import OutputFiles, placement_key
from reconciler.override import build_override_index, next_override_snapshots, snapshot_name
from reconciler.placememo import pass_key, place_reusing
from reconciler.placement import AnyPlacement, PassInputs, PlacementPlan
from reconciler.priorconds import next_pass as next_conditions_pass
from reconciler.priorindex import PriorIndex, read_prior_index
from reconciler.priorparse import paths_under
from reconciler.publish import decision_files, profile_files
from reconciler.reports import statuses_from_reports
from reconciler.rollout.cgu import overlay_entries, with_label_overlay, with_overlay_status
from reconciler.rollout.drivers import Driver
from reconciler.rollstage import RolloutOutcome, roll_out
from reconciler.rollsync import record_sync
from reconciler.schedule.clusters import ClusterView, EligibilityPolicy
from reconciler.schedule.inventory import build_cluster_views
from reconciler.sealing import seal_secrets
from reconciler.select import build_index
from reconciler.state import PlacementState, Snapshot, State, canonical_state, state_files
from reconciler.statusdocs import placement_status_files


class PassRun:
    """One pass: its inputs, then the values each stage of `PIPELINE` sets, in that order (a
    stage reads only those of the stages before it; `errors`, `files` and the plans in `plans`
    are added to or updated by later stages too)."""

    # set by `prepare`
    overlay: dict[str, list[dict[str, Any]]]
    tenancy: Tenancy
    assume_ready: frozenset[str]
    views: dict[str, ClusterView]
    # set by `plan`
    plans: dict[str, PlacementPlan]
    origins: dict[str, Origin | None]
    errors: list[FleetError]
    override_snapshots: dict[str, tuple[Snapshot, ...]]
    # set by `distribute`
    kept: dict[str, PlacementState]
    deleted: dict[str, DeletionHold]
    distributed: DistributionsResult
    # set by `roll`
    prior_index: PriorIndex
    rollout: RolloutOutcome
    # set by `assemble`; `files` grows with every later stage
    assembled: AssembledClusters
    files: OutputFiles
    # set by `write_state`
    states: dict[str, PlacementState]
    # set by `finish`
    all_errors: tuple[FleetError, ...]
    holds: dict[str, DeletionHold]

    def __init__(
        self,
        fleet: FleetSnapshot,
        prior: State,
        statuses: Mapping[str, MemberCluster] | None,
        now: datetime,
        reports: Mapping[str, AgentReport] | None,
        drivers: Sequence[Driver],
        history: HistoricalSources,
    ) -> None:
        self.fleet, self.prior, self.statuses, self.now = fleet, prior, statuses, now
        self.reports, self.drivers, self.history = reports, drivers, history


Stage = Callable[[PassRun], None]


def _eligibility(fleet: FleetSnapshot, has_status: bool) -> EligibilityPolicy:
    spec = fleet.fleet.spec
    return EligibilityPolicy(
        mode=spec.cluster_eligibility,
        has_status_source=has_status,
        heartbeat_timeout=spec.heartbeat_timeout_delta(),
        health_timeout=spec.health_timeout_delta(),
    )


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


def prepare(run: PassRun) -> None:
    """The fleet as this pass sees it (ClusterGroupUpgrade label and annotation overlays,
    what tenants may not declare left out) and each cluster's view and eligibility."""
    next_conditions_pass()
    run.overlay = overlay_entries(run.fleet, run.prior.output)
    run.fleet, run.tenancy = govern_fleet(with_label_overlay(run.fleet, run.prior.output))
    run.assume_ready = _assumed_ready(run.fleet, run.statuses, run.reports)
    if run.reports is not None:
        reported = statuses_from_reports(run.fleet.clusters, run.reports, run.now)
        run.statuses = {**(run.statuses or {}), **reported}
    policy = _eligibility(run.fleet, run.statuses is not None)
    run.views = build_cluster_views(run.fleet.clusters, run.statuses or {}, policy, run.now)


def _placements(fleet: FleetSnapshot) -> dict[str, tuple[AnyPlacement, Origin | None]]:
    out: dict[str, tuple[AnyPlacement, Origin | None]] = {}
    for name, crp in fleet.placements.items():
        out[placement_key(name)] = (crp, fleet.origins.get(("ClusterResourcePlacement", "", name)))
    for (ns, name), rp in fleet.resource_placements.items():
        out[placement_key(name, ns)] = (rp, fleet.origins.get(("ResourcePlacement", ns, name)))
    return out


def plan(run: PassRun) -> None:
    """Every placement's plan (`placement.place`, reused while its inputs are the same)."""
    run.plans, run.origins, run.errors, run.override_snapshots = _plan_all(
        run.fleet, run.prior, run.views, run.tenancy, run.history
    )


def _plan_all(
    fleet: FleetSnapshot,
    prior: State,
    views: Mapping[str, ClusterView],
    tenancy: Tenancy,
    history: HistoricalSources,
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


def distribute(run: PassRun) -> None:
    """Placements kept as they were (their file failed to load, or the mass-deletion guard
    holds their deletion), and every ReplicaDistribution."""
    run.kept = _kept_states(run.fleet, run.prior, run.plans)
    run.deleted = deleted_holds(run.fleet, run.prior.placements, run.plans, run.views)
    run.kept |= {key: run.prior.placements[key] for key in run.deleted}
    run.distributed = apply_distributions(
        run.fleet, run.plans, run.views, run.prior.output, run.now
    )
    run.errors += run.distributed.errors


def _kept_states(
    fleet: FleetSnapshot, prior: State, plans: Mapping[str, PlacementPlan]
) -> dict[str, PlacementState]:
    """Placements that vanished only because their file failed to load: kept as they were."""
    return {
        key: ps
        for key, ps in prior.placements.items()
        if key not in plans and ps.origin_file in fleet.error_files
    }


def seal(run: PassRun) -> None:
    """Secrets encrypted per cluster: after every manifest change, before the rollout."""
    seal_secrets(run.plans, run.fleet, run.views, run.prior.output)


def roll(run: PassRun) -> None:
    """The rollout of every placement (`rollstage.roll_out`; rollout drivers included)."""
    run.prior_index = read_prior_index(run.prior.output) if run.prior.output else {}
    run.rollout = roll_out(
        run.plans,
        run.fleet,
        run.prior.output,
        run.reports or {},
        run.now,
        prior_index=run.prior_index,
        clusters=frozenset(run.views),
        drivers=run.drivers,
        assume_ready=run.assume_ready,
    )
    run.errors += run.rollout.errors


def assemble(run: PassRun) -> None:
    """Every cluster's files and index: the base of the output tree."""
    limits = run.fleet.fleet.limits()
    run.assembled = assemble_clusters(
        run.plans, run.kept, run.prior, run.views, run.prior_index, limits
    )
    run.files = OutputFiles.of_assembly(run.assembled.files, run.assembled.since)


def decide(run: PassRun) -> None:
    """Sync records, the rollout's and distributions' files, and every placement's decisions
    (before status: a decision may hold a placement)."""
    record_sync(run.plans, run.now)  # a conflict lost now makes the binding failed next pass
    files = run.files
    files.add(run.rollout.files)
    files.add(run.distributed.files)
    files.add(run.distributed.status_files(files))  # reads `clusters/` files only
    files.add(_kept_decisions(run.kept, run.prior))
    for plan in run.plans.values():  # unchanged states become last pass's objects (memos)
        plan.state = canonical_state(plan.state)
    files.add(decision_files(run.plans, run.prior))


def _kept_decisions(kept: Mapping[str, PlacementState], prior: State) -> dict[str, bytes]:
    """A kept placement keeps its PlacementDecision slices too. Only the matching paths are
    read: `prior.output` may be a lazy view of the previous output commit."""
    if not kept:
        return {}
    slices = [re.compile(rf"decisions/{re.escape(key)}-[0-9]+\.yaml") for key in sorted(kept)]
    paths = paths_under(prior.output, "decisions/")
    return {p: prior.output[p] for p in paths if any(s.fullmatch(p) for s in slices)}


def write_placement_status(run: PassRun) -> None:
    """Every placement's status file (`statusdocs`)."""
    run.files.add(placement_status_files(run.plans, run.prior, run.reports or {}, run.now))


def write_cluster_status(run: PassRun) -> None:
    """Scheduling profiles, every cluster's status file (with its overlay entries), and the
    status files of kept placements (a held deletion's says why)."""
    files, spec = run.files, run.fleet.fleet.spec
    files.add(profile_files(run.views))
    every = spec.cluster_status_record_interval_delta()
    has_status, mode = run.statuses is not None, spec.cluster_eligibility
    files.add(cluster_status_files(run.views, has_status, mode, run.prior, run.now, every))
    files.settle()  # what follows reads status files: only this pass's
    files.add(with_overlay_status(files, run.overlay))
    for key in run.kept:  # a held, unreadable or deleted placement keeps its status file too
        path = placement_status_path(key)
        data = run.prior.output.get(path)
        if key in run.deleted:
            data = held_status_file(data, run.deleted[key], run.now)
        if data is not None:
            files.add({path: data})


def write_state(run: PassRun) -> None:
    """Every placement's state (kept ones as they were) and the override snapshots."""
    run.states = {key: plan.state for key, plan in run.plans.items()} | run.kept
    state = State(placements=run.states, overrides=run.override_snapshots)
    assembly = (run.assembled.files, run.assembled.since)
    run.files.add(state_files(state, run.files, run.assembled.indexed, assembly))


def finish(run: PassRun) -> None:
    """The tree remembered for the next pass, every error sorted, and the deletion holds."""
    run.files.follow(run.assembled.files, run.assembled.since)
    run.errors += _plan_errors(run.plans, run.origins)
    for key, ps in sorted(run.kept.items()):
        if key not in run.deleted:
            message = f"placement {key} keeps its previous output until its file loads again"
            run.errors.append(FleetError(ps.origin_file, None, "", message))
    run.all_errors = tuple(sorted(set(run.fleet.errors) | set(run.errors)))
    holds = {k: h for k, p in run.plans.items() if (h := p.deletion_hold) is not None}
    run.holds = {**holds, **run.deleted}


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


PIPELINE: tuple[tuple[str, Stage], ...] = (
    ("prepare", prepare),
    ("plan", plan),
    ("distribute", distribute),
    ("seal", seal),
    ("rollout", roll),
    ("assemble", assemble),
    ("decisions", decide),
    ("placement status", write_placement_status),
    ("cluster status", write_cluster_status),
    ("state", write_state),
    ("finish", finish),
)
"""The stages in order, each with the name its timing is reported under."""

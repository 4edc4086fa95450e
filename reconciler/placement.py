"""One placement through the pass: snapshots, scheduling, bindings, manifests and status.

`place` is the per-placement step of the pure pass (DESIGN.md §3) for ClusterResourcePlacement
and ResourcePlacement. It returns what the placement wants on each cluster (shared rendered
bytes, so a fleet-wide object is serialised once) plus its new state and status document.
Called by `reconciler.pass_` through `reconciler.placememo`."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gitfleet.api import ClusterResourcePlacement, ResourcePlacement
from gitfleet.api.canonical import canonical_json, placement_content_hash
from gitfleet.api.report import PlacementReport
from reconciler.govern.checks import NO_GOVERNANCE, Governance, check_placement
from reconciler.govern.deletion import DeletionHold
from reconciler.history import (
    NO_HISTORY,
    PIN_FIELD,
    HistoricalSources,
    SnapshotRender,
    older_renders,
    pin_target,
)
from reconciler.manifestmemo import RememberedRenderer
from reconciler.manifests import (
    NO_OVERRIDES,
    ClusterManifests,
    Manifest,
    default_manifests,
)
from reconciler.override import OverrideIndex
from reconciler.override.cache import OverrideFault
from reconciler.placeholds import hold_reasons
from reconciler.placeholds import resource_id as resource_id
from reconciler.rollout.rolling import RollingConfig
from reconciler.schedule.clusters import ClusterView
from reconciler.schedule.cycle import (
    BOUND,
    SCHEDULED,
    UNSCHEDULED,
    Decision,
)
from reconciler.schedule.outcome import ClusterExplanation
from reconciler.schedule.reuse import schedule_placement
from reconciler.select import Reads, ResourceIndex, Selection, select_reading
from reconciler.state import PlacementState, Snapshot
from reconciler.status import Cond

AnyPlacement = ClusterResourcePlacement | ResourcePlacement


@dataclass(frozen=True)
class PassInputs:
    """Pass-wide facts every placement needs."""

    commit: str | None
    broken_files: frozenset[str]
    """Files that failed to load this pass."""
    max_objects: int
    overrides: OverrideIndex
    override_names: Mapping[str, str]
    """Override key -> its latest snapshot name (`<name>-<index>`)."""
    governance: Governance = NO_GOVERNANCE
    history: HistoricalSources = NO_HISTORY
    """Older resource snapshots read at their recorded commits (`reconciler.history`)."""


@dataclass
class PlacementPlan:
    """What one placement wants this pass (mutable while the pass assembles it)."""

    key: str
    state: PlacementState
    scheduled: Cond
    decisions: tuple[Decision, ...] = ()
    selection: Selection | None = None
    manifests: tuple[Manifest, ...] = ()
    errors: list[tuple[str, str]] = field(default_factory=list)
    """(field path, message) user errors of this placement."""
    held: bool = False
    """True when the placement keeps its previous output (see `pass_`)."""
    override_faults: dict[OverrideFault, list[str]] = field(default_factory=dict)
    """Failing override ops -> the clusters they failed on (one error each, see `pass_`)."""
    sync_errors: dict[str, str] = field(default_factory=dict)
    """cluster -> WorkSynchronized failure (e.g. a conflict with another placement)."""
    name: str = ""
    namespace: str = ""
    kind: str = ""
    declared: Mapping[str, Any] = field(default_factory=dict)
    """The placement as declared (defaults applied), without status."""
    fixed_names: int | None = None
    """len(clusterNames) for PickFixed (failed-to-schedule entries in status)."""
    apply_strategy: Mapping[str, Any] = field(default_factory=dict)
    explanations: Mapping[str, ClusterExplanation] = field(default_factory=dict)
    """Per cluster: picked or not, the first filter that rejected it, scores (`explain`)."""
    per_cluster: dict[str, ClusterManifests] = field(default_factory=dict)
    """Clusters whose overrides change the manifests (others use `manifests`)."""
    strategy_type: str = "RollingUpdate"
    rolling: RollingConfig = field(default_factory=RollingConfig)
    placement_type: str = "PickAll"
    number_of_clusters: int | None = None
    desired: dict[str, str] = field(default_factory=dict)
    """cluster -> content hash it would get now (set by the rollout stage)."""
    waits: dict[str, str] = field(default_factory=dict)
    """cluster -> why it does not have the latest content yet ("waiting: ...", "held: ...")."""
    reports: dict[str, PlacementReport] = field(default_factory=dict)
    """cluster -> the agent's report entry about exactly the content the hub gave it."""
    rollout_note: str = ""
    """Placement-wide rollout note (an External placement no driver targets is held)."""
    deletion_hold: DeletionHold | None = None
    """Set when the mass-deletion guard holds this placement (`reconciler.govern.deletion`)."""
    target_index: int | None = None
    """The snapshot the rollout moves clusters to: a RollingUpdate pin, else None (latest)."""
    renders: dict[int, SnapshotRender] = field(default_factory=dict)
    """Older snapshots a staged run may deploy, rendered from their recorded commits."""
    unavailable: dict[int, str] = field(default_factory=dict)
    """Older snapshots that cannot be rendered, and why."""
    moved_to: dict[str, int] = field(default_factory=dict)
    """Clusters the rollout gave an older snapshot (from `renders`) in this pass."""
    cluster_apply_strategies: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    """cluster -> the apply strategy its index entry carries when it is not `apply_strategy`
    (External placements: the one recorded by the driver that last moved the cluster)."""
    _live_memo: (
        tuple[PlacementState, int | None, dict[str, str], tuple[str, ...], tuple[str, ...]] | None
    ) = field(default=None, init=False, repr=False, compare=False)
    # `_live`'s last inputs (state by identity, a copy of `desired`) and answer

    def apply_strategy_for(self, cluster: str) -> Mapping[str, Any]:
        """The apply strategy the cluster's index entry carries for this placement."""
        return self.cluster_apply_strategies.get(cluster, self.apply_strategy)

    def cluster(self, name: str) -> ClusterManifests:
        return self.per_cluster.get(name, NO_OVERRIDES)

    def manifests_for(self, cluster: str) -> tuple[Manifest, ...]:
        custom = self.cluster(cluster).manifests
        return self.manifests if custom is None else custom

    def bound_clusters(self) -> list[str]:
        """Clusters with a Bound binding (whatever content they have)."""
        return sorted(b.cluster for b in self.state.bindings if b.state == BOUND)

    def target(self) -> Snapshot | None:
        """The snapshot clusters roll to: the pinned one, else the latest."""
        if self.target_index is None:
            return self.state.latest_resources()
        return next(
            (s for s in self.state.resource_snapshots if s.index == self.target_index), None
        )

    def live_clusters(self) -> list[str]:
        """Clusters that get this placement's target content in this pass's output (a new list;
        remembered while `state`, `target_index` and `desired` are what it was computed from)."""
        return list(self._live()[0])

    def _live(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(`live_clusters`, the other Bound or Unscheduled bindings' clusters in order), made
        in one pass over the bindings and remembered (`_live_memo`)."""
        memo, pin = self._live_memo, self.target_index
        if memo and memo[0] is self.state and memo[1] == pin and memo[2] == self.desired:
            return memo[3], memo[4]
        latest = self.target()
        index = latest.index if latest else None
        desired, live, rest = self.desired, [], []
        for b in self.state.bindings:
            state = b.state
            if (
                state == BOUND
                and b.resource_index == index
                and (b.content is None or b.content == desired.get(b.cluster))
            ):
                live.append(b.cluster)
            elif state in (BOUND, UNSCHEDULED):
                rest.append(b.cluster)
        made = (tuple(sorted(live)), tuple(rest))
        self._live_memo = (self.state, self.target_index, dict(desired), *made)
        return made

    def targeted_clusters(self) -> list[str]:
        """Clusters with a Scheduled or Bound binding (rollout candidates)."""
        return sorted(b.cluster for b in self.state.bindings if b.state != UNSCHEDULED)

    def kept_clusters(self) -> list[str]:
        """Clusters that keep their previous files: bindings the rollout has not moved to the
        latest content yet (Bound on older content, Unscheduled not yet removed)."""
        live, rest = self._live()
        if not rest:
            return []
        moved = set(live) | set(self.moved_to)
        return sorted(c for c in rest if c not in moved)

    def written_clusters(self) -> list[str]:
        """Clusters whose files this pass renders: live ones and those moved to older content."""
        return sorted(set(self.live_clusters()) | set(self.moved_to))

    def desired_content(self, cluster: str) -> str:
        """`placement_content_hash` of what the cluster would get now."""
        return placement_content_hash(m.entry for m in self.manifests_for(cluster))


def _sha(obj: Any) -> str:
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()


def policy_hash(placement: AnyPlacement) -> str:
    """Spec §1.1: hash of the policy with numberOfClusters cleared."""
    policy = placement.spec.policy
    dumped = policy.model_dump(by_alias=True, exclude_none=True, mode="json") if policy else {}
    dumped.pop("numberOfClusters", None)
    return _sha(dumped)


def _next_snapshots(
    history: tuple[Snapshot, ...], digest: str, limit: int, commit: str | None = None
) -> tuple[Snapshot, ...]:
    """Append a snapshot when the hash changed; keep at most `limit` (oldest dropped)."""
    if history and history[-1].hash == digest:
        return history
    index = history[-1].index + 1 if history else 0
    return (*history, Snapshot(index=index, hash=digest, commit=commit))[-max(limit, 1) :]


def _new_plan(key: str, placement: AnyPlacement, prior: PlacementState) -> PlacementPlan:
    """The plan header: generation, policy snapshot and what status needs of the spec."""
    spec_hash = _sha(placement.spec.model_dump(by_alias=True, exclude_none=True, mode="json"))
    generation = prior.generation + (1 if spec_hash != prior.spec_hash else 0)
    limit = placement.spec.revision_history_limit or 10
    policies = _next_snapshots(prior.policy_snapshots, policy_hash(placement), limit)
    state = replace(prior, generation=generation, spec_hash=spec_hash, policy_snapshots=policies)
    pending = Cond("Scheduled", "Unknown", "SchedulePending", "Scheduling has not completed")
    plan = PlacementPlan(key=key, state=state, scheduled=pending)
    plan.name = placement.metadata.name
    plan.namespace = placement.metadata.namespace or ""
    plan.kind = placement.kind
    declared = placement.model_dump(by_alias=True, exclude_none=True, mode="json")
    declared.pop("status", None)
    plan.declared = declared
    policy = placement.spec.policy
    if policy is not None and policy.placement_type == "PickFixed":
        plan.fixed_names = len(policy.cluster_names or [])
    strategy = placement.spec.strategy
    plan.strategy_type = strategy.type
    if strategy.rolling_update is not None:
        ru = strategy.rolling_update
        plan.rolling = RollingConfig(
            ru.max_unavailable, ru.max_surge, ru.unavailable_period_seconds
        )
    plan.placement_type = policy.placement_type
    plan.number_of_clusters = policy.number_of_clusters
    if strategy is not None and strategy.apply_strategy is not None:
        plan.apply_strategy = strategy.apply_strategy.model_dump(
            by_alias=True, exclude_none=True, mode="json"
        )
    return plan


def select(placement: AnyPlacement, index: ResourceIndex) -> Selection:
    """What the placement selects (`place`, and `placememo` keying its work by it)."""
    return select_reading(placement, index)[0]


def select_read(placement: AnyPlacement, index: ResourceIndex) -> tuple[Selection, Reads]:
    """`select`, and the index lookups it made (`placememo` keeps them: a pass whose changed
    index entries none of them finds selects the same)."""
    return select_reading(placement, index)


def place(
    key: str,
    placement: AnyPlacement,
    prior: PlacementState,
    views: Mapping[str, ClusterView],
    index: ResourceIndex,
    inputs: PassInputs,
    selection: Selection | None = None,
) -> PlacementPlan:
    """The plan of one placement (`selection`: the caller's, else made here). Never raises."""
    plan = _new_plan(key, placement, prior)
    selection = selection or select(placement, index)
    if selection.error is not None:
        plan.scheduled = Cond("Scheduled", "False", "InvalidResourceSelectors", selection.error)
        plan.errors.append(("spec.resourceSelectors", selection.error))
        plan.held = True
        return plan
    plan.selection = selection
    policy_index = plan.state.policy_snapshots[-1].index
    outcome = schedule_placement(key, placement, prior.bindings, views, policy_index)
    if isinstance(outcome, str):
        plan.errors.append(("spec.policy", outcome))
        plan.scheduled = replace(plan.scheduled, message=f"Scheduling has not completed: {outcome}")
        plan.held = True
        return plan
    plan.decisions = outcome.decisions
    plan.explanations = outcome.explanations
    plan.scheduled = outcome.condition() or plan.scheduled
    holds = hold_reasons(selection, prior, inputs.broken_files, inputs.max_objects)
    if holds:
        plan.errors += [("spec.resourceSelectors", r) for r in holds]
        plan.held = True
        return plan
    problems, plan.deletion_hold = check_placement(
        inputs.governance, key, prior, selection.resources, outcome.bindings, views
    )
    plan.errors += problems
    if problems or plan.deletion_hold is not None:  # a tenant refuses it, or deletion held
        plan.held = True
        return plan
    limit = placement.spec.revision_history_limit or 10
    resources = _next_snapshots(prior.resource_snapshots, selection.hash, limit, inputs.commit)
    plan.target_index, rendered, problem = pin_target(
        plan.key, placement, resources, inputs.history
    )
    if problem is not None:
        plan.errors.append((PIN_FIELD, problem))
        plan.held = True
        return plan
    if rendered is not None:
        selection, index = rendered.selection, rendered.index
    plan.manifests, problems = default_manifests(selection, index)
    plan.errors += problems
    plan.state = replace(
        plan.state,
        resource_snapshots=resources,
        bindings=outcome.bindings,
        selected=tuple(sorted((resource_id(s), s.origin.file) for s in plan.selection.resources)),
    )
    _apply_overrides(plan, placement, selection, views, index, inputs)
    history, overrides, names = inputs.history, inputs.overrides, inputs.override_names
    plan.renders, plan.unavailable = older_renders(
        plan.key, plan.target(), placement, views, history, overrides, names
    )
    return plan


def _apply_overrides(
    plan: PlacementPlan,
    placement: AnyPlacement,
    selection: Selection,
    views: Mapping[str, ClusterView],
    index: ResourceIndex,
    inputs: PassInputs,
) -> None:
    """Per-cluster manifests where overrides apply (spec §3); failures become user errors."""
    serving = inputs.overrides.for_placement(placement, selection.resources)
    if not serving.overrides:  # no override serves it: no cluster has one to apply
        return
    renderer = RememberedRenderer(plan.key, serving, selection, index, inputs.override_names)
    results, failing = renderer.all_clusters(selection, views, plan.targeted_clusters())
    plan.per_cluster.update(results)
    failed = 0
    for cluster, result in failing:
        failed = _failed_on(plan, cluster, result, failed)


def _failed_on(plan: PlacementPlan, cluster: str, result: ClusterManifests, failed: int) -> int:
    """Records `result`'s override failures: located faults by fault (reported once), the
    others as errors of the first 20 clusters (3 each); returns how many clusters had those."""
    for _, fault in result.faults:
        plan.override_faults.setdefault(fault, []).append(cluster)
    located = {message for message, _ in result.faults}
    others = [msg for _, msg in result.failures if msg not in located]
    if others and failed < 20:
        failed += 1
        plan.errors += [
            ("spec.resourceSelectors", f"cluster {cluster}: {msg}") for msg in others[:3]
        ]
    return failed


__all__ = ["SCHEDULED", "Manifest", "PassInputs", "PlacementPlan", "place", "policy_hash"]

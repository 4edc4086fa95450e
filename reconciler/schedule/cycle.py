"""Scheduling a placement: KubeFleet's PickAll, PickN and PickFixed cycles (spec §1.5-§1.7).

`schedule` classifies the placement's bindings, runs the default profile and returns the new
bindings, the ClusterDecisions, the Scheduled condition and an explanation for every cluster.
Where KubeFleet would requeue (topology spread picks one cluster per cycle) the cycles run to
convergence inside one call. Decisions and explanations are computed from the converged bindings
(one final Filter/Score evaluation), so a second pass with unchanged inputs gives the same bytes.
The default profile is evaluated incrementally (`incremental`); on any plugin error, or with
`REFERENCE = True` (tests, benchmarks), the plain runner evaluates every cycle from scratch and
decides. Raises `ScheduleError` when a plugin cannot evaluate. Pure; called by
`reconciler.placement`.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from gitfleet.api import ClusterResourcePlacement, PlacementPolicy, ResourcePlacement
from reconciler.state import Binding, BindingDecision

from .bindingset import BindingSet, downscale_victims
from .clusters import ClusterView
from .errors import ScheduleError
from .framework import (
    ClusterScore,
    CycleState,
    Evaluation,
    PlacementInfo,
    Profile,
    evaluate,
    run_post_batch,
    unschedulable,
)
from .incremental import Incremental, supports
from .outcome import (
    BOUND,
    SCHEDULED,
    UNSCHEDULED,
    ClusterExplanation,
    Decision,
    ScheduleOutcome,
    fixed_invalid_reason,
    fixed_not_found_reason,
    fulfilled_message,
    picked_reason,
    unfulfilled_message,
)
from .profile import DEFAULT_PROFILE
from .report import Explanations, decisions_for, explain
from .statics import Statics

AnyPlacement = ClusterResourcePlacement | ResourcePlacement
REFERENCE = False
"""True: always use the plain per-cycle runner (the reference the property tests compare with)."""


@dataclass
class _Run:
    """One `schedule` call: the inputs, the bindings being changed, the static-plugin memo."""

    info: PlacementInfo
    views: Mapping[str, ClusterView]
    bindings: BindingSet
    profile: Profile
    use_fast: bool = False
    """Evaluate with `incremental.Incremental` (built on first use) instead of `evaluate`."""
    before: tuple[Statics, Collection[str]] | None = None
    """An earlier pass's static results of this policy and the clusters changed since."""
    clusters: list[ClusterView] = field(default_factory=list)
    """The views sorted by name (made from `views` when not given)."""
    memo: dict[Any, Any] = field(default_factory=dict)
    cycles: int = 0
    fast: Incremental | None = None
    final: Evaluation | None = None
    """The last `final_evaluation` (what decisions and explanations were made from)."""
    present: int = field(init=False)
    """Current bindings before the run (PickN with at least `numberOfClusters` picks none)."""

    def __post_init__(self) -> None:
        self.present = len(self.bindings.current)
        if not self.clusters:
            self.clusters = [self.views[n] for n in sorted(self.views)]

    def new_state(self) -> CycleState:
        return CycleState(
            self.info,
            self.views,
            self.clusters,
            self.bindings.names(),
            frozenset(self.bindings.obsolete),
            self.memo,
        )

    def incremental(self, with_scores: bool) -> Incremental | None:
        """The incremental evaluator (None on the plain path); raises `ScheduleError`."""
        if self.use_fast and self.fast is None:
            self.fast = Incremental(self.profile, self.new_state(), with_scores, self.before)
        return self.fast

    def evaluate(self, with_scores: bool, state: CycleState | None = None) -> Evaluation:
        """Filter (and Score) against the current bindings."""
        fast = self.incremental(with_scores)
        if fast is not None:
            return fast.evaluation(self.bindings.current, self.bindings.obsolete, with_scores)
        return evaluate(self.profile, state or self.new_state(), with_scores)

    def final_evaluation(self, with_scores: bool, tolerate_errors: bool) -> Evaluation | None:
        """Filter (and Score) against the converged bindings, for decisions and explanations.
        On paths where KubeFleet runs no plugin (PickN no-op, downscale) a plugin error only
        leaves the clusters unexplained instead of failing the placement."""
        try:
            self.final = self.evaluate(with_scores)
        except ScheduleError:
            if tolerate_errors and not self.use_fast:
                return None
            raise
        return self.final


def _scored_decision(name: str, score: ClusterScore) -> BindingDecision:
    reason = picked_reason(name, score.affinity, score.topology)
    return BindingDecision(reason, score.affinity, score.topology)


@lru_cache(maxsize=1 << 16)
def _zero_score_decision(name: str) -> BindingDecision:
    """One object per cluster name: every PickAll placement that picks the cluster shares it
    (frozen, so sharing is safe)."""
    return BindingDecision(picked_reason(name, 0, 0), 0, 0)


def pick_all(run: _Run) -> ScheduleOutcome:
    """Spec §1.5: every cluster passing the filters is picked; no scoring, no batching."""
    run.cycles = 1
    ev = run.evaluate(with_scores=False)
    for name in ev.passed:
        if name not in run.bindings.current:
            run.bindings.pick(name, _zero_score_decision(name))
    run.bindings.release_obsolete()
    final = run.final_evaluation(with_scores=False, tolerate_errors=False)
    found = len(run.bindings.current)
    return ScheduleOutcome(
        bindings=run.bindings.all(),
        decisions=decisions_for(run.bindings, final),
        fulfilled=True,
        message=fulfilled_message(found),
        explanations=explain(run.clusters, run.bindings, final, ranked=False),
        cycles=run.cycles,
    )


def _downscale(bs: BindingSet, count: int) -> None:
    """Spec §1.6 step 1: drop every obsolete binding, then trim `count` current ones."""
    bs.release_obsolete()
    for victim in downscale_victims(bs.current, count):
        bs.release(victim.cluster)


def _fast_scale_cycle(run: _Run, fast: Incremental, wanted: int) -> bool:
    """`_scale_cycle` with the incremental evaluator: same picks, same requeue verdict."""
    desired = wanted - len(run.bindings.current)
    picks, limit = fast.pick_cycle(run.bindings.current, run.bindings.obsolete, desired)
    changed = 0
    for name, score in picks:
        changed += run.bindings.pick(name, _scored_decision(name, score))
        fast.picked(name)
    run.bindings.release_obsolete()
    return 0 < limit < desired and changed == limit


def _scale_cycle(run: _Run, wanted: int) -> bool:
    """One PickN scheduling cycle; True when KubeFleet would requeue immediately."""
    fast = run.incremental(with_scores=True)
    if fast is not None:
        return _fast_scale_cycle(run, fast, wanted)
    state = run.new_state()
    state.desired_batch = wanted - len(run.bindings.current)
    limit = run_post_batch(run.profile, state)
    ev = run.evaluate(with_scores=True, state=state)
    scores = ev.scores
    count = min(state.desired_batch, limit, len(scores))
    changed = 0
    for name in heapq.nlargest(count, scores, key=lambda n: (scores[n], n)):
        changed += run.bindings.pick(name, _scored_decision(name, ev.scores[name]))
    run.bindings.release_obsolete()
    return 0 < limit < state.desired_batch and changed == limit


def pick_n(run: _Run, wanted: int) -> ScheduleOutcome:
    """Spec §1.6: downscale, no-op, or schedule (repeating the cycles KubeFleet requeues)."""
    bs = run.bindings
    scheduled = False
    while True:
        run.cycles += 1
        present = len(bs.current)
        if wanted <= present:
            if present - wanted + len(bs.obsolete) > 0:
                _downscale(bs, present - wanted)
            break
        scheduled = True
        if not _scale_cycle(run, wanted):
            break
    final = run.final_evaluation(with_scores=True, tolerate_errors=not scheduled)
    found = len(bs.current)
    ok = found >= wanted
    return ScheduleOutcome(
        bindings=bs.all(),
        decisions=decisions_for(bs, final),
        fulfilled=ok,
        message=fulfilled_message(found) if ok else unfulfilled_message(found),
        explanations=explain(run.clusters, bs, final, ranked=True),
        cycles=run.cycles,
    )


def _fixed_explanation(run: _Run, names: set[str], base: ClusterExplanation) -> ClusterExplanation:
    """PickFixed explains by name list and eligibility only."""
    name = base.cluster
    view = run.views[name]
    if name not in names and not base.selected:
        reason = "cluster is not listed in spec.policy.clusterNames"
        return ClusterExplanation(name, False, reason, binding_state=base.binding_state)
    if view.ineligible_reason is None:
        return base
    status = unschedulable("ClusterEligibility", view.ineligible_reason)
    return ClusterExplanation(
        name,
        base.selected,
        base.reason if base.selected else fixed_invalid_reason(name, view.ineligible_reason),
        binding_state=base.binding_state,
        filter_plugin=status.plugin,
        filter_reason=str(status),
    )


def _fixed_explanations(
    run: _Run, names: Sequence[str], listed: tuple[tuple[str, ...], AbstractSet[str]] | None = None
) -> Explanations:
    """`listed`: the clusters' names and their set, when the caller has them."""
    named = set(names)
    plain = explain(run.clusters, run.bindings, None, False, listed)
    order = listed[0] if listed is not None else list(plain)
    known = listed[1] if listed is not None else None
    return Explanations(order, lambda n: _fixed_explanation(run, named, plain[n]), known)


def pick_fixed(run: _Run, names: Sequence[str]) -> ScheduleOutcome:
    """Spec §1.7: the named clusters, checked only for existence and eligibility."""
    run.cycles = 1
    bs = run.bindings
    if not names:
        return ScheduleOutcome(bs.all(), (), None, "", _fixed_explanations(run, names), 1)
    valid: list[str] = []
    invalid: list[Decision] = []
    missing: list[Decision] = []
    for name in names:
        view = run.views.get(name)
        if view is None:
            missing.append(Decision(name, False, fixed_not_found_reason(name)))
        elif view.ineligible_reason is not None:
            reason = fixed_invalid_reason(name, view.ineligible_reason)
            invalid.append(Decision(name, False, reason))
        else:
            valid.append(name)
    for name in valid:
        bs.pick(name, BindingDecision(picked_reason(name)))
    bs.release_obsolete()
    ok = not invalid and not missing
    return ScheduleOutcome(
        bindings=bs.all(),
        decisions=tuple([Decision(n, True, picked_reason(n)) for n in valid] + invalid + missing),
        fulfilled=ok,
        message=fulfilled_message(len(valid)) if ok else unfulfilled_message(len(valid)),
        explanations=_fixed_explanations(run, names),
    )


@dataclass(frozen=True)
class Inputs:
    """What one `schedule` call reads: the policy (never None), the ResourcePlacement's
    namespace (None for a CRP), the prior bindings, the cluster views, the latest policy
    snapshot's index, and optionally the views sorted by name and an earlier pass's static
    results with the clusters changed since (`reuse`)."""

    policy: Any
    namespace: str | None
    bindings: Sequence[Binding]
    views: Mapping[str, ClusterView]
    policy_index: int
    clusters: list[ClusterView] = field(default_factory=list)
    before: tuple[Statics, Collection[str]] | None = None


def _attempt(inputs: Inputs, profile: Profile, use_fast: bool) -> tuple[ScheduleOutcome, _Run]:
    classified = BindingSet.classify(inputs.bindings, inputs.views, inputs.policy_index)
    info = PlacementInfo(inputs.policy, inputs.namespace)
    run = _Run(info, inputs.views, classified, profile, use_fast, inputs.before, inputs.clusters)
    policy = inputs.policy
    if policy.placement_type == "PickFixed":
        return pick_fixed(run, list(policy.cluster_names or [])), run
    if policy.placement_type == "PickN":
        return pick_n(run, max(policy.number_of_clusters or 0, 0)), run
    return pick_all(run), run


def run_tracked(
    inputs: Inputs, profile: Profile = DEFAULT_PROFILE
) -> tuple[ScheduleOutcome, _Run | None]:
    """`run_policy` with the run it made (None when the plain runner decided)."""
    if not REFERENCE and supports(profile):
        try:
            return _attempt(inputs, profile, use_fast=True)
        except ScheduleError:
            pass
    return _attempt(inputs, profile, use_fast=False)[0], None


def run_policy(
    policy: Any,
    namespace: str | None,
    bindings: Sequence[Binding],
    views: Mapping[str, ClusterView],
    policy_index: int,
    profile: Profile = DEFAULT_PROFILE,
) -> ScheduleOutcome:
    """Schedule a placement policy (None = PickAll) for a placement in `namespace` (None = CRP).
    Incremental first; when a plugin errors there, the plain runner decides (and raises)."""
    policy = policy if policy is not None else PlacementPolicy()
    inputs = Inputs(policy, namespace, bindings, views, policy_index)
    return run_tracked(inputs, profile)[0]


def schedule(
    placement: AnyPlacement,
    bindings: Sequence[Binding],
    views: Mapping[str, ClusterView],
    policy_index: int,
) -> ScheduleOutcome:
    """Schedule one placement against the fleet (the lead's entry point)."""
    namespace = placement.metadata.namespace if isinstance(placement, ResourcePlacement) else None
    return run_policy(placement.spec.policy, namespace or None, bindings, views, policy_index)


def schedule_pick_all(
    policy: Any, bindings: Sequence[Binding], views: Mapping[str, ClusterView], policy_index: int
) -> ScheduleOutcome:
    """PickAll for a cluster-scoped placement (kept for existing callers; prefer `schedule`)."""
    policy = policy if policy is not None else PlacementPolicy()
    if policy.placement_type != "PickAll":
        policy = policy.model_copy(update={"placement_type": "PickAll"})
    return run_policy(policy, None, bindings, views, policy_index)


def schedule_pick_fixed(
    names: Sequence[str],
    bindings: Sequence[Binding],
    views: Mapping[str, ClusterView],
    policy_index: int,
) -> ScheduleOutcome:
    """PickFixed over `names` (kept for existing callers; prefer `schedule`)."""
    policy = PlacementPolicy(placement_type="PickFixed", cluster_names=list(names) or None)
    return run_policy(policy, None, bindings, views, policy_index)


__all__ = [
    "BOUND",
    "SCHEDULED",
    "UNSCHEDULED",
    "Decision",
    "ScheduleError",
    "ScheduleOutcome",
    "run_policy",
    "schedule",
    "schedule_pick_all",
    "schedule_pick_fixed",
]

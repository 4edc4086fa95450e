"""TopologySpreadConstraints plugin: spread picks over the values of a cluster label (§1.3.7).

PostBatch limits a cycle to one new binding while any constraint exists. PreFilter arms, and
the first Filter or Score computes, once per cycle and over every cluster of the fleet, the
binding count of each topology domain (only Scheduled/Bound bindings of the latest policy count)
and, per domain, whether one more binding there would push the skew above maxSkew and by how
much the skew changes. Filter rejects clusters
in DoNotSchedule-violating domains (an already-violated skew blocks every domain, as in
KubeFleet); Score gives -1000 per violated ScheduleAnyway constraint and -change otherwise.
Registered in `profile`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .clusters import ClusterView
from .framework import SUCCESS, ClusterScore, CycleState, Plugin, Status, skip, unschedulable

NAME = "TopologySpreadConstraints"
SCHEDULE_ANYWAY_PENALTY = -1000
_STATE = "topologyspread"


@dataclass(frozen=True)
class DomainVerdict:
    """What one more binding in a domain does to one constraint."""

    violated: bool
    change: int


@dataclass(frozen=True)
class ConstraintState:
    """One constraint with its per-domain verdicts for this cycle."""

    key: str
    max_skew: int
    do_not_schedule: bool
    verdicts: dict[str, DomainVerdict]


def constraints(policy: Any) -> list[Any]:
    """The policy's topology spread constraints ([] when none)."""
    return list(policy.topology_spread_constraints or []) if policy is not None else []


def domain_counts(views: Any, key: str, current: frozenset[str]) -> dict[str, int]:
    """Bindings per value of label `key`; every value some cluster carries is a domain."""
    counts: dict[str, int] = {}
    for view in views:
        value = view.labels.get(key)
        if value is not None:
            counts[value] = counts.get(value, 0) + (1 if view.name in current else 0)
    return counts


def verdicts(counts: dict[str, int], max_skew: int) -> dict[str, DomainVerdict]:
    """Skew change and violation per domain (KubeFleet's smallest/second/largest rule)."""
    if not counts:
        return {}
    ordered = sorted(counts.values())
    smallest, largest = ordered[0], ordered[-1]
    second = ordered[1] if len(ordered) > 1 else smallest
    skew = largest - smallest
    out: dict[str, DomainVerdict] = {}
    for domain, count in counts.items():
        if largest == smallest:
            new_skew, change = skew + 1, 1
        elif count == smallest and smallest != second:
            new_skew, change = skew - 1, -1
        elif count == largest:
            new_skew, change = skew + 1, 1
        else:
            new_skew, change = skew, 0
        out[domain] = DomainVerdict(new_skew > max_skew, change)
    return out


def ordered_specs(policy: Any) -> list[tuple[str, int, bool]]:
    """(topology key, maxSkew, DoNotSchedule) per constraint: DoNotSchedule ones first, each
    group in spec order (the order Filter and Score evaluate them)."""
    specs = [
        (s.topology_key, s.max_skew, s.when_unsatisfiable != "ScheduleAnyway")
        for s in constraints(policy)
    ]
    return [s for s in specs if s[2]] + [s for s in specs if not s[2]]


def violation_reason(c: ConstraintState) -> str:
    return f'violated doNotSchedule topology spread constraint "{c.key}" (max skew {c.max_skew})'


def _ordered(state: CycleState) -> list[ConstraintState]:
    """The constraints with this cycle's domain verdicts, counted on first use (the incremental
    evaluator never asks: it counts the domains itself)."""
    built: list[ConstraintState] | None = state.data[_STATE]
    if built is None:
        built = state.data[_STATE] = []
        for key, max_skew, dns in ordered_specs(state.placement.policy):
            counts = domain_counts(state.clusters, key, state.current)
            built.append(ConstraintState(key, max_skew, dns, verdicts(counts, max_skew)))
    return built


class TopologySpreadConstraintsPlugin(Plugin):
    """PostBatch, PreFilter, Filter, PreScore and Score for topology spread."""

    name = NAME

    def post_batch(self, state: CycleState) -> tuple[int, Status]:
        if not constraints(state.placement.policy):
            return 0, skip(NAME)
        return 1, SUCCESS

    def pre_filter(self, state: CycleState) -> Status:
        specs = constraints(state.placement.policy)
        if not specs:
            return skip(NAME, "no topology spread constraints")
        state.data[_STATE] = None  # the domain verdicts, counted on first use (`_ordered`)
        return SUCCESS

    def filter(self, state: CycleState, view: ClusterView) -> Status:
        for c in _ordered(state):
            if not c.do_not_schedule:
                break
            value = view.labels.get(c.key)
            if value is not None and c.verdicts[value].violated:
                return unschedulable(NAME, violation_reason(c))
        return SUCCESS

    def pre_score(self, state: CycleState) -> Status:
        if _STATE not in state.data:
            return skip(NAME, "no topology spread constraints")
        return SUCCESS

    def score(self, state: CycleState, view: ClusterView) -> tuple[ClusterScore, Status]:
        total = 0
        for c in _ordered(state):
            value = view.labels.get(c.key)
            if value is None:
                continue
            verdict = c.verdicts[value]
            total += SCHEDULE_ANYWAY_PENALTY if verdict.violated else -verdict.change
        return ClusterScore(topology=total), SUCCESS

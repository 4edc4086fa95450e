"""What a scheduling run returns: bindings, ClusterDecisions, the Scheduled condition and a
per-cluster explanation, plus KubeFleet's decision reason and condition message strings.

Built by `cycle`; read by `reconciler.placement` (bindings, decisions, condition), the status
documents and `gitfleet explain` (explanations).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from reconciler.state import Binding
from reconciler.status import Cond

SCHEDULED, BOUND, UNSCHEDULED = "Scheduled", "Bound", "Unscheduled"
FULFILLED, UNFULFILLED = "SchedulingPolicyFulfilled", "SchedulingPolicyUnfulfilled"
UNSCHEDULABLE = "ClusterUnschedulable"
MAX_UNSELECTED_DECISIONS = 20
MAX_DECISIONS = 1000


@dataclass(frozen=True)
class Decision:
    """A ClusterDecision: picked or not, why, and the scores when the cluster was scored."""

    cluster: str
    selected: bool
    reason: str
    affinity_score: int | None = None
    topology_score: int | None = None


@dataclass(frozen=True)
class ClusterExplanation:
    """Everything the scheduler knows about one cluster for one placement (for `explain`)."""

    cluster: str
    selected: bool
    """The cluster has a Scheduled or Bound binding of the latest policy after this run."""
    reason: str
    """One sentence: the decision reason, or why the cluster was not picked."""
    binding_state: str | None = None
    """Scheduled, Bound, Unscheduled, or None when the placement has no binding there."""
    already_selected: bool = False
    """SamePlacementAffinity returned ClusterAlreadySelected in the final evaluation."""
    filter_plugin: str | None = None
    """The first Filter plugin that rejected the cluster (even a selected one: a kept binding
    whose cluster no longer passes an earlier filter is reported, as KubeFleet does)."""
    filter_reason: str | None = None
    """KubeFleet's status string, e.g. `ClusterUnschedulable, taint ... cannot be tolerated`."""
    affinity_score: int | None = None
    topology_score: int | None = None
    obsolete_score: int | None = None
    rank: int | None = None
    """PickN: 1-based place in pick order (selected clusters by stored score first, then the
    scored candidates); None for filtered clusters and other placement types."""


@dataclass(frozen=True)
class ScheduleOutcome:
    """The result of scheduling one placement. `fulfilled` is None when nothing was decided."""

    bindings: tuple[Binding, ...]
    decisions: tuple[Decision, ...]
    fulfilled: bool | None
    message: str
    explanations: Mapping[str, ClusterExplanation] = field(default_factory=dict)
    cycles: int = 1
    """Scheduling cycles run (KubeFleet requeues; gitfleet runs them to convergence)."""

    @property
    def reason(self) -> str:
        return FULFILLED if self.fulfilled else UNFULFILLED

    def condition(self) -> Cond | None:
        """The placement's Scheduled condition (None: nothing was decided)."""
        if self.fulfilled is None:
            return None
        return Cond("Scheduled", "True" if self.fulfilled else "False", self.reason, self.message)


def picked_reason(cluster: str, affinity: int | None = None, topology: int | None = None) -> str:
    """Reason of a selected decision; PickFixed has no scores."""
    if affinity is None or topology is None:
        return f'Successfully scheduled resources for placement in "{cluster}": picked by scheduling policy'
    return (
        f'Successfully scheduled resources for placement in "{cluster}" '
        f"(affinity score: {affinity}, topology spread score: {topology}): picked by scheduling policy"
    )


def not_picked_reason(cluster: str, affinity: int, topology: int) -> str:
    return (
        f'Cluster "{cluster}" does not score high enough '
        f"(affinity score: {affinity}, topology spread score: {topology})"
    )


def fixed_invalid_reason(cluster: str, why: str) -> str:
    return f'Cluster "{cluster}" is not eligible for resource placement yet: {why}'


def fixed_not_found_reason(cluster: str) -> str:
    return f'Specified cluster "{cluster}" is not found'


def fulfilled_message(found: int) -> str:
    return (
        f"found all cluster needed as specified by the scheduling policy, found {found} cluster(s)"
    )


def unfulfilled_message(found: int) -> str:
    return (
        "could not find all clusters needed as specified by the scheduling policy, "
        f"found {found} cluster(s) instead"
    )

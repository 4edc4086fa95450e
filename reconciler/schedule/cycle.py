"""One scheduling cycle for a placement: KubeFleet's PickAll and PickFixed (spec §1.2, §1.5, §1.7).

Takes the placement's prior bindings and the cluster views, classifies the bindings, runs the
filters in the profile's order and returns the new bindings, the scheduling decisions and the
policy snapshot's Scheduled condition. PickN, scores and topology spread come with the scheduler
issue. Pure; called by `reconciler.pass_`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from reconciler.state import Binding

from . import clusteraffinity, tainttoleration
from .clusters import ClusterView
from .errors import ScheduleError

SCHEDULED, BOUND, UNSCHEDULED = "Scheduled", "Bound", "Unscheduled"
MAX_UNSELECTED_DECISIONS = 20
UNSCHEDULABLE = "ClusterUnschedulable"
FULFILLED, UNFULFILLED = "SchedulingPolicyFulfilled", "SchedulingPolicyUnfulfilled"


@dataclass(frozen=True)
class Decision:
    """A ClusterDecision: picked or not, and why."""

    cluster: str
    selected: bool
    reason: str


@dataclass(frozen=True)
class ScheduleOutcome:
    """The result of one cycle. `fulfilled` is None when the cycle decided nothing."""

    bindings: tuple[Binding, ...]
    decisions: tuple[Decision, ...]
    fulfilled: bool | None
    message: str

    @property
    def reason(self) -> str:
        return FULFILLED if self.fulfilled else UNFULFILLED


@dataclass
class _Classified:
    unscheduled: dict[str, Binding]
    obsolete: dict[str, Binding]
    current: dict[str, Binding]
    """Scheduled or Bound bindings of the latest policy snapshot."""


def _mark_unscheduled(b: Binding) -> Binding:
    return replace(b, state=UNSCHEDULED, previous_state=b.state)


def _classify(
    bindings: Sequence[Binding], views: Mapping[str, ClusterView], policy_index: int
) -> tuple[_Classified, list[Binding]]:
    """Spec §1.2; dangling bindings come back already marked Unscheduled."""
    out = _Classified({}, {}, {})
    dangling: list[Binding] = []
    for b in bindings:
        view = views.get(b.cluster)
        if b.state == UNSCHEDULED:
            out.unscheduled[b.cluster] = b
        elif view is None or view.cluster.metadata.deletion_timestamp:
            dangling.append(_mark_unscheduled(b))
        elif b.policy_index != policy_index:
            out.obsolete[b.cluster] = b
        else:
            out.current[b.cluster] = b
    return out, dangling


def _pick(cls: _Classified, cluster: str, policy_index: int) -> tuple[Binding, str]:
    """The binding for a picked cluster and how it came about: created, patched or restored."""
    if cluster in cls.obsolete:
        return replace(cls.obsolete.pop(cluster), policy_index=policy_index), "patched"
    if cluster in cls.unscheduled:
        old = cls.unscheduled.pop(cluster)
        state = old.previous_state or SCHEDULED
        return replace(old, state=state, previous_state=None, policy_index=policy_index), "restored"
    return Binding(cluster=cluster, state=SCHEDULED, policy_index=policy_index), "created"


def _filter_reason(view: ClusterView, terms: list[Any], tolerations: list[Any]) -> str | None:
    """The first failing filter, in the default profile's order (spec §1.3)."""
    reason = clusteraffinity.filter_cluster(view, terms)
    if reason is None:
        reason = view.ineligible_reason
    if reason is None:
        reason = tainttoleration.filter_cluster(view, tolerations)
    return reason


def picked_reason(cluster: str, scored: bool) -> str:
    if not scored:
        return f'Successfully scheduled resources for placement in "{cluster}": picked by scheduling policy'
    return (
        f'Successfully scheduled resources for placement in "{cluster}" '
        "(affinity score: 0, topology spread score: 0): picked by scheduling policy"
    )


def fulfilled_message(found: int) -> str:
    return (
        f"found all cluster needed as specified by the scheduling policy, found {found} cluster(s)"
    )


def unfulfilled_message(found: int) -> str:
    return (
        "could not find all clusters needed as specified by the scheduling policy, "
        f"found {found} cluster(s) instead"
    )


def schedule_pick_all(
    policy: Any, bindings: Sequence[Binding], views: Mapping[str, ClusterView], policy_index: int
) -> ScheduleOutcome:
    """Spec §1.5. Raises ScheduleError when a plugin cannot evaluate (the cycle aborts)."""
    cls, dangling = _classify(bindings, views, policy_index)
    terms = clusteraffinity.required_terms(policy)
    tolerations = list(policy.tolerations or []) if policy is not None else []
    picked: list[Binding] = []
    filtered: list[Decision] = []
    for name, view in sorted(views.items()):
        reason = _filter_reason(view, terms, tolerations)
        if reason is not None:
            if name not in cls.current:  # a kept binding is listed once, as selected
                filtered.append(Decision(name, False, f"{UNSCHEDULABLE}, {reason}"))
        elif name not in cls.current:
            picked.append(_pick(cls, name, policy_index)[0])
    leftovers = [_mark_unscheduled(b) for b in cls.obsolete.values()]
    kept = sorted(cls.current.values(), key=lambda b: b.cluster)
    selected = picked + kept
    decisions = [Decision(b.cluster, True, picked_reason(b.cluster, True)) for b in selected]
    decisions += filtered[:MAX_UNSELECTED_DECISIONS]
    all_bindings = selected + leftovers + dangling + list(cls.unscheduled.values())
    return ScheduleOutcome(
        bindings=tuple(sorted(all_bindings, key=lambda b: b.cluster)),
        decisions=tuple(decisions),
        fulfilled=True,
        message=fulfilled_message(len(selected)),
    )


def schedule_pick_fixed(
    names: Sequence[str],
    bindings: Sequence[Binding],
    views: Mapping[str, ClusterView],
    policy_index: int,
) -> ScheduleOutcome:
    """Spec §1.7: named clusters, checked only for existence and eligibility."""
    cls, dangling = _classify(bindings, views, policy_index)
    if not names:
        return ScheduleOutcome(tuple(bindings), (), None, "")
    valid, invalid, missing = [], [], []
    for name in names:
        view = views.get(name)
        if view is None:
            missing.append(Decision(name, False, f'Specified cluster "{name}" is not found'))
        elif view.ineligible_reason is not None:
            text = f'Cluster "{name}" is not eligible for resource placement yet: '
            invalid.append(Decision(name, False, text + view.ineligible_reason))
        else:
            valid.append(name)
    picked = [_pick(cls, n, policy_index)[0] for n in valid if n not in cls.current]
    leftovers = [_mark_unscheduled(b) for b in cls.obsolete.values()]
    selected = picked + list(cls.current.values())
    decisions = [Decision(n, True, picked_reason(n, False)) for n in valid]
    ok = not invalid and not missing
    all_bindings = selected + leftovers + dangling + list(cls.unscheduled.values())
    return ScheduleOutcome(
        bindings=tuple(sorted(all_bindings, key=lambda b: b.cluster)),
        decisions=tuple(decisions + invalid + missing),
        fulfilled=ok,
        message=fulfilled_message(len(valid)) if ok else unfulfilled_message(len(valid)),
    )


__all__ = [
    "Decision",
    "ScheduleError",
    "ScheduleOutcome",
    "schedule_pick_all",
    "schedule_pick_fixed",
]

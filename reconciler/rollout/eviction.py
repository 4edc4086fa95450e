"""ClusterResourcePlacementEviction processing with disruption budgets (spec/kubefleet.md §5).

Evictions are processed one at a time in name order, each seeing the bindings the previous one
left. Validation (Valid False is terminal): placement missing, PickFixed, no or several bindings
for the cluster. Execution in KubeFleet's order: resources not yet placed -> blocked; failed or
diffReported binding -> allowed; no budget -> allowed; PickAll budget with maxUnavailable or a
percentage minAvailable -> blocked (misconfigured); else the budget check over all the placement's
bindings (allowed iff allowed-disruptions >= 1). An allowed eviction deletes the binding (its
agent then prunes the objects). A decided eviction (Valid False, or any Executed) is terminal: its
status file is carried over byte for byte while its spec is unchanged; create a new eviction to
retry. Pure; called by the pass's rollout stage (`reconciler.rollstage`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import yaml

from gitfleet.api import ClusterResourcePlacementDisruptionBudget, ClusterResourcePlacementEviction
from gitfleet.api.intstr import ceil_scale
from gitfleet.load.model import FleetSnapshot
from reconciler.output import placement_key, yaml_bytes
from reconciler.priorparse import parse_own
from reconciler.rollout.model import BOUND, UNSCHEDULED, PlacementView
from reconciler.status import Cond, timed

CRP_KIND = "ClusterResourcePlacement"
INVALID = "ClusterResourcePlacementEvictionInvalid"
VALID = "ClusterResourcePlacementEvictionValid"
EXECUTED = "ClusterResourcePlacementEvictionExecuted"
NOT_EXECUTED = "ClusterResourcePlacementEvictionNotExecuted"

MSG_NOT_FOUND = "Failed to find ClusterResourcePlacement targeted by eviction"
MSG_DELETING = "Found deleting ClusterResourcePlacement targeted by eviction"
MSG_PICK_FIXED = "Found ClusterResourcePlacement with PickFixed placement type targeted by eviction"
MSG_MANY = "Found more than one scheduler decision for placement in cluster targeted by eviction"
MSG_NO_BINDING = "Failed to find scheduler decision for placement in cluster targeted by eviction"
MSG_VALID = "Eviction is valid"
MSG_BEING_REMOVED = (
    "Eviction is allowed, resources propagated by placement is currently being removed from "
    "cluster targeted by eviction"
)
MSG_NOT_PLACED = "Eviction is blocked, placement has not propagated resources to target cluster yet"
MSG_FAILED = "Eviction is allowed, placement has failed"
MSG_NO_PDB = "Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified"
MSG_MISCONFIGURED = (
    "Eviction is blocked by misconfigured ClusterResourcePlacementDisruptionBudget, either "
    "MaxUnavailable is specified or MinAvailable is specified as a percentage for PickAll "
    "ClusterResourcePlacement"
)
MSG_ALLOWED = (
    "Eviction is allowed by specified ClusterResourcePlacementDisruptionBudget, "
    "availablePlacements: {a}, totalPlacements: {t}"
)
MSG_BLOCKED = (
    "Eviction is blocked by specified ClusterResourcePlacementDisruptionBudget, "
    "availablePlacements: {a}, totalPlacements: {t}"
)


@dataclass(frozen=True)
class Verdict:
    """One eviction's decision: Valid, and Executed when valid."""

    valid: Cond
    executed: Cond | None = None
    evict: bool = False
    """True when the binding is deleted now."""


@dataclass(frozen=True)
class EvictionOutcome:
    deleted: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """placement key -> clusters whose bindings the evictions deleted this pass."""
    files: Mapping[str, bytes] = field(default_factory=dict)
    """`status/evictions/<name>.yaml` of every eviction."""


def _invalid(message: str) -> Verdict:
    return Verdict(Cond("Valid", "False", INVALID, message))


def _executed(ok: bool, message: str) -> Verdict:
    valid = Cond("Valid", "True", VALID, MSG_VALID)
    executed = Cond(
        "Executed", "True" if ok else "False", EXECUTED if ok else NOT_EXECUTED, message
    )
    return Verdict(valid, executed, evict=ok)


def budget_allowed(
    budget: ClusterResourcePlacementDisruptionBudget, view: PlacementView
) -> tuple[int, int, int]:
    """§5.2 step 6: (allowed disruptions, available, total) over all bindings of the placement."""
    available = sum(
        1
        for b in view.bindings
        if (c := b.condition("Available")) is not None and c.status == "True"
    )
    total = len(view.bindings)
    pick_all = view.placement_type == "PickAll"
    desired = 0 if pick_all else view.number_of_clusters or 0
    spec = budget.spec
    if spec.max_unavailable is not None:
        allowed = ceil_scale(spec.max_unavailable, desired) - (total - available)
    else:
        minimum = spec.min_available if spec.min_available is not None else 0
        floor = int(minimum) if pick_all else ceil_scale(minimum, desired)
        allowed = available - floor
    return allowed, available, total


def judge(
    eviction: ClusterResourcePlacementEviction,
    view: PlacementView | None,
    budget: ClusterResourcePlacementDisruptionBudget | None,
) -> Verdict:
    """§5.2: validation, then execution in KubeFleet's order."""
    if view is None:
        return _invalid(MSG_NOT_FOUND)
    if view.placement_type == "PickFixed":
        return _invalid(MSG_PICK_FIXED)
    mine = [b for b in view.bindings if b.cluster == eviction.spec.cluster_name]
    if len(mine) > 1:
        return _invalid(MSG_MANY)
    if not mine:
        return _invalid(MSG_NO_BINDING)
    binding = mine[0]
    if binding.deleting:
        return replace(_executed(True, MSG_BEING_REMOVED), evict=False)
    placed = binding.state == BOUND or (
        binding.state == UNSCHEDULED and binding.previous_state == BOUND
    )
    if not placed:
        return _executed(False, MSG_NOT_PLACED)
    if binding.failed or binding.diff_reported:
        return _executed(True, MSG_FAILED)
    if budget is None:
        return _executed(True, MSG_NO_PDB)
    if view.placement_type == "PickAll" and (
        budget.spec.max_unavailable is not None or isinstance(budget.spec.min_available, str)
    ):
        return _executed(False, MSG_MISCONFIGURED)
    allowed, available, total = budget_allowed(budget, view)
    template = MSG_ALLOWED if allowed > 0 else MSG_BLOCKED
    return _executed(allowed > 0, template.format(a=available, t=total))


def _spec(eviction: ClusterResourcePlacementEviction) -> dict[str, Any]:
    dumped: dict[str, Any] = eviction.spec.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


def _decided(prior: bytes | None, eviction: ClusterResourcePlacementEviction) -> bool:
    """A terminal eviction (same spec): Valid False, or any Executed condition."""
    if not prior:
        return False
    try:
        doc = parse_own(prior) or {}
        conds = (doc.get("status") or {}).get("conditions") or []
        spec = doc.get("spec")
    except (yaml.YAMLError, AttributeError):
        return False
    if spec != _spec(eviction):
        return False
    by_type = {c.get("type"): c.get("status") for c in conds if isinstance(c, dict)}
    return by_type.get("Valid") == "False" or "Executed" in by_type


def _status_doc(
    eviction: ClusterResourcePlacementEviction, verdict: Verdict | None, now: datetime
) -> bytes:
    doc: dict[str, Any] = eviction.model_dump(by_alias=True, exclude_none=True, mode="json")
    doc.pop("status", None)
    doc["metadata"] = {**doc.get("metadata", {}), "generation": 1}
    conds = (
        []
        if verdict is None
        else [verdict.valid, *([verdict.executed] if verdict.executed else [])]
    )
    dumped = [
        c.model_dump(by_alias=True, exclude_none=True, mode="json")
        for c in timed(conds, (), 1, now)
    ]
    doc["status"] = {"conditions": dumped} if dumped else {}
    return yaml_bytes(doc)


def eviction_path(name: str) -> str:
    return f"status/evictions/{name}.yaml"


def _deleting(view: PlacementView, cluster: str) -> PlacementView:
    """The view after the eviction deleted the cluster's binding: it stays, deleting, without
    conditions (deletion bumps the binding's generation), for the evictions after it."""
    bindings = tuple(
        replace(b, deleting=True, conditions=()) if b.cluster == cluster else b
        for b in view.bindings
    )
    return replace(view, bindings=bindings)


def process_evictions(
    fleet: FleetSnapshot,
    views: Mapping[str, PlacementView],
    prior_output: Mapping[str, bytes],
    now: datetime,
) -> EvictionOutcome:
    """Every eviction, in name order; `views` are the placements the pass rolls out (a placement
    held because its inputs failed to load is absent: its evictions wait, undecided)."""
    current = {k: v for k, v in views.items() if v.kind == CRP_KIND}
    deleted: dict[str, set[str]] = {}
    files: dict[str, bytes] = {}
    for name, eviction in sorted(fleet.evictions.items()):
        path = eviction_path(name)
        prior = prior_output.get(path)
        if prior is not None and _decided(prior, eviction):
            files[path] = prior
            continue
        target = eviction.spec.placement_name
        key = placement_key(target)
        if target in fleet.placements and key not in current:
            files[path] = prior if prior is not None else _status_doc(eviction, None, now)
            continue
        view = current.get(key)
        verdict = judge(eviction, view, fleet.budgets.get(target))
        files[path] = _status_doc(eviction, verdict, now)
        if verdict.evict and view is not None:
            cluster = eviction.spec.cluster_name
            deleted.setdefault(key, set()).add(cluster)
            current[key] = _deleting(view, cluster)
    return EvictionOutcome({k: frozenset(v) for k, v in deleted.items()}, files)

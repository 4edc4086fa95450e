"""ClusterAffinity plugin: required terms filter (spec §1.3.1), preferred terms score (§1.3.6).

Required terms are OR-ed; inside a term the label selector and the property selector are AND-ed;
properties come from the cluster's reported status (`properties`, `resourceUsage`) and compare as
Kubernetes quantities. Preferred terms add their weight when they match; a term with a property
sorter interpolates its weight between the fleet-wide min and max of the property (computed over
every cluster, filtered or not) and rounds half away from zero like Go's `math.Round`.
Registered in `profile`; the framework runs it.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from gitfleet.api.quantity import Quantity, QuantityError, parse_quantity

from .clusters import ClusterView
from .errors import ScheduleError
from .framework import SUCCESS, ZERO, ClusterScore, CycleState, Plugin, Status, error, skip
from .framework import unschedulable as _unschedulable

NAME = "ClusterAffinity"
FILTER_REASON = "cluster does not match with any of the required cluster affinity terms"
RESOURCE_PREFIX = "resources.kubernetes-fleet.io/"
_CAPACITY_FIELDS = {"total": "capacity", "allocatable": "allocatable", "available": "available"}
_MINMAX = "clusteraffinity/minmax"


@lru_cache(maxsize=8192)
def _parse(text: str) -> Quantity | str:
    """Parsed quantity, or the parse error message (cached: fleets repeat values a lot)."""
    try:
        return parse_quantity(text)
    except QuantityError as exc:
        return str(exc)


def _quantity(text: Any, what: str) -> Quantity:
    parsed = _parse(str(text))
    if isinstance(parsed, str):
        raise ScheduleError(f"{what}: cannot parse {text!r} as a quantity: {parsed}")
    return parsed


def property_value(view: ClusterView, name: str) -> Quantity | None:
    """The value of property `name` on the cluster, None when it has none (spec §1.3.1);
    memoised on the view (errors are not, so they are raised every time)."""
    key = "property:" + name
    memo = view.memo
    if key not in memo:
        memo[key] = _property_value(view, name)
    value: Quantity | None = memo[key]
    return value


def _property_value(view: ClusterView, name: str) -> Quantity | None:
    status = view.cluster.status
    if name.startswith(RESOURCE_PREFIX):
        parts = name[len(RESOURCE_PREFIX) :].split("-")
        if len(parts) != 2 or not all(parts):
            raise ScheduleError(f"invalid resource property name {name!r}")
        capacity_type, resource = parts
        if capacity_type not in _CAPACITY_FIELDS:
            raise ScheduleError(f"invalid capacity type {capacity_type!r} in property {name!r}")
        usage = status.resource_usage if status is not None else None
        values = getattr(usage, _CAPACITY_FIELDS[capacity_type], None) if usage else None
        if not values or resource not in values:
            return None
        return _quantity(values[resource], f"property {name} of cluster {view.name}")
    props = status.properties if status is not None else None
    if not props or name not in props:
        return None
    return _quantity(props[name].value, f"property {name} of cluster {view.name}")


_OPERATORS = {
    "Eq": lambda a, b: a == b,
    "Ne": lambda a, b: a != b,
    "Gt": lambda a, b: a > b,
    "Ge": lambda a, b: a >= b,
    "Lt": lambda a, b: a < b,
    "Le": lambda a, b: a <= b,
}


def expression_holds(view: ClusterView, expr: Any) -> bool:
    """One property selector expression on the cluster (False when it lacks the property)."""
    if len(expr.values) != 1:
        raise ScheduleError(f"property selector {expr.name!r} must have exactly one value")
    wanted = _quantity(expr.values[0], f"property selector {expr.name!r} value")
    compare = _OPERATORS.get(expr.operator)
    if compare is None:
        raise ScheduleError(f"invalid property selector operator {expr.operator!r}")
    actual = property_value(view, expr.name)
    return actual is not None and bool(compare(actual, wanted))


def term_matches(view: ClusterView, term: Any) -> bool:
    """One required ClusterSelectorTerm: label selector AND property selector."""
    if term.label_selector is not None and not term.label_selector.matches(view.labels):
        return False
    selector = term.property_selector
    if selector is None or not selector.match_expressions:
        return True
    return all(expression_holds(view, e) for e in selector.match_expressions)


def _cluster_affinity(policy: Any) -> Any:
    affinity = policy.affinity if policy is not None else None
    return affinity.cluster_affinity if affinity is not None else None


def required_terms(policy: Any) -> list[Any]:
    """The required cluster selector terms of a policy ([] = the filter is skipped)."""
    ca = _cluster_affinity(policy)
    required = ca.required_during_scheduling_ignored_during_execution if ca else None
    return list(required.cluster_selector_terms or []) if required is not None else []


def preferred_terms(policy: Any) -> list[Any]:
    """The preferred (weighted) terms of a policy ([] = scoring is skipped)."""
    ca = _cluster_affinity(policy)
    return list(ca.preferred_during_scheduling_ignored_during_execution or []) if ca else []


def go_round(x: float) -> int:
    """Go's math.Round: halves round away from zero (2.5 -> 3, -2.5 -> -3)."""
    whole = math.trunc(x)
    if abs(x - whole) >= 0.5:
        whole += 1 if x > 0 else -1
    return int(whole)


def fleet_min_max(views: list[ClusterView], name: str) -> tuple[Quantity, Quantity] | None:
    """Min and max of a property over every cluster that has it (None when none has it)."""
    values = [v for v in (property_value(view, name) for view in views) if v is not None]
    return (min(values), max(values)) if values else None


def interpolate(
    value: Quantity, bounds: tuple[Quantity, Quantity] | None, order: str, weight: int
) -> int:
    """The weight share of a cluster for a property sorter (spec §1.3.6)."""
    if bounds is None:
        raise ScheduleError("no min/max observed for a property the cluster has")
    low, high = (b.to_float() for b in bounds)
    v = value.to_float()
    if not (math.isfinite(low) and math.isfinite(high)) or low > high or not low <= v <= high:
        raise ScheduleError(f"property value {value} is outside the observed range")
    if low == high:
        return 0
    share = (v - low) / (high - low)
    if order == "Ascending":
        share = 1 - share
    return go_round(share * weight)


def term_score(view: ClusterView, term: Any, bounds: Any) -> int:
    """The score one preferred term gives a cluster."""
    preference = term.preference
    if term.weight == 0 or not preference.matches_labels(view.labels):
        return 0
    sorter = preference.property_sorter
    if sorter is None:
        return int(term.weight)
    value = property_value(view, sorter.name)
    if value is None:
        return 0
    return interpolate(value, bounds, sorter.sort_order, term.weight)


class ClusterAffinityPlugin(Plugin):
    """Filter on required terms; score on preferred terms."""

    name = NAME
    static = True

    def pre_filter(self, state: CycleState) -> Status:
        if not required_terms(state.placement.policy):
            return skip(NAME, "no required cluster affinity terms")
        return SUCCESS

    def filter(self, state: CycleState, view: ClusterView) -> Status:
        try:
            if any(term_matches(view, t) for t in required_terms(state.placement.policy)):
                return SUCCESS
        except ScheduleError as exc:
            return error(NAME, str(exc))
        return _unschedulable(NAME, FILTER_REASON)

    def pre_score(self, state: CycleState) -> Status:
        terms = preferred_terms(state.placement.policy)
        if not terms:
            return skip(NAME, "no preferred cluster affinity terms")
        if _MINMAX in state.memo:
            return SUCCESS
        bounds: dict[str, Any] = {}
        try:
            for term in terms:
                sorter = term.preference.property_sorter
                if sorter is not None and sorter.name not in bounds:
                    bounds[sorter.name] = fleet_min_max(list(state.clusters), sorter.name)
        except ScheduleError as exc:
            return error(NAME, str(exc))
        state.memo[_MINMAX] = bounds
        return SUCCESS

    def score(self, state: CycleState, view: ClusterView) -> tuple[ClusterScore, Status]:
        bounds = state.memo.get(_MINMAX, {})
        total = 0
        try:
            for term in preferred_terms(state.placement.policy):
                sorter = term.preference.property_sorter
                total += term_score(view, term, bounds.get(sorter.name) if sorter else None)
        except ScheduleError as exc:
            return ZERO, error(NAME, str(exc))
        return ClusterScore(affinity=total), SUCCESS

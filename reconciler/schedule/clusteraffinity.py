"""ClusterAffinity, required terms: the filter of KubeFleet spec §1.3.1.

Terms are OR-ed; inside a term the label selector and the property selector are AND-ed.
Property values come from the cluster's reported status (`properties`, `resourceUsage`) and are
compared as Kubernetes quantities. Called by `cycle` for PickAll (and later PickN).
"""

from __future__ import annotations

from typing import Any

from gitfleet.api.quantity import Quantity, parse_quantity

from .clusters import ClusterView
from .errors import ScheduleError

FILTER_REASON = "cluster does not match with any of the required cluster affinity terms"
RESOURCE_PREFIX = "resources.kubernetes-fleet.io/"
_CAPACITY_FIELDS = {"total": "capacity", "allocatable": "allocatable", "available": "available"}


def _quantity(text: Any, what: str) -> Quantity:
    try:
        return parse_quantity(str(text))
    except ValueError as exc:
        raise ScheduleError(f"{what}: cannot parse {text!r} as a quantity: {exc}") from None


def property_value(view: ClusterView, name: str) -> Quantity | None:
    """The value of property `name` on the cluster, None when it has none (spec §1.3.1)."""
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


def _expression_holds(view: ClusterView, expr: Any) -> bool:
    if len(expr.values) != 1:
        raise ScheduleError(f"property selector {expr.name!r} must have exactly one value")
    wanted = _quantity(expr.values[0], f"property selector {expr.name!r} value")
    compare = _OPERATORS.get(expr.operator)
    if compare is None:
        raise ScheduleError(f"invalid property selector operator {expr.operator!r}")
    actual = property_value(view, expr.name)
    return actual is not None and bool(compare(actual, wanted))


def term_matches(view: ClusterView, term: Any) -> bool:
    """One ClusterSelectorTerm: label selector AND property selector."""
    if term.label_selector is not None and not term.label_selector.matches(view.labels):
        return False
    selector = term.property_selector
    if selector is None or not selector.match_expressions:
        return True
    return all(_expression_holds(view, e) for e in selector.match_expressions)


def required_terms(policy: Any) -> list[Any]:
    """The required cluster selector terms of a policy ([] = the filter is skipped)."""
    affinity = policy.affinity if policy is not None else None
    cluster_affinity = affinity.cluster_affinity if affinity is not None else None
    required = (
        cluster_affinity.required_during_scheduling_ignored_during_execution
        if cluster_affinity is not None
        else None
    )
    return list(required.cluster_selector_terms or []) if required is not None else []


def filter_cluster(view: ClusterView, terms: list[Any]) -> str | None:
    """None when the cluster passes, else the filter reason."""
    if not terms or any(term_matches(view, t) for t in terms):
        return None
    return FILTER_REASON

"""Cluster classes: which clusters the static plugins of the default profile cannot tell apart.

For one placement, the static Filter plugins (ClusterAffinity required terms, ClusterEligibility,
NamespaceAffinity, TaintToleration) read of a cluster only its eligibility verdict, its taints,
its namespaces, the labels the required terms name and the properties their property selectors
name; the ClusterAffinity score reads only the labels the preferred terms name and the properties
their sorters name (the fleet-wide min/max is the same for every cluster). Clusters with equal
class keys therefore get equal statuses and scores, so `incremental` runs the plugins once per
class. A property that cannot be read raises `ScheduleError` (the caller then uses the plain
runner). Tainted clusters and, for ResourcePlacements, every cluster form a class of their own.
`filter_classes` gives every cluster's filter class once per pass for all placements whose
required terms read the same labels.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

from .clusteraffinity import expression_holds, preferred_terms, property_value, required_terms
from .clusters import ClusterView
from .framework import PlacementInfo
from .topologyspreadconstraints import constraints

ClassKey = Callable[[ClusterView], Hashable]


def selector_keys(selector: Any) -> list[str]:
    """The label keys a LabelSelector reads (None selector: none)."""
    if selector is None:
        return []
    keys = list(selector.match_labels or {})
    keys += [req.key for req in selector.match_expressions or []]
    return keys


def schedule_label_keys(policy: Any) -> frozenset[str]:
    """Every cluster label key the default profile reads for `policy`: the selectors of its
    required and preferred affinity terms and its spread constraints' topology keys."""
    keys = {k for t in required_terms(policy) for k in selector_keys(t.label_selector)}
    keys.update(
        k for t in preferred_terms(policy) for k in selector_keys(t.preference.label_selector)
    )
    keys.update(c.topology_key for c in constraints(policy))
    return frozenset(keys)


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(items)))


def _reader(labels: tuple[str, ...], props: tuple[str, ...]) -> ClassKey:
    """A key of the named label values and property values."""

    def key(view: ClusterView) -> Hashable:
        got = view.labels.get
        return (
            tuple(got(k) for k in labels),
            tuple(property_value(view, p) for p in props),
        )

    return key


def _filter_parts(placement: PlacementInfo) -> tuple[tuple[str, ...], list[Any], bool]:
    """The label keys the required terms read, their property expressions, and whether every
    cluster is a class of its own (ResourcePlacements)."""
    terms = required_terms(placement.policy)
    labels = _unique(k for t in terms for k in selector_keys(t.label_selector))
    exprs = [
        e
        for t in terms
        if t.property_selector is not None
        for e in t.property_selector.match_expressions or []
    ]
    return labels, exprs, placement.namespace is not None


def filter_class(placement: PlacementInfo) -> ClassKey:
    """Class key for the static Filter plugins of the default profile: the label values the
    required terms read and the verdict of every property expression they hold."""
    labels, exprs, per_cluster = _filter_parts(placement)

    def key(view: ClusterView) -> Hashable:
        own = view.name if per_cluster or view.cluster.spec.taints else None
        got = view.labels.get
        holds = tuple([expression_holds(view, e) for e in exprs]) if exprs else ()
        return (own, view.ineligible_reason, tuple([got(k) for k in labels]), holds)

    return key


Classes = tuple[list[ClusterView], list[int]]
"""Filter classes of a cluster list: the first cluster of each class (in list order), and each
cluster's class (its index in that first list)."""
_made: tuple[Sequence[ClusterView] | None, dict[Hashable, Classes]] = (None, {})
"""The cluster list (one pass's fleet) the classes below were made for, and its classes per
(label keys read, own class per cluster) (`filter_classes`)."""


def filter_classes(placement: PlacementInfo, clusters: Sequence[ClusterView]) -> Classes:
    """The classes `filter_class(placement)` makes of `clusters`. Placements whose required
    terms read the same labels and no property share them: made once per cluster list (the
    same list object, one pass's fleet), not once per placement."""
    global _made
    labels, exprs, per_cluster = _filter_parts(placement)
    if exprs:
        return _classes(filter_class(placement), clusters)
    made = _made
    if made[0] is not clusters:
        made = _made = (clusters, {})
    found = made[1].get((labels, per_cluster))
    if found is None:
        found = made[1][(labels, per_cluster)] = _classes(filter_class(placement), clusters)
    return found


def _classes(key_of: ClassKey, clusters: Sequence[ClusterView]) -> Classes:
    firsts: list[ClusterView] = []
    numbers: dict[Hashable, int] = {}
    index = []
    for view in clusters:
        key = key_of(view)
        number = numbers.get(key)
        if number is None:
            number = numbers[key] = len(firsts)
            firsts.append(view)
        index.append(number)
    return firsts, index


def score_class(placement: PlacementInfo) -> ClassKey:
    """Class key for the static Score plugins (ClusterAffinity preferred terms)."""
    terms = preferred_terms(placement.policy)
    labels = _unique(k for t in terms for k in selector_keys(t.preference.label_selector))
    props = _unique(
        t.preference.property_sorter.name for t in terms if t.preference.property_sorter
    )
    return _reader(labels, props)

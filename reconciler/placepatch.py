"""A remembered plan patched for the clusters that changed since it was made (issue 18, the
incremental pass): what `placememo` needs to tell a relabel that only the overrides read from
one that scheduling or governance reads, and the plan's per-cluster override results with only
the relabelled clusters' redone.

`plain_keys` are the cluster label keys a placement's scheduling (affinity and spread terms of
the default profile) and governance (every Tenant's cluster selector) read; its overrides read
the rest of `placememo.label_keys` and, of a cluster, nothing but its name and labels
(`manifests.OverrideRenderer`). So a cluster whose row changed only in keys outside these moves
no binding, decision or tenant verdict: when it is one the placement targets, its override
result is made again (`rerendered`) and every other cluster's is kept by identity. `named`
gives the clusters a bindings tuple names (and those it targets), remembered by the tuple for
two passes (a reused plan hands on the very tuple). Called by `reconciler.placememo`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reconciler.manifests import ClusterManifests, OverrideRenderer
from reconciler.placement import AnyPlacement, PassInputs, PlacementPlan
from reconciler.schedule.classes import selector_keys
from reconciler.schedule.clusteraffinity import preferred_terms, required_terms
from reconciler.schedule.clusters import ClusterView
from reconciler.schedule.cycle import UNSCHEDULED
from reconciler.schedule.topologyspreadconstraints import ordered_specs
from reconciler.select import ResourceIndex
from reconciler.stagememo import IdentityMemo
from reconciler.state import Binding

Named = tuple[frozenset[str], frozenset[str]]
"""(every cluster a bindings tuple names, the ones it targets: Scheduled or Bound)."""
_named: IdentityMemo[Named] = IdentityMemo()


def plain_keys(placement: AnyPlacement, governance: Any) -> frozenset[str]:
    """The cluster label keys scheduling and governance read for `placement`: the selectors of
    its affinity terms, its spread constraints' keys and every Tenant's cluster selector."""
    policy = placement.spec.policy
    keys: set[str] = set()
    if policy is not None:
        for term in required_terms(policy):
            keys.update(selector_keys(term.label_selector))
        for preferred in preferred_terms(policy):
            keys.update(selector_keys(preferred.preference.label_selector))
        keys.update(key for key, _, _ in ordered_specs(policy))
    for tenant in governance.tenancy.tenants.values():
        keys.update(selector_keys(tenant.spec.cluster_selector))
    return frozenset(keys)


def next_round() -> None:
    """A pass begins (`placememo.pass_key`): `named` keeps this pass's and the last's tuples."""
    _named.next_round()


def named(bindings: Sequence[Binding]) -> Named:
    """The clusters `bindings` name, and those it targets (made once per tuple object)."""
    found = _named.get(bindings)
    if found is None:
        found = (
            frozenset([b.cluster for b in bindings]),
            frozenset([b.cluster for b in bindings if b.state != UNSCHEDULED]),
        )
        _named.put(bindings, found)
    return found


def rerendered(
    plan: PlacementPlan,
    placement: AnyPlacement,
    clusters: Iterable[str],
    views: Mapping[str, ClusterView],
    index: ResourceIndex,
    inputs: PassInputs,
) -> dict[str, ClusterManifests] | None:
    """`plan.per_cluster` with the overrides applied again on those of `clusters` the plan
    targets (the others' results kept, in the order `place` makes them: by cluster name); the
    very dict when none is targeted. None when an override failed on any cluster before or
    fails on one of them now (`place` reports failures counted over all clusters), or when the
    plan has other errors (then `place` runs)."""
    targeted = named(plan.state.bindings)[1]
    todo = [c for c in clusters if c in targeted and c in views]
    if not todo:
        return plan.per_cluster
    if plan.override_faults or plan.errors or plan.selection is None:
        return None
    selection = plan.selection
    serving = inputs.overrides.for_placement(placement, selection.resources)
    if not serving.overrides:
        return plan.per_cluster
    renderer = OverrideRenderer(serving, index, inputs.override_names)
    out, grew = dict(plan.per_cluster), False
    for cluster in todo:
        result = renderer.for_cluster(selection, views[cluster])
        if result.faults or result.failures:
            return None
        if result.overridden:
            grew = grew or cluster not in out
            out[cluster] = result
        else:
            out.pop(cluster, None)
    return dict(sorted(out.items())) if grew else out

"""Objects two placements produce for one cluster: who owns each contested (cluster, object).

The placement that already owned it in the previous output keeps it, else the first by name
(`find_owners`); `reconciler.assemble` gives the other a WorkSynchronized failure. Called by
`assemble`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from reconciler.placement import PlacementPlan

Ident = tuple[str, str, str, str]
"""(group, kind, namespace, name) of an object, version-independent."""
Claim = tuple[str, Ident]
"""(cluster, object)."""


def ident_key(ident: Mapping[str, Any]) -> Ident:
    api_version = str(ident.get("apiVersion", ""))
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    return (
        group,
        str(ident.get("kind", "")),
        str(ident.get("namespace", "")),
        str(ident.get("name", "")),
    )


def find_owners(
    plans: Mapping[str, PlacementPlan],
    held: Mapping[str, dict[str, dict[str, Any]]],
    prior_index: dict[str, dict[str, dict[str, Any]]],
) -> dict[Claim, str]:
    """Owner of every (cluster, object) that two placements produce. Only objects that two
    placements produce somewhere are examined, so the common case costs one pass over
    manifests and kept entries (the previous owners are looked up only when some object is
    contested). One placement never contests an object with itself: its kept clusters are not
    the ones it writes."""
    by_object: dict[Ident, set[str]] = defaultdict(set)
    for key, plan in plans.items():
        if not plan.held:
            for m in plan.manifests:
                by_object[ident_key(m.identity)].add(key)
    kept = _kept_idents(held)
    for key, per_cluster in kept.items():
        for idents in per_cluster.values():
            for ident in idents:
                by_object[ident].add(key)
    shared = {ident for ident, keys in by_object.items() if len(keys) > 1}
    if not shared:
        return {}
    claims: dict[Claim, list[str]] = defaultdict(list)
    for key, per_cluster in kept.items():
        for cluster, idents in per_cluster.items():
            for ident in shared.intersection(idents):
                claims[(cluster, ident)].append(key)
    for ident in shared:
        for key in sorted(by_object[ident]):
            if key in plans and not plans[key].held:
                for cluster in plans[key].written_clusters():
                    claims[(cluster, ident)].append(key)
    contested = {claim: keys for claim, keys in claims.items() if len(keys) > 1}
    prior_owner = _prior_owners(prior_index) if contested else {}
    owners = {}
    for claim, keys in contested.items():
        previous = prior_owner.get(claim)
        owners[claim] = previous if previous in keys else min(keys)
    return owners


def _kept_idents(
    held: Mapping[str, dict[str, dict[str, Any]]],
) -> dict[str, dict[str, list[Ident]]]:
    """Per held placement and cluster: the idents of the objects its kept entry lists (read
    once per objects list: most clusters of a placement share one)."""
    made: dict[int, tuple[object, list[Ident]]] = {}
    out: dict[str, dict[str, list[Ident]]] = {}
    for key, per_cluster in held.items():
        mine = out[key] = {}
        for cluster, entry in per_cluster.items():
            objects = entry.get("objects") or []
            found = made.get(id(objects))
            if found is None:  # the entry holds the list: its id stays its own
                found = made[id(objects)] = (objects, [ident_key(o) for o in objects])
            mine[cluster] = found[1]
    return out


def _prior_owners(prior_index: dict[str, dict[str, dict[str, Any]]]) -> dict[Claim, str]:
    return {
        (cluster, ident_key(obj)): key
        for cluster, entries in prior_index.items()
        for key, entry in entries.items()
        for obj in entry.get("objects") or []
    }

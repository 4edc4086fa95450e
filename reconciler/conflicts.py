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
    """Owner of every (cluster, object) that two placements produce. Only objects that appear in
    more than one placement are examined, so the common case costs one pass over manifests (the
    previous owners are looked up only when some object is contested)."""
    by_object: dict[Ident, set[str]] = defaultdict(set)
    for key, plan in plans.items():
        if not plan.held:
            for m in plan.manifests:
                by_object[ident_key(m.identity)].add(key)
    claims: dict[Claim, list[str]] = defaultdict(list)
    for key, per_cluster in held.items():
        for cluster, entry in per_cluster.items():
            for obj in entry.get("objects") or []:
                claims[(cluster, ident_key(obj))].append(key)
    shared = {ident for ident, keys in by_object.items() if len(keys) > 1}
    shared |= {ident for _, ident in claims}
    for ident in shared:
        for key in sorted(by_object.get(ident, ())):
            for cluster in plans[key].written_clusters():
                claims[(cluster, ident)].append(key)
    contested = {claim: keys for claim, keys in claims.items() if len(keys) > 1}
    prior_owner = _prior_owners(prior_index) if contested else {}
    owners = {}
    for claim, keys in contested.items():
        previous = prior_owner.get(claim)
        owners[claim] = previous if previous in keys else min(keys)
    return owners


def _prior_owners(prior_index: dict[str, dict[str, dict[str, Any]]]) -> dict[Claim, str]:
    return {
        (cluster, ident_key(obj)): key
        for cluster, entries in prior_index.items()
        for key, entry in entries.items()
        for obj in entry.get("objects") or []
    }

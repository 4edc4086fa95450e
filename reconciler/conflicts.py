"""Objects two placements produce for one cluster: who owns each contested (cluster, object).

The placement that already owned it in the previous output keeps it, else the first by name
(`find_owners`); `reconciler.assemble` gives the other a WorkSynchronized failure. The
placements producing each object are remembered across passes (`_Producers`): a placement whose
manifests are the very tuple of the last pass costs no look at its objects, so a pass that
changed one placement reads that placement's objects only. Called by `assemble`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from reconciler.placement import PlacementPlan
from reconciler.stagememo import IdentityMemo, StageMemo

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
    producers = _producers({k: None if p.held else p.manifests for k, p in plans.items()})
    by_object: dict[Ident, set[str]] = defaultdict(set)
    kept = _kept_idents(held)
    for key, per_cluster in kept.items():
        for idents in per_cluster.values():
            for ident in idents:
                by_object[ident].add(key)
    for ident, producing in by_object.items():
        producing.update(producers.by_object.get(ident, ()))
    shared = {ident for ident, producing in by_object.items() if len(producing) > 1}
    for ident in producers.shared - shared:
        by_object[ident] = set(producers.by_object[ident])
        shared.add(ident)
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


class _Producers:
    """The live placements producing each object: per placement key its manifests (None:
    held) and their objects, object -> the keys producing it, and the objects two produce."""

    def __init__(self) -> None:
        self.manifests: dict[str, Sequence[Any] | None] = {}
        self.idents: dict[str, frozenset[Ident]] = {}
        self.by_object: dict[Ident, set[str]] = {}
        self.shared: set[Ident] = set()

    def update(self, manifests: Mapping[str, Sequence[Any] | None]) -> None:
        """Made equal to a fresh reading of `manifests` (placement key -> its manifests, None
        when held), looking at the placements whose entry is another object only."""
        before = self.manifests
        changed = [k for k, m in manifests.items() if before.get(k, _NONE) is not m]
        changed += [k for k in before.keys() - manifests.keys()]
        touched: set[Ident] = set()
        for key in changed:
            for ident in self.idents.pop(key, ()):
                self.by_object[ident].discard(key)
                touched.add(ident)
            found = manifests.get(key)
            if found is not None:
                mine = self.idents[key] = frozenset(ident_key(m.identity) for m in found)
                for ident in mine:
                    self.by_object.setdefault(ident, set()).add(key)
                touched |= mine
        for ident in touched:
            keys = self.by_object.get(ident)
            if not keys:
                self.by_object.pop(ident, None)
            if keys is not None and len(keys) > 1:
                self.shared.add(ident)
            else:
                self.shared.discard(ident)
        self.manifests = dict(manifests)


_NONE: Any = object()
_PRODUCERS: StageMemo[_Producers] = StageMemo()
"""The producers of the last pass (one entry), updated in place."""


def _producers(manifests: Mapping[str, Sequence[Any] | None]) -> _Producers:
    """The producers of `manifests`, patched from the last call's (dropped if that fails)."""
    last = _PRODUCERS.last("")
    producers = last[1] if last is not None else _Producers()
    _PRODUCERS.drop("")
    producers.update(manifests)
    _PRODUCERS.put("", (), producers)
    return producers


def _kept_idents(
    held: Mapping[str, dict[str, dict[str, Any]]],
) -> dict[str, dict[str, list[Ident]]]:
    """Per held placement and cluster: the idents of the objects its kept entry lists, read
    once per objects list (most clusters of a placement share one) and remembered by the list
    across passes (`_IDENTS`)."""
    _IDENTS.next_round()
    out: dict[str, dict[str, list[Ident]]] = {}
    for key, per_cluster in held.items():
        mine = out[key] = {}
        for cluster, entry in per_cluster.items():
            objects = entry.get("objects") or _NO_OBJECTS
            idents = _IDENTS.get(objects)  # the memo holds the list: its id stays its own
            if idents is None:
                idents = [ident_key(o) for o in objects]
                _IDENTS.put(objects, idents)
            mine[cluster] = idents
    return out


_NO_OBJECTS: list[Any] = []
_IDENTS: IdentityMemo[list[Ident]] = IdentityMemo()
"""A kept entry's objects list -> their idents, for the last two passes: the clusters a
rollout has not reached keep last pass's very entries (`assembleheld.rollout_kept`), so a
fleet-wide rollout's 750 held clusters are not read again each step."""


def _prior_owners(prior_index: dict[str, dict[str, dict[str, Any]]]) -> dict[Claim, str]:
    return {
        (cluster, ident_key(obj)): key
        for cluster, entries in prior_index.items()
        for key, entry in entries.items()
        for obj in entry.get("objects") or []
    }

"""Owners of contested (cluster, object) pairs (`reconciler.conflicts.find_owners`) equal a
plain reading of every claim: each (cluster, object) that two placements produce - written
now or kept from the previous output - goes to its previous owner, else the first by name."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, cast

from reconciler.conflicts import Claim, find_owners, ident_key
from reconciler.placement import PlacementPlan

OBJECTS = [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "web", "name": n} for n in "abc"]
CLUSTERS = ["eu-1", "eu-2", "us-1"]


@dataclass
class _Manifest:
    identity: dict[str, str]


@dataclass
class _Plan:
    manifests: tuple[_Manifest, ...]
    written: list[str]
    held: bool = False

    def written_clusters(self) -> list[str]:
        return self.written


def _plain(
    plans: dict[str, _Plan], held: dict[str, dict[str, dict[str, Any]]], prior: Any
) -> dict[Claim, str]:
    claims: dict[Claim, set[str]] = defaultdict(set)
    for key, plan in plans.items():
        if not plan.held:
            for cluster in plan.written:
                for m in plan.manifests:
                    claims[(cluster, ident_key(m.identity))].add(key)
    for key, per_cluster in held.items():
        for cluster, entry in per_cluster.items():
            for obj in entry["objects"]:
                claims[(cluster, ident_key(obj))].add(key)
    previous = {
        (c, ident_key(o)): k for c, es in prior.items() for k, e in es.items() for o in e["objects"]
    }
    out = {}
    for claim, keys in claims.items():
        if len(keys) > 1:
            was = previous.get(claim)
            out[claim] = was if was in keys else min(keys)
    return out


def _fleet(rng: random.Random) -> tuple[dict[str, _Plan], dict[str, dict[str, dict[str, Any]]]]:
    plans, held = {}, {}
    for key in "pqrs":
        objects = [o for o in OBJECTS if rng.random() < 0.4]
        clusters = [c for c in CLUSTERS if rng.random() < 0.5]
        rest = [c for c in CLUSTERS if c not in clusters and rng.random() < 0.5]
        kind = rng.choice(["live", "held", "rolling", "kept"])
        entries = {c: {"objects": list(objects)} for c in rest}
        if kind != "kept":
            manifests = tuple(_Manifest(dict(o)) for o in objects)
            plans[key] = _Plan(manifests, clusters, held=kind == "held")
        if kind in ("held", "rolling", "kept") and entries:
            held[key] = entries
    return plans, held


def test_owners_equal_a_plain_reading_of_every_claim() -> None:
    rng = random.Random(11)
    contested = 0
    for _ in range(400):
        plans, held = _fleet(rng)
        prior = {c: {k: {"objects": OBJECTS[:2]}} for c in CLUSTERS for k in rng.sample("pqrs", 1)}
        found = find_owners(cast(dict[str, PlacementPlan], plans), held, prior)
        assert found == _plain(plans, held, prior)
        contested += bool(found)
    assert contested > 50  # the table exercises conflicts, not only quiet fleets


def test_owners_follow_a_fleet_whose_placements_change_a_few_at_a_time() -> None:
    """Pass after pass most placements hand the very manifests tuple of the last pass and a
    few change (other objects, held, gone, back): the remembered producers give what a plain
    reading gives, conflicts coming and going."""
    rng = random.Random(5)
    plans: dict[str, _Plan] = {}
    came = went = 0
    for _ in range(300):
        for key in rng.sample("pqrstu", 2):
            roll = rng.random()
            if roll < 0.15:
                plans.pop(key, None)
                continue
            objects = [o for o in OBJECTS if rng.random() < 0.4]
            manifests = tuple(_Manifest(dict(o)) for o in objects)
            clusters = [c for c in CLUSTERS if rng.random() < 0.6]
            plans[key] = _Plan(manifests, clusters, held=roll > 0.9)
        now = {k: _Plan(p.manifests, p.written, p.held) for k, p in plans.items()}  # copies
        found = find_owners(cast(dict[str, PlacementPlan], now), {}, {})
        want = _plain(now, {}, {})
        assert found == want
        came, went = came + bool(found), went + (not found)
    assert came > 50 and went > 50


def test_kept_entries_carried_over_are_read_once_and_still_give_the_plain_owners(
    monkeypatch: Any,
) -> None:
    """A rollout keeps last pass's very entries for the clusters it has not reached: their
    objects are read in the first pass only (`_IDENTS`), and the owners stay those of a plain
    reading while other entries come and go."""
    import reconciler.conflicts as conflicts

    rng = random.Random(7)
    read: list[int] = []
    real = conflicts.ident_key
    monkeypatch.setattr(conflicts, "ident_key", lambda o: read.append(1) or real(o))
    kept = {c: {"objects": list(OBJECTS)} for c in CLUSTERS}
    plans = {"p": _Plan(tuple(_Manifest(dict(o)) for o in OBJECTS[:1]), ["eu-1"])}
    for n in range(6):
        fresh = {"eu-1": {"objects": [OBJECTS[n % 3]]}}  # a new list each pass
        held = {"q": dict(kept), "r": fresh} if rng.random() < 0.8 else {"q": dict(kept)}
        read.clear()
        found = find_owners(cast(dict[str, PlacementPlan], plans), held, {})
        assert found == _plain(plans, held, {})
        first = len(OBJECTS) * len(CLUSTERS) + 1 if n == 0 else 0  # the kept lists, p's object
        assert len(read) == first + (1 if "r" in held else 0)

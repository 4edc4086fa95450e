"""Scheduler benchmark: time `reconciler.schedule.cycle.schedule` over a synthetic fleet.

`python benchmarks/bench_schedule.py [--clusters 1000] [--trials 5] [--seed 1] [--reference]`
builds a deterministic fleet in memory (clusters labelled region/zone/env/tier with node-count
and cpu properties, a few tainted or ineligible) and 200 placements: 100 PickAll with a required
affinity, 60 PickN with preferred terms (label and property sorter), 40 PickN (N = 3..10) with
one or two topology spread constraints. Each trial schedules every placement from empty
bindings (first pass), then again with the first pass's bindings (sticky pass). Prints median,
min and max seconds per pass, the total cycles, and a digest of the outcomes (equal digests =
equal decisions). `--reference` runs the plain per-cycle evaluation (`cycle.REFERENCE`).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gitfleet.api import ClusterResourcePlacement, MemberCluster
from reconciler.schedule import cycle
from reconciler.schedule.clusters import ClusterView
from reconciler.schedule.outcome import ScheduleOutcome
from reconciler.state import Binding

REGIONS = ["eastus", "westus", "northeurope", "westeurope", "japaneast", "brazilsouth"]
ENVS = ["prod", "prod", "prod", "staging", "staging", "dev"]
TIERS = ["gold", "silver", "silver", "bronze", "bronze"]
NODES = "kubernetes-fleet.io/node-count"
CPU = "resources.kubernetes-fleet.io/available-cpu"


def _cluster(rng: random.Random, i: int) -> ClusterView:
    region = rng.choice(REGIONS)
    labels = {
        "region": region,
        "zone": f"{region}-{rng.randint(1, 3)}",
        "env": rng.choice(ENVS),
        "tier": rng.choice(TIERS),
    }
    name = f"{region}-{labels['env']}-{i:05d}"
    taints = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}] if i % 37 == 0 else []
    status = {
        "properties": {NODES: {"value": str(rng.randint(3, 200))}},
        "resourceUsage": {"available": {"cpu": f"{rng.randint(1, 640) * 250}m"}},
    }
    body = {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": taints},
        "status": status,
    }
    ineligible = "cluster is not connected to the fleet: member agent not joined yet"
    return ClusterView(
        name, MemberCluster.model_validate(body), ineligible if i % 53 == 0 else None
    )


def build_views(rng: random.Random, count: int) -> dict[str, ClusterView]:
    """`count` cluster views by name."""
    views = [_cluster(rng, i) for i in range(count)]
    return {v.name: v for v in views}


def _placement(name: str, policy: dict[str, Any]) -> ClusterResourcePlacement:
    return ClusterResourcePlacement.model_validate(
        {
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": name},
            "spec": {
                "resourceSelectors": [
                    {"group": "", "version": "v1", "kind": "Namespace", "name": name}
                ],
                "policy": policy,
            },
        }
    )


def _required(rng: random.Random) -> dict[str, Any]:
    expr = {"key": "region", "operator": "In", "values": rng.sample(REGIONS, rng.randint(1, 4))}
    term: dict[str, Any] = {"labelSelector": {"matchExpressions": [expr]}}
    if rng.random() < 0.3:
        term["propertySelector"] = {
            "matchExpressions": [{"name": NODES, "operator": "Ge", "values": ["20"]}]
        }
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [term]}}


def _preferred(rng: random.Random) -> list[dict[str, Any]]:
    sorter = {
        "name": rng.choice([NODES, CPU]),
        "sortOrder": rng.choice(["Ascending", "Descending"]),
    }
    return [
        {
            "weight": rng.randint(10, 60),
            "preference": {"labelSelector": {"matchLabels": {"tier": "gold"}}},
        },
        {"weight": rng.randint(10, 100), "preference": {"propertySorter": sorter}},
    ]


def _spread(rng: random.Random) -> list[dict[str, Any]]:
    keys = ["region"] if rng.random() < 0.5 else ["region", "zone"]
    return [
        {
            "topologyKey": key,
            "maxSkew": rng.randint(1, 2),
            "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
        }
        for key in keys
    ]


def build_placements(rng: random.Random) -> list[ClusterResourcePlacement]:
    """100 PickAll with affinity, 60 PickN with preferred terms, 40 PickN with spread."""
    out = []
    for i in range(100):
        out.append(_placement(f"all-{i:03d}", {"affinity": {"clusterAffinity": _required(rng)}}))
    for i in range(60):
        affinity = {"preferredDuringSchedulingIgnoredDuringExecution": _preferred(rng)}
        if rng.random() < 0.5:
            affinity.update(_required(rng))
        pick = {"placementType": "PickN", "numberOfClusters": rng.randint(3, 25)}
        out.append(_placement(f"pref-{i:03d}", {**pick, "affinity": {"clusterAffinity": affinity}}))
    for i in range(40):
        policy: dict[str, Any] = {"placementType": "PickN", "numberOfClusters": rng.randint(3, 10)}
        policy["topologySpreadConstraints"] = _spread(rng)
        if rng.random() < 0.5:
            pref = _preferred(rng)
            policy["affinity"] = {
                "clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": pref}
            }
        out.append(_placement(f"spread-{i:03d}", policy))
    return out


def run_pass(
    placements: list[ClusterResourcePlacement],
    views: dict[str, ClusterView],
    prior: dict[str, tuple[Binding, ...]],
) -> tuple[float, dict[str, ScheduleOutcome]]:
    """Schedule every placement once; wall seconds and the outcomes by placement name."""
    outcomes: dict[str, ScheduleOutcome] = {}
    start = time.perf_counter()
    for p in placements:
        outcomes[p.name] = cycle.schedule(p, prior.get(p.name, ()), views, 1)
    return time.perf_counter() - start, outcomes


def digest(outcomes: dict[str, ScheduleOutcome]) -> str:
    """A hash of bindings, decisions, condition and every explanation."""
    h = hashlib.sha256()
    for name in sorted(outcomes):
        o = outcomes[name]
        h.update(repr((name, o.bindings, o.decisions, o.fulfilled, o.message)).encode())
        h.update(repr([o.explanations[c] for c in o.explanations]).encode())
    return h.hexdigest()[:16]


def _summary(label: str, times: list[float]) -> str:
    med, low, high = statistics.median(times), min(times), max(times)
    return f"{label:<14} median {med:8.3f} s   min {low:8.3f} s   max {high:8.3f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reference", action="store_true", help="plain per-cycle evaluation")
    args = parser.parse_args(argv)
    cycle.REFERENCE = args.reference
    rng = random.Random(args.seed)
    views = build_views(rng, args.clusters)
    placements = build_placements(rng)
    first_times, sticky_times = [], []
    for _ in range(args.trials):
        t1, first = run_pass(placements, views, {})
        t2, sticky = run_pass(placements, views, {n: o.bindings for n, o in first.items()})
        first_times.append(t1)
        sticky_times.append(t2)
    cycles = sum(o.cycles for o in first.values())
    print(f"{len(views)} clusters, {len(placements)} placements, {args.trials} trials")
    print(_summary("first pass", first_times))
    print(_summary("sticky pass", sticky_times))
    print(f"cycles (first pass): {cycles}")
    print(f"digest first {digest(first)}  sticky {digest(sticky)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The incremental evaluator decides exactly as the plain per-cycle runner (`cycle.REFERENCE`).

Random fleets (seeded): 50-200 clusters with random labels, properties, taints and eligibility;
PickAll with required terms, PickN with 0-2 topology spread constraints, preferred terms and
various N, from random prior bindings (current, obsolete, unscheduled, dangling). Bindings,
decisions, condition, cycle count and every explanation must be equal; a fleet where a plugin
errors must raise the same error on both paths.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from reconciler.schedule import cycle
from reconciler.schedule.clusters import ClusterView
from reconciler.schedule.errors import ScheduleError
from reconciler.schedule.incremental import supports
from reconciler.schedule.profile import DEFAULT_PROFILE, default_profile
from reconciler.state import Binding, BindingDecision
from tests.unit.schedule.fleet import cluster, crp, fleet, preferred, required, rp, sorter, spread

NODES = "kubernetes-fleet.io/node-count"
CPU = "resources.kubernetes-fleet.io/available-cpu"
KEYS = {"region": ["r1", "r2", "r3"], "zone": ["z1", "z2", "z3", "z4"], "env": ["prod", "dev"]}


@contextmanager
def reference(on: bool) -> Iterator[None]:
    saved = cycle.REFERENCE
    cycle.REFERENCE = on
    try:
        yield
    finally:
        cycle.REFERENCE = saved


def random_views(rng: random.Random, broken: bool) -> dict[str, ClusterView]:
    views = []
    for i in range(rng.randint(50, 200)):
        labels = {k: rng.choice(v) for k, v in KEYS.items() if rng.random() < 0.85}
        props = {NODES: str(rng.randint(1, 12))} if rng.random() < 0.8 else {}
        if broken and i == 7:
            props = {NODES: "not-a-quantity"}
        usage = (
            {"available": {"cpu": f"{rng.randint(1, 8) * 500}m"}} if rng.random() < 0.7 else None
        )
        taints = (
            [{"key": "gpu", "value": "x", "effect": "NoSchedule"}] if rng.random() < 0.1 else None
        )
        ineligible = "cluster is not connected to the fleet: member agent not joined yet"
        views.append(
            cluster(
                f"c{i:03d}",
                labels,
                taints=taints,
                props=props,
                usage=usage,
                ineligible=ineligible if rng.random() < 0.08 else None,
            )
        )
    return fleet(*views)


def random_policy(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.2:
        term = {"labelSelector": {"matchLabels": {"env": "prod"}}}
        return {"affinity": required(term)} if rng.random() < 0.7 else {}
    policy: dict[str, Any] = {"numberOfClusters": rng.randint(0, 25)}
    specs = [
        spread(key, rng.randint(1, 2), rng.choice(["DoNotSchedule", "ScheduleAnyway"]))
        for key in rng.sample(["region", "zone", "env"], rng.randint(0, 2))
    ]
    if specs:
        policy["topologySpreadConstraints"] = specs
    affinity: dict[str, Any] = {}
    if rng.random() < 0.6:
        terms = [(rng.randint(-50, 50), {"labelSelector": {"matchLabels": {"env": "prod"}}})]
        terms.append(
            (
                rng.randint(1, 80),
                sorter(rng.choice([NODES, CPU]), rng.choice(["Ascending", "Descending"])),
            )
        )
        affinity.update(preferred(*terms)["clusterAffinity"])
    if rng.random() < 0.3:
        expr = {"key": "region", "operator": "In", "values": ["r1", "r2"]}
        term = {"labelSelector": {"matchExpressions": [expr]}}
        if rng.random() < 0.5:
            term["propertySelector"] = {
                "matchExpressions": [{"name": NODES, "operator": "Ge", "values": ["3"]}]
            }
        affinity.update(required(term)["clusterAffinity"])
    if affinity:
        policy["affinity"] = {"clusterAffinity": affinity}
    if rng.random() < 0.2:
        policy["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    return policy


def random_bindings(rng: random.Random, names: list[str]) -> list[Binding]:
    out = []
    for name in [*rng.sample(names, rng.randint(0, min(30, len(names)))), "gone"]:
        state = rng.choice(["Scheduled", "Bound", "Unscheduled"])
        previous = rng.choice(["Scheduled", "Bound"]) if state == "Unscheduled" else None
        decision = None
        if rng.random() < 0.7:
            a, t = rng.randint(-20, 80), rng.randint(-2, 1)
            decision = BindingDecision(f"picked {name}", a, t)
        out.append(Binding(name, state, rng.choice([0, 1, 1]), 1, previous, decision))
    return out


def outcome(placement: Any, prior: list[Binding], views: dict[str, ClusterView]) -> Any:
    try:
        out = cycle.schedule(placement, prior, views, 1)
    except ScheduleError as exc:
        return ("error", str(exc))
    explained = [out.explanations[name] for name in out.explanations]
    return (out.bindings, out.decisions, out.fulfilled, out.message, out.cycles, explained)


@pytest.mark.parametrize("seed", range(60))
def test_incremental_equals_reference(seed: int) -> None:
    rng = random.Random(seed)
    views = random_views(rng, broken=seed % 15 == 14)
    policy = random_policy(rng)
    kind = "PickN" if "numberOfClusters" in policy else "PickAll"
    placement = rp("ns", kind, **policy) if seed % 10 == 9 else crp(kind, **policy)
    prior = random_bindings(rng, sorted(views))
    with reference(True):
        want = outcome(placement, prior, views)
    with reference(False):
        got = outcome(placement, prior, views)
    assert got == want


@pytest.mark.parametrize(
    ("profile", "want"),
    [(DEFAULT_PROFILE, True), (default_profile(), True)],
)
def test_supports_default_profile(profile: Any, want: bool) -> None:
    assert supports(profile) is want


def test_supports_rejects_reordered_filters() -> None:
    base = default_profile()
    reordered = type(base)(
        base.name, base.post_batch, base.pre_filter, base.filter[::-1], base.pre_score, base.score
    )
    assert supports(reordered) is False


def test_spread_many_cycles_equal_reference() -> None:
    rng = random.Random(3)
    views = fleet(*[cluster(f"c{i:03d}", {"zone": rng.choice("abcd")}) for i in range(120)])
    placement = crp("PickN", numberOfClusters=40, topologySpreadConstraints=[spread("zone")])
    with reference(True):
        want = outcome(placement, [], views)
    with reference(False):
        out = cycle.schedule(placement, [], views, 1)
    assert outcome(placement, [], views) == want
    counts = {z: 0 for z in "abcd"}
    for b in out.bindings:
        counts[views[b.cluster].labels["zone"]] += 1
    assert out.cycles == 40 and out.fulfilled
    assert max(counts.values()) - min(counts.values()) <= 1


BROKEN = fleet(
    cluster("a", {"env": "prod"}, props={NODES: "4"}),
    cluster("b", {"env": "dev"}, props={NODES: "bogus"}),
    cluster("c", {"env": "prod"}, props={NODES: "9"}),
)
PROD_AND_NODES = {
    "labelSelector": {"matchLabels": {"env": "prod"}},
    "propertySelector": {"matchExpressions": [{"name": NODES, "operator": "Ge", "values": ["1"]}]},
}


@pytest.mark.parametrize(
    ("placement", "raises"),
    [
        # b's value is read only by the sorter: both paths fail with the same message.
        (crp("PickN", numberOfClusters=2, affinity=preferred((10, sorter(NODES)))), True),
        # b fails the label part first, so the plain runner never reads its value; the
        # incremental path reads it for the class key, errs, and falls back.
        (crp("PickAll", affinity=required(PROD_AND_NODES)), False),
    ],
)
def test_plugin_errors_fall_back_to_reference(placement: Any, raises: bool) -> None:
    with reference(True):
        want = outcome(placement, [], BROKEN)
    with reference(False):
        got = outcome(placement, [], BROKEN)
    assert got == want
    assert (want[0] == "error") is raises

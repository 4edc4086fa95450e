"""Scheduling that reuses a placement's last run (`reuse.schedule_reusing`) decides exactly as a
fresh run (the plain reference runner) on sequences of passes that add, remove, relabel,
retaint, re-verdict and re-measure clusters, with the bindings fed back (some moved to Bound as
a rollout would) and now and then a new policy snapshot; bindings, decisions, condition, cycle
count and every explanation must be equal. The table tests pin which path each kind of change
takes (reused as is / rejected clusters only / static results updated / from scratch).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest

from gitfleet.api import MemberCluster, PlacementPolicy
from reconciler.schedule import cycle, reuse
from reconciler.schedule.clusters import ClusterView
from reconciler.schedule.errors import ScheduleError
from reconciler.schedule.fleetfacts import cluster_digest, fleet_facts
from reconciler.stagememo import forget_stages
from reconciler.state import Binding
from tests.unit.schedule.fleet import cluster, crp, fleet, preferred, required, sorter, spread
from tests.unit.schedule.test_incremental import (
    KEYS,
    NODES,
    random_bindings,
    random_policy,
    random_views,
    reference,
)

Views = dict[str, ClusterView]


def policy_of(placement: Any) -> Any:
    return placement.spec.policy


def summary(out: Any) -> Any:
    explained = [out.explanations[name] for name in out.explanations]
    return (out.bindings, out.decisions, out.fulfilled, out.message, out.cycles, explained)


def fresh(policy: Any, ns: str | None, prior: Any, views: Views, index: int) -> Any:
    try:
        with reference(True):
            return summary(cycle.run_policy(policy, ns, prior, views, index))
    except ScheduleError as exc:
        return ("error", str(exc))


def reusing(policy: Any, ns: str | None, prior: Any, views: Views, index: int) -> Any:
    try:
        return summary(reuse.schedule_reusing("p", policy, ns, prior, views, index))
    except ScheduleError as exc:
        return ("error", str(exc))


def new_pass(views: Views) -> Views:
    """The next pass's views: new view objects (and mapping), the same MemberClusters."""
    return {n: ClusterView(n, v.cluster, v.ineligible_reason) for n, v in views.items()}


def _labels(rng: random.Random) -> dict[str, str]:
    return {k: rng.choice(v) for k, v in KEYS.items() if rng.random() < 0.85}


def mutate(rng: random.Random, views: Views, step: int) -> Views:
    """One pass's cluster change (or none)."""
    out = new_pass(views)
    names = sorted(out)
    roll = rng.random()
    victim = rng.choice(names)
    old = out[victim]
    if roll < 0.3:
        name = f"c{rng.randint(0, 260):03d}x{step}"
        taints = (
            [{"key": "gpu", "value": "x", "effect": "NoSchedule"}] if rng.random() < 0.1 else None
        )
        out[name] = cluster(
            name, _labels(rng), taints=taints, props={NODES: str(rng.randint(1, 12))}
        )
    elif roll < 0.5 and len(out) > 5:
        del out[victim]
    elif roll < 0.7:
        out[victim] = cluster(victim, _labels(rng), props={NODES: str(rng.randint(1, 3))})
    elif roll < 0.8:
        reason = None if old.ineligible_reason else "cluster is not connected to the fleet: x"
        out[victim] = ClusterView(victim, old.cluster, reason)
    elif roll < 0.9:
        out[victim] = cluster(victim, dict(old.labels), props={NODES: str(rng.randint(1, 40))})
    return out


def rolled(rng: random.Random, bindings: tuple[Binding, ...]) -> tuple[Binding, ...]:
    """What a rollout might do between passes: some Scheduled bindings become Bound."""
    return tuple(
        replace(b, state="Bound") if b.state == "Scheduled" and rng.random() < 0.5 else b
        for b in bindings
    )


def random_any_policy(rng: random.Random, names: list[str]) -> Any:
    if rng.random() < 0.15:
        listed = [*rng.sample(names, 4), "missing"]
        return PlacementPolicy.model_validate(
            {"placementType": "PickFixed", "clusterNames": listed}
        )
    policy = random_policy(rng)
    kind = "PickN" if "numberOfClusters" in policy else "PickAll"
    return policy_of(crp(kind, **policy))


@contextmanager
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Counts of the paths taken: full runs (with or without earlier statics), rejected-only,
    PickAll patched."""
    counts = {"full": 0, "updated": 0, "again": 0, "patched": 0}
    run_tracked, outcome = vars(reuse)["run_tracked"], reuse._outcome
    patch = reuse.patch_pick_all

    def patched(*args: Any) -> Any:
        made = patch(*args)
        counts["patched"] += made is not None
        return made

    def tracked(inputs: Any, *args: Any) -> Any:
        counts["updated" if inputs.before is not None else "full"] += 1
        return run_tracked(inputs, *args)

    def again(*args: Any) -> Any:
        counts["again"] += 1
        return outcome(*args)

    monkeypatch.setattr(reuse, "run_tracked", tracked)
    monkeypatch.setattr(reuse, "_outcome", again)
    monkeypatch.setattr(reuse, "patch_pick_all", patched)
    yield counts


@pytest.mark.parametrize("seed", range(40))
def test_sequences_of_passes_equal_fresh_runs(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    forget_stages()
    rng = random.Random(seed)
    views = random_views(rng, broken=seed % 13 == 12)
    policy = random_any_policy(rng, sorted(views))
    ns = "ns" if seed % 10 == 9 else None
    prior: tuple[Binding, ...] = tuple(random_bindings(rng, sorted(views)))
    index = 1
    with counting(monkeypatch) as counts:
        for step in range(12):
            want = fresh(policy, ns, prior, views, index)
            got = reusing(policy, ns, prior, views, index)
            assert got == want, f"step {step}"
            if got[0] != "error" and rng.random() < 0.8:
                prior = rolled(rng, got[0])
            if rng.random() < 0.08:
                index += 1
            views = mutate(rng, views, step)
    assert counts["full"] + counts["updated"] <= 12


def test_every_path_is_taken_across_seeds(monkeypatch: pytest.MonkeyPatch) -> None:
    totals = {"full": 0, "updated": 0, "again": 0, "calls": 0}
    for seed in range(40):
        forget_stages()
        rng = random.Random(seed)
        views = random_views(rng, broken=False)
        policy = random_any_policy(rng, sorted(views))
        prior = tuple(random_bindings(rng, sorted(views)))
        with counting(monkeypatch) as counts:
            for step in range(8):
                got = reusing(policy, None, prior, views, 1)
                prior = got[0] if got[0] != "error" else prior
                views = mutate(rng, views, step)
                totals["calls"] += 1
        for k in ("full", "updated", "again"):
            totals[k] += counts[k]
    reused = totals["calls"] - totals["full"] - totals["updated"] - totals["again"]
    assert totals["updated"] > 20 and totals["again"] > 20 and reused > 20, totals


PROD = {"labelSelector": {"matchLabels": {"env": "prod"}}}


def _base() -> Views:
    return fleet(
        *[
            cluster(f"c{i:02d}", {"env": "prod" if i % 2 else "dev", "region": f"r{i % 3}"})
            for i in range(12)
        ]
    )


def _add(views: Views, name: str, labels: dict[str, str], **kw: Any) -> Views:
    out = new_pass(views)
    out[name] = cluster(name, labels, **kw)
    return out


def _drop(views: Views, name: str) -> Views:
    out = new_pass(views)
    del out[name]
    return out


def _relabel(views: Views, name: str, **labels: str) -> Views:
    out = new_pass(views)
    out[name] = cluster(name, {**out[name].labels, **labels})
    return out


ALL_PROD = policy_of(crp("PickAll", affinity=required(PROD)))
SPREAD_N = policy_of(
    crp(
        "PickN",
        numberOfClusters=3,
        affinity=required(PROD),
        topologySpreadConstraints=[spread("region")],
    )
)
GREEDY_N = policy_of(crp("PickN", numberOfClusters=9, affinity=required(PROD)))
SORTED_N = policy_of(crp("PickN", numberOfClusters=2, affinity=preferred((10, sorter(NODES)))))
TEAM_N = policy_of(
    crp(
        "PickN",
        numberOfClusters=2,
        affinity=preferred((10, {"labelSelector": {"matchLabels": {"team": "x"}}})),
    )
)
FIXED = PlacementPolicy.model_validate(
    {"placementType": "PickFixed", "clusterNames": ["c01", "c02"]}
)

# (name, policy, change to the fleet, the path the second pass takes)
CASES: list[tuple[str, Any, Callable[[Views], Views], str]] = [
    ("nothing changed", ALL_PROD, new_pass, "reused"),
    (
        "dev cluster added to a prod placement",
        ALL_PROD,
        lambda v: _add(v, "c99", {"env": "dev"}),
        "patched",
    ),
    (
        "prod cluster added to a prod placement",
        ALL_PROD,
        lambda v: _add(v, "c99", {"env": "prod"}),
        "patched",
    ),
    ("unread label changed", ALL_PROD, lambda v: _relabel(v, "c00", team="x"), "reused"),
    ("unread label of a bound cluster", ALL_PROD, lambda v: _relabel(v, "c01", team="x"), "reused"),
    ("bound cluster leaves prod", ALL_PROD, lambda v: _relabel(v, "c01", env="dev"), "patched"),
    ("dev cluster removed", ALL_PROD, lambda v: _drop(v, "c00"), "patched"),
    ("bound cluster removed", ALL_PROD, lambda v: _drop(v, "c01"), "patched"),
    (
        "unread label of a PickN's cluster",
        GREEDY_N,
        lambda v: _relabel(v, "c01", team="x"),
        "reused",
    ),
    (
        "PickN's bound cluster changes region",
        GREEDY_N,
        lambda v: _relabel(v, "c01", region="r7"),
        "reused",
    ),
    (
        "spread PickN's bound cluster changes region",
        SPREAD_N,
        lambda v: _relabel(v, "c01", region="r7"),
        "updated",
    ),
    (
        "new topology domain",
        SPREAD_N,
        lambda v: _add(v, "c99", {"env": "dev", "region": "r9"}),
        "updated",
    ),
    (
        "known topology domain",
        SPREAD_N,
        lambda v: _add(v, "c99", {"env": "dev", "region": "r1"}),
        "again",
    ),
    (
        "prod cluster added to a PickN that has its clusters",
        SPREAD_N,
        lambda v: _add(v, "c99", {"env": "prod", "region": "r1"}),
        "again",
    ),
    (
        "prod cluster added to a PickN that lacks clusters",
        GREEDY_N,
        lambda v: _add(v, "c99", {"env": "prod", "region": "r1"}),
        "updated",
    ),
    (
        "preferred label of a PickN's cluster",
        TEAM_N,
        lambda v: _relabel(v, "c00", team="x"),
        "again",
    ),
    ("fleet min/max moved", SORTED_N, lambda v: _add(v, "c99", {}, props={NODES: "0"}), "updated"),
    ("unlisted cluster added to PickFixed", FIXED, lambda v: _add(v, "c99", {}), "reused-fixed"),
    ("listed cluster removed from PickFixed", FIXED, lambda v: _drop(v, "c02"), "full"),
]


@pytest.mark.parametrize(("name", "policy", "change", "path"), CASES, ids=[c[0] for c in CASES])
def test_each_change_takes_its_path(
    name: str,
    policy: Any,
    change: Callable[[Views], Views],
    path: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    forget_stages()
    views = _base()
    settled = reuse.schedule_reusing("p", policy, None, (), views, 1).bindings
    views = new_pass(views)
    first = reuse.schedule_reusing("p", policy, None, settled, views, 1)
    prior = first.bindings
    assert prior == settled
    later = change(views)
    with counting(monkeypatch) as counts:
        got = reuse.schedule_reusing("p", policy, None, prior, later, 1)
    assert summary(got) == fresh(policy, None, prior, later, 1)
    taken = {
        "reused": not any(counts.values()) and got is first,
        "reused-fixed": not any(counts.values()) and got is not first,
        "again": counts == {"full": 0, "updated": 0, "again": 1, "patched": 0},
        "patched": counts == {"full": 0, "updated": 0, "again": 0, "patched": 1},
        "updated": counts["updated"] == 1 and counts["full"] == 0,
        "full": counts["full"] == 1 and counts["updated"] == 0,
    }
    assert taken[path], counts


@pytest.mark.parametrize(
    "differ",
    [
        ("policy", lambda a: (policy_of(crp("PickAll")), *a[1:])),
        ("namespace", lambda a: (a[0], "other", *a[2:])),
        ("policy index", lambda a: (*a[:4], 2)),
    ],
    ids=lambda d: d[0],
)
def test_other_inputs_schedule_from_scratch(differ: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    forget_stages()
    views = _base()
    args = (ALL_PROD, None, (), views, 1)
    reuse.schedule_reusing("p", *args)
    changed = differ[1](args)
    with counting(monkeypatch) as counts:
        got = reuse.schedule_reusing("p", *changed)
    assert counts["full"] == 1
    assert summary(got) == fresh(*changed)


@pytest.mark.parametrize(("policy", "path"), [(ALL_PROD, "patched"), (GREEDY_N, "updated")])
def test_changed_bindings_rerun_from_updated_statics(
    policy: Any, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    forget_stages()
    views = _base()
    first = reuse.schedule_reusing("p", policy, None, (), views, 1)
    prior = tuple(replace(b, state="Bound") for b in first.bindings)
    with counting(monkeypatch) as counts:
        got = reuse.schedule_reusing("p", policy, None, prior, new_pass(views), 1)
    assert counts[path] == 1
    assert summary(got) == fresh(policy, None, prior, views, 1)


def test_fleet_facts_change_sets() -> None:
    views = _base()
    first = fleet_facts(views)
    assert fleet_facts(views) is first
    second = fleet_facts(_relabel(_add(views, "c99", {}), "c03", team="x"))
    assert second.changed_since(first) == {"c99", "c03"}
    third = fleet_facts(_drop(new_pass(views), "c05"))
    assert third.changed_since(second) == {"c99", "c03", "c05"}
    assert third.changed_since(first) == {"c05"}
    assert third.changed_since(third) == frozenset()


FIXED_MISSING = PlacementPolicy.model_validate(
    {"placementType": "PickFixed", "clusterNames": ["c01", "c50"]}
)


@pytest.mark.parametrize(
    ("policy", "start", "change", "path"),
    [
        # a listed cluster that is not bound appears: PickFixed binds it
        (FIXED_MISSING, _base(), lambda v: _add(v, "c50", {}), "full"),
        # the only (rejected) cluster of a topology domain leaves: the skew moves
        (
            SPREAD_N,
            _add(_base(), "c98", {"env": "dev", "region": "r7"}),
            lambda v: _drop(v, "c98"),
            "updated",
        ),
    ],
    ids=["listed-cluster-appears", "last-of-a-domain-leaves"],
)
def test_changes_that_move_bindings_or_domains(
    policy: Any,
    start: Views,
    change: Callable[[Views], Views],
    path: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    forget_stages()
    settled = reuse.schedule_reusing("p", policy, None, (), start, 1).bindings
    views = new_pass(start)
    prior = reuse.schedule_reusing("p", policy, None, settled, views, 1).bindings
    later = change(views)
    with counting(monkeypatch) as counts:
        got = reuse.schedule_reusing("p", policy, None, prior, later, 1)
    assert summary(got) == fresh(policy, None, prior, later, 1)
    assert counts[path] == 1 and counts["again"] == 0, counts


def test_interleaved_fleets_equal_fresh_runs() -> None:
    """Two fleets scheduled in turn (as two hubs in one process would): each call compares
    with the fleet its entry saw, and a pass's facts stay usable after another pass began."""
    forget_stages()
    a, b = _base(), _add(_base(), "c99", {"env": "prod"})
    for _ in range(3):
        for key, views in (("p", a), ("q", b), ("p", b), ("q", a)):
            got = reuse.schedule_reusing(key, ALL_PROD, None, (), views, 1)
            assert summary(got) == fresh(ALL_PROD, None, (), views, 1)
        a, b = new_pass(a), new_pass(b)
    facts = fleet_facts(a)
    fleet_facts(b)
    assert facts.views is a and [v.name for v in facts.clusters] == sorted(a)


TEAM_PROD_N = policy_of(
    crp(
        "PickN",
        numberOfClusters=2,
        affinity={
            "clusterAffinity": {
                **required(PROD)["clusterAffinity"],
                **preferred((10, {"labelSelector": {"matchLabels": {"team": "x"}}}))[
                    "clusterAffinity"
                ],
            }
        },
    )
)


@pytest.mark.parametrize(
    ("change", "rebuilt"),
    [
        (lambda v: _relabel(v, "c00", team="x"), False),  # a dev cluster: filtered either way
        (lambda v: _relabel(v, "c00", team="x", env="prod"), True),  # it passes now
        (lambda v: _drop(v, "c00"), True),
    ],
    ids=["filtered-either-way", "passes-now", "removed"],
)
def test_changed_clusters_that_read_the_same_keep_the_statics(
    change: Callable[[Views], Views], rebuilt: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A changed cluster that every static plugin reads as before (`statics.reads_same`)
    keeps the last run's static results: none are made again (`Incremental`), and the outcome
    equals a fresh run's."""
    forget_stages()
    settled = reuse.schedule_reusing("p", TEAM_PROD_N, None, (), _base(), 1).bindings
    views = new_pass(_base())
    prior = reuse.schedule_reusing("p", TEAM_PROD_N, None, settled, views, 1).bindings
    made = []
    real = reuse.Incremental
    monkeypatch.setattr(reuse, "Incremental", lambda *a: made.append(1) or real(*a))
    later = change(views)
    got = reuse.schedule_reusing("p", TEAM_PROD_N, None, prior, later, 1)
    assert summary(got) == fresh(TEAM_PROD_N, None, prior, later, 1)
    assert bool(made) == rebuilt
    again = reuse.schedule_reusing("p", TEAM_PROD_N, None, prior, new_pass(later), 1)
    assert summary(again) == summary(got)


def test_fleet_facts_of_the_very_views() -> None:
    """A pass whose views are the very objects of the last one's takes their rows as they are;
    another view of a cluster is compared by its row."""
    views = _base()
    first = fleet_facts(views)
    second = fleet_facts(dict(views))
    assert second is not first and second.changed_since(first) == frozenset()
    assert second.rows == first.rows and second.names == first.names
    c03 = views["c03"]
    third = fleet_facts({**views, "c03": ClusterView("c03", c03.cluster, "left")})
    assert third.changed_since(second) == {"c03"} and third.rows["c03"][0] == "left"
    fourth = fleet_facts({**views, "c04": ClusterView("c04", views["c04"].cluster, None)})
    assert fourth.changed_since(third) == {"c03"}
    assert fourth.changed_since(first) == frozenset()


def test_an_empty_status_digests_as_no_status() -> None:
    """An agent's first report gives a cluster a status of heartbeats and agent conditions
    only: it reads to every plugin as no status, so the cluster does not count as changed;
    a reported property does."""
    bare = MemberCluster.model_validate(
        {
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": "a"},
            "spec": {},
        }
    )
    joined = bare.model_validate(
        {
            **bare.model_dump(by_alias=True, exclude_none=True),
            "status": {
                "agentStatus": [
                    {
                        "type": "MemberAgent",
                        "conditions": [{"type": "Joined", "status": "True", "reason": "Joined"}],
                    }
                ]
            },
        }
    )
    sized = bare.model_validate(
        {
            **bare.model_dump(by_alias=True, exclude_none=True),
            "status": {"properties": {"nodes": {"value": "3"}}},
        }
    )
    assert joined.status is not None
    assert cluster_digest(joined) == cluster_digest(bare)
    assert cluster_digest(sized) != cluster_digest(bare)

"""A PickAll run patched from the last one (`pickallpatch`) decides exactly as a fresh run of the
plain reference runner, on long sequences of passes that add, remove, relabel, retaint, retire
and re-verdict clusters while a rollout moves bindings, also with the decision cap lowered so
that the first 1000 / 20 limits bind; and the patch is what decides most passes."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from reconciler.schedule import pickallpatch, report, reuse
from reconciler.schedule.clusters import ClusterView
from reconciler.stagememo import forget_stages
from reconciler.state import Binding
from tests.unit.schedule.fleet import crp, required
from tests.unit.schedule.test_incremental import random_bindings, random_views
from tests.unit.schedule.test_reuse import counting, fresh, mutate, policy_of, reusing, rolled

Views = dict[str, ClusterView]
POLICIES = [
    policy_of(crp("PickAll")),
    policy_of(
        crp("PickAll", affinity=required({"labelSelector": {"matchLabels": {"env": "prod"}}}))
    ),
    policy_of(
        crp(
            "PickAll",
            affinity=required(
                {"labelSelector": {"matchExpressions": [{"key": "region", "operator": "Exists"}]}}
            ),
            tolerations=[{"key": "gpu", "operator": "Exists"}],
        )
    ),
]


def _retired(rng: random.Random, views: Views) -> Views:
    """Now and then a cluster marked for deletion (its bindings become Unscheduled)."""
    if rng.random() >= 0.15:
        return views
    name = rng.choice(sorted(views))
    old = views[name].cluster
    meta = old.metadata.model_copy(update={"deletion_timestamp": "2026-11-21T09:00:00Z"})
    gone = ClusterView(name, old.model_copy(update={"metadata": meta}), None)
    return {**views, name: gone}


def _unbound(rng: random.Random, bindings: tuple[Binding, ...]) -> tuple[Binding, ...]:
    """What else may happen to bindings between passes: one dropped, one marked Unscheduled,
    one of an older policy snapshot, one without its recorded decision."""
    out = list(bindings)
    if out and rng.random() < 0.2:
        out.pop(rng.randrange(len(out)))
    if out and rng.random() < 0.2:
        at = rng.randrange(len(out))
        out[at] = replace(out[at], state="Unscheduled", previous_state=out[at].state)
    if out and rng.random() < 0.2:
        at = rng.randrange(len(out))
        out[at] = replace(out[at], policy_index=0)
    if out and rng.random() < 0.3:
        at = rng.randrange(len(out))
        out[at] = replace(out[at], decision=None)
    return tuple(out)


def _run(seed: int, steps: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    forget_stages()
    rng = random.Random(seed)
    views: Views = random_views(rng, broken=False)
    policy = POLICIES[seed % len(POLICIES)]
    prior: tuple[Binding, ...] = tuple(random_bindings(rng, sorted(views)))
    with counting(monkeypatch) as counts:
        for step in range(steps):
            want = fresh(policy, None, prior, views, 1)
            got = reusing(policy, None, prior, views, 1)
            assert got == want, f"seed {seed} step {step}"
            prior = _unbound(rng, rolled(rng, got[0])) if rng.random() < 0.9 else prior
            views = _retired(rng, mutate(rng, views, step))
    return counts


@pytest.mark.parametrize("seed", range(30))
def test_patched_runs_equal_fresh_runs(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    counts = _run(seed, 16, monkeypatch)
    assert counts["patched"] >= 8, counts


@pytest.mark.parametrize("seed", range(12))
def test_patched_runs_equal_fresh_runs_at_the_decision_cap(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    cap = random.Random(seed).choice([30, 45, 60, 90])
    for module in (report, reuse, pickallpatch):
        monkeypatch.setattr(module, "MAX_DECISIONS", cap)
    counts = _run(seed, 12, monkeypatch)
    assert counts["patched"] >= 6, counts


def test_a_cluster_bound_twice_is_run_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    forget_stages()
    rng = random.Random(3)
    views = random_views(rng, broken=False)
    policy = POLICIES[0]
    first = reuse.schedule_reusing("p", policy, None, (), views, 1).bindings
    twice = (*first, replace(first[0], state="Unscheduled"))
    with counting(monkeypatch) as counts:
        got = reusing(policy, None, twice, views, 1)
    assert counts["patched"] == 0
    assert got == fresh(policy, None, twice, views, 1)


def _patched_policy(policy: Any) -> bool:
    views = random_views(random.Random(5), broken=False)
    forget_stages()
    reuse.schedule_reusing("p", policy, None, (), views, 1)
    last = reuse._ENTRIES.last("p")
    assert last is not None
    later = {n: ClusterView(n, v.cluster, v.ineligible_reason) for n, v in views.items()}
    del later[sorted(later)[0]]
    return (
        pickallpatch.patch_pick_all(last[1], (), reuse.fleet_facts(later), {sorted(views)[0]})
        is not None
    )


def test_only_pick_all_without_spread_is_patched() -> None:
    spread = {"topologySpreadConstraints": [{"topologyKey": "region", "maxSkew": 1}]}
    assert _patched_policy(POLICIES[0])
    assert not _patched_policy(policy_of(crp("PickAll", **spread)))
    assert not _patched_policy(policy_of(crp("PickN", numberOfClusters=3)))

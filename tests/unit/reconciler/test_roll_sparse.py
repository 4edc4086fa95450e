"""The rollout stage's steps that look only at some bindings of a placement give what looking at
every binding gives: `rollstage._settling` (the clusters the rolling update changed or classified
not ready), `rollsync.record_sync` (bindings with a sync error or a WorkSynchronized condition),
`rollmove.with_started` (a binding remembers that its RolloutStarted is already a status's).
Random placements, compared with a literal reading."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from reconciler import rollmemo, rollstage, rollsync, rollview
from reconciler.rollmove import with_started
from reconciler.rollout.rolling import STARTED_MESSAGE, STARTED_REASON
from reconciler.rollsync import with_sync
from reconciler.stagememo import forget_stages
from reconciler.state import Binding, BindingCondition
from tests.unit.reconciler.test_roll_memo import (
    APPLIED,
    D2,
    NOW,
    STARTED,
    SYNC_FAILED,
    T0,
    D,
    World,
    _entry,
)

STARTED_TRUE = BindingCondition("RolloutStarted", "True", STARTED_REASON, STARTED_MESSAGE, T0)
STALE = BindingCondition("RolloutStarted", "False", "RolloutNotStartedYet", "held", T0)
UNTRACKED = BindingCondition(
    "Available", "True", "NotAllWorkAreAvailabilityTrackable", "", NOW - timedelta(seconds=20)
)
CONDITIONS = [
    (),
    (STARTED,),
    (STARTED_TRUE, APPLIED),
    (APPLIED, STARTED_TRUE),
    (STALE, APPLIED),
    (STARTED, SYNC_FAILED),
    (SYNC_FAILED,),
    (STARTED_TRUE, UNTRACKED),
]


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


def _world(rng: random.Random) -> World:
    """A placement of up to 12 bindings in every state (a cluster may have two), contents
    current, older or none, reports for some, sync errors on some."""
    bindings = []
    for i in range(rng.randrange(13)):
        cluster = f"c{rng.randrange(i + 1)}" if rng.random() < 0.1 else f"c{i}"
        state = rng.choice(["Bound", "Bound", "Scheduled", "Unscheduled"])
        index = rng.choice([2, 3, 3])
        content = rng.choice([D, D2, None])
        bindings.append(Binding(cluster, state, 0, index, content=content))
        bindings[-1] = replace(bindings[-1], conditions=rng.choice(CONDITIONS))
    names = sorted({b.cluster for b in bindings})
    entries = {
        c: {"web": _entry(rng.choice([D, D2]), ("Available", "True", "AllWorkAreAvailable"))}
        for c in names
        if rng.random() < 0.5
    }
    errors = {c: "lost" for c in names if rng.random() < 0.3}
    assume = frozenset(c for c in names if rng.random() < 0.3)
    return World(bindings=tuple(bindings), entries=entries, sync_errors=errors, assume=assume)


def _rolled(world: World, everyone: bool, mp: pytest.MonkeyPatch) -> tuple[Any, ...]:
    """The rollout of `world` as the stage runs it; `everyone`: settling looks at every
    cluster (a literal reading)."""
    forget_stages()
    plan = world.plan()
    prior = world.prior_index()
    rollview.observe(plan, world.entries, world.now, prior)
    seen = (plan.state, rollview.placement_view(plan, world.assume))
    with mp.context() as m:
        if everyone:
            real = rollstage._settling

            def settling(
                plan: Any, now: Any, assume: Any, blocking: bool, _candidates: Any
            ) -> None:
                real(plan, now, assume, blocking, {b.cluster for b in plan.state.bindings})

            m.setattr(rollstage, "_settling", settling)
        due = rollstage._roll(plan, world.now, world.assume, prior, seen)
    return plan.state, dict(plan.waits), due


def test_settling_explains_what_looking_at_every_binding_explains(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(17)
    explained = 0
    for _ in range(400):
        world = _world(rng)
        got = _rolled(world, False, monkeypatch)
        assert got == _rolled(world, True, monkeypatch), world
        explained += any("untrackable" in w or "report" in w for w in got[1].values())
    assert explained > 20  # the tables do reach settling's messages


def _literal_sync(world: World, desired: dict[str, str]) -> tuple[Binding, ...]:
    plan = world.plan()
    plan.desired = desired
    live = set(plan.live_clusters())
    errors = world.sync_errors
    return tuple(
        with_sync(b, errors.get(b.cluster), NOW) if b.cluster in live else b
        for b in plan.state.bindings
    )


def test_record_sync_gives_what_syncing_every_live_binding_gives() -> None:
    rng = random.Random(18)
    changed = 0
    for _ in range(400):
        world = _world(rng)
        desired = {b.cluster: rng.choice([D, D2]) for b in world.bindings}
        for _ in range(2):  # afresh, then with what the first call remembered
            plan = world.plan()
            plan.desired = desired
            rollsync.record_sync({"web": plan}, NOW)
            assert plan.state.bindings == _literal_sync(world, desired), world
        changed += plan.state.bindings != world.bindings
    assert changed > 50


@pytest.mark.parametrize("conditions", CONDITIONS)
def test_started_remembered_on_the_binding_is_what_rebuilding_gives(
    conditions: tuple[BindingCondition, ...],
) -> None:
    """Asked again and again, for either status, in any order, the very object: always the
    result a binding never asked before gives."""
    for order in (["True", "True", "False", "True"], ["False", "False", "True", "False"]):
        b = Binding("c1", "Bound", 0, 3, content=D, conditions=conditions)
        for status in order:
            fresh = Binding("c1", "Bound", 0, 3, content=D, conditions=conditions)
            assert with_started(b, status, NOW) == with_started(fresh, status, NOW)
            assert (with_started(b, status, NOW) is b) == (
                with_started(fresh, status, NOW) is fresh
            )


@pytest.mark.parametrize("keyed", [False, True])
def test_an_unscheduled_binding_of_a_cluster_that_left_goes_when_observed(keyed: bool) -> None:
    """`rollstage._observe` drops the Unscheduled binding of a cluster no longer declared
    (whether or not `rollout_inputs` read the placement's clusters first) and keeps every
    binding while all their clusters are declared."""
    gone = Binding("gone", "Unscheduled", 0, 3, content=D, conditions=(STARTED,))
    world = World(bindings=(*World().bindings, gone))
    prior = world.prior_index()
    token = rollmemo.index_token(prior)
    for declared, kept in [
        (frozenset({"c1", "c2", "c3", "c4"}), ["c1", "c2", "c3", "c4"]),
        (frozenset({"c1", "c2", "c3", "c4", "gone"}), ["c1", "c2", "c3", "c4", "gone"]),
    ]:
        plan = world.plan()
        if keyed:
            rollmemo.rollout_inputs(plan, {}, prior, declared, frozenset(), token)
        views: dict[str, Any] = {}
        made: dict[str, Any] = {}
        rollstage._observe(plan, {}, {}, NOW, prior, declared, frozenset(), views, made, token)
        assert [b.cluster for b in plan.state.bindings] == kept
        assert made["web"] is plan.state


def test_dropping_departed_clusters_slices_out_what_a_literal_reading_drops() -> None:
    """`rollstage._drop_departed` (reading only the departed clusters' bindings) keeps exactly
    the bindings a literal reading keeps, in order, and the very state when none goes."""
    rng = random.Random(11)
    for _ in range(300):
        states = [rng.choice(["Bound", "Scheduled", "Unscheduled"]) for _ in range(12)]
        bindings = tuple(Binding(f"c{i:02d}", s, 0, 3, content=D) for i, s in enumerate(states))
        declared = frozenset(f"c{i:02d}" for i in range(12) if rng.random() < 0.7)
        plan = World(bindings=bindings).plan()
        before = plan.state
        rollstage._drop_departed(plan, declared, [b.cluster for b in bindings])
        literal = [b for b in bindings if b.state != "Unscheduled" or b.cluster in declared]
        assert list(plan.state.bindings) == literal
        assert all(a is b for a, b in zip(plan.state.bindings, literal, strict=True))
        assert (plan.state is before) == (len(literal) == len(bindings))

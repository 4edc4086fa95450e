"""The rollout stage reads only the bindings that changed since the call before
(`reconciler.rollsplice`, `reconciler.rollclass`, `rollstage._apply_rolling`, `rollsync`):
random sequences of passes - bindings inserted, removed and replaced, conditions, reports,
sync errors, assumed clusters and the clock changing, rollouts in progress fed back from one
pass to the next - give exactly what each pass gives from scratch (every memo forgotten)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from reconciler import rollmemo, rollstage, rollsync, rollview
from reconciler.manifests import manifests_content_hash
from reconciler.priorindex import RowsIndex, given_content
from reconciler.rollclass import classify_placement
from reconciler.rollmove import moved, with_started
from reconciler.rollout.model import BindingView, ObservedCondition
from reconciler.rollout.rolling import RollingDecision, classify
from reconciler.rollsplice import NEVER, Column, Rows, runs
from reconciler.stagememo import forget_stages
from reconciler.state import Binding
from tests.unit.reconciler.test_roll_memo import D2, NOW, D, World, _entry
from tests.unit.reconciler.test_roll_sparse import CONDITIONS


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


def _edited(rng: random.Random, items: list[Any], new: Any) -> list[Any]:
    """`items` with one to three random inserts, removals or replacements by `new()`."""
    out = list(items)
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(len(out) + 1)
        move = rng.choice(["insert", "remove", "replace"]) if out else "insert"
        if move == "insert":
            out.insert(at, new())
        elif move == "remove":
            del out[min(at, len(out) - 1)]
        else:
            out[min(at, len(out) - 1)] = new()
    return out


def test_runs_are_the_longest_identical_head_and_tail_that_do_not_overlap() -> None:
    rng = random.Random(1)
    pool = [object() for _ in range(6)]
    for _ in range(2000):
        old = [rng.choice(pool) for _ in range(rng.randrange(8))]
        new = _edited(rng, old, lambda: rng.choice(pool)) if rng.random() < 0.8 else list(old)
        head, tail = runs(tuple(old), tuple(new))
        n = min(len(old), len(new))
        want_head = next((i for i in range(n) if old[i] is not new[i]), n)
        rest = n - want_head
        want_tail = next((j for j in range(rest) if old[-1 - j] is not new[-1 - j]), rest)
        assert (head, tail) == (want_head, want_tail)


def test_a_column_is_every_items_value_and_makes_only_the_new_items() -> None:
    rng = random.Random(2)
    made: list[Any] = []

    def make(x: Any) -> Any:
        made.append(x)
        return (x, "value")

    column: Column[Any] = Column(make)
    items: list[Any] = [object() for _ in range(30)]
    context: Any = None
    for _ in range(300):
        before = list(items)
        items = _edited(rng, items, object)
        if rng.random() < 0.1:
            context = object()  # another context makes every value again
        made.clear()
        key = rng.choice(["p", "p", "q"])
        got = column.of(key, tuple(items), context)
        assert got == [(x, "value") for x in items]
        new = [x for x in items if all(x is not y for y in before)]
        assert len(made) <= len(items) and all(any(x is m for m in made) for x in new)


def test_one_inserted_item_is_the_only_one_made() -> None:
    made: list[Any] = []

    def make(x: Any) -> Any:
        made.append(x)
        return x

    column: Column[Any] = Column(make)
    items = tuple(object() for _ in range(50))
    column.of("p", items)
    made.clear()
    extra = object()
    column.of("p", (*items[:20], extra, *items[20:]))
    assert made == [extra]


def test_rows_give_a_result_only_for_an_equal_row_and_reuse_the_unchanged_ones() -> None:
    rng = random.Random(3)
    rows_memo: Rows[Any] = Rows()
    names = [f"c{i}" for i in range(20)]
    rows: dict[str, Any] = {c: (c, rng.randrange(3)) for c in names}
    for _ in range(400):
        before = dict(rows)
        names = _edited(rng, names, lambda: f"c{rng.randrange(60)}")
        for c in names:
            if c not in rows or rng.random() < 0.1:
                rows[c] = (c, rng.randrange(3))
        wanted = [rows[c] for c in names]
        found = rows_memo.lookup("p", names, wanted)
        for row, hit in zip(wanted, found, strict=True):
            assert hit is None or hit == ("result", row)
        unchanged = sum(1 for c in names if before.get(c) == rows[c])
        assert sum(hit is not None for hit in found) >= unchanged - 8 * 3  # edits only miss
        results = [
            ("result", row) if hit is None else hit for row, hit in zip(wanted, found, strict=True)
        ]
        stored = [NEVER if rng.random() < 0.05 else row for row in wanted]  # some read a clock
        rows_memo.end("p", names, stored, results)
        for c in names:
            peeked = rows_memo.peek("p", c, rows[c])
            kept = [r for n, r in zip(names, stored, strict=True) if n == c and r is not NEVER]
            assert peeked is None or (kept and peeked == ("result", rows[c]))


READY = ObservedCondition("Available", "True", "AllWorkAreAvailable")
UNTRACKABLE = ObservedCondition(
    "Available", "True", "NotAllWorkAreAvailabilityTrackable", "", NOW - timedelta(seconds=30)
)
FAILED = ObservedCondition("Applied", "False", "ApplyFailed")
DIFF = ObservedCondition("DiffReported", "True", "AllWorkHaveDiffReported")


def _view(rng: random.Random) -> BindingView:
    return BindingView(
        cluster=f"c{rng.randrange(40)}",
        state=rng.choice(["Bound", "Bound", "Scheduled", "Unscheduled"]),
        resource_index=rng.choice([None, 2, 3]),
        content=rng.choice([None, D, D2]),
        desired_content=rng.choice([D, D2]),
        deleting=rng.random() < 0.1,
        conditions=tuple(rng.sample([READY, UNTRACKABLE, FAILED, DIFF], rng.randrange(3))),
        desired_resource_index=rng.choice([None, 3]),
    )


def test_classifying_a_placement_is_classify_of_its_views() -> None:
    rng = random.Random(4)
    views = [_view(rng) for _ in range(25)]
    period = timedelta(seconds=60)
    for _ in range(600):
        views = _edited(rng, views, lambda: _view(rng))
        now = NOW + timedelta(seconds=rng.choice([0, 10, 40, 120]))
        got = classify_placement("p", tuple(views), now, period)
        assert got == classify(views, now, period)


def _next_world(rng: random.Random, world: World, bindings: tuple[Binding, ...]) -> World:
    """The next pass's inputs: last pass's bindings (a rollout in progress goes on) with a few
    inserted, removed or replaced, and reports, sync errors, assumed clusters, clock changed."""

    def new() -> Binding:
        b = Binding(
            f"c{rng.randrange(60)}",
            rng.choice(["Bound", "Scheduled", "Unscheduled"]),
            0,
            rng.choice([2, 3]),
            content=rng.choice([D, D2, None]),
        )
        return replace(b, conditions=rng.choice(CONDITIONS))

    edited = _edited(rng, list(bindings), new) if rng.random() < 0.8 else list(bindings)
    names = sorted({b.cluster for b in edited})
    entries = dict(world.entries)
    for c in rng.sample(names, min(len(names), rng.randrange(4))):
        entries[c] = {
            "web": _entry(rng.choice([D, D2]), ("Available", "True", "AllWorkAreAvailable"))
        }
    errors = dict(world.sync_errors)
    if rng.random() < 0.3 and names:
        errors = {rng.choice(names): "lost"} if rng.random() < 0.5 else {}
    assume = world.assume
    if rng.random() < 0.2:
        assume = frozenset(c for c in names if rng.random() < 0.3)
    now = world.now + timedelta(seconds=rng.choice([0, 0, 30, 90]))
    return replace(
        world,
        bindings=tuple(edited),
        entries=entries,
        sync_errors=errors,
        assume=assume,
        now=now,
        given={c: rng.choice([D, D2]) for c in names if rng.random() < 0.5},
    )


def _pass(world: World) -> tuple[Any, ...]:
    """One placement's rollout as the stage runs it: observe, view, roll, record sync."""
    plan = world.plan()
    prior = world.prior_index()
    rollview.observe(plan, world.entries, world.now, prior)
    view = rollview.placement_view(plan, world.assume)
    due = rollstage._roll(plan, world.now, world.assume, prior, (plan.state, view))
    rollsync.record_sync({"web": plan}, world.now)
    return plan.state, dict(plan.reports), dict(plan.desired), view, dict(plan.waits), due


@pytest.mark.parametrize("seed", range(6))
def test_passes_with_last_passes_results_give_what_fresh_passes_give(seed: int) -> None:
    rng = random.Random(seed)
    world = World(
        bindings=tuple(
            Binding(f"c{i}", "Bound", 0, 3, content=D, conditions=rng.choice(CONDITIONS))
            for i in range(30)
        )
    )
    worlds, results = [], []
    for _ in range(40):
        worlds.append(world)
        results.append(_pass(world))
        world = _next_world(rng, world, results[-1][0].bindings)
    moving = 0
    for world, got in zip(worlds, results, strict=True):
        forget_stages()
        assert got == _pass(world)
        moving += bool(got[4])
    assert moving > 3  # the sequences do hold rollouts in progress (clusters waiting)


def _literal_apply(plan: Any, decision: RollingDecision, now: Any) -> set[str]:
    """`rollstage._apply_rolling` as a step per binding (the reading it replaced)."""
    update, stale = set(decision.update), set(decision.stale)
    out, changed = [], set()
    for b in plan.state.bindings:
        made = b
        if b.cluster in update and b.state != "Unscheduled":
            made = moved(plan, b, now)
        elif b.cluster in stale and b.state != "Unscheduled":
            made = with_started(b, "False", now)
        elif not decision.need_roll and b.state != "Unscheduled":
            made = with_started(b, "True", now)
        if made is not b:
            changed.add(b.cluster)
        out.append(made)
    plan.state = replace(plan.state, bindings=tuple(out))
    return changed


def _decision(rng: random.Random, names: list[str]) -> RollingDecision:
    need_roll = rng.random() < 0.6
    picked = [c for c in names if rng.random() < 0.3] if need_roll else []
    stale = [c for c in picked if rng.random() < 0.5]
    update = [c for c in picked if c not in stale]
    return RollingDecision(
        1, 1, 1, 1, 1, update=tuple(update), stale=tuple(stale), need_roll=need_roll
    )


def test_applying_a_decision_changes_what_a_step_per_binding_changes() -> None:
    rng = random.Random(5)
    world = World(bindings=())
    applied = 0
    for _ in range(300):
        world = _next_world(rng, world, world.bindings)
        mine, literal = world.plan(), world.plan()
        for plan in (mine, literal):
            rollview.observe(plan, world.entries, world.now, world.prior_index())
        decision = _decision(rng, [b.cluster for b in mine.state.bindings])
        changed = rollstage._apply_rolling(mine, decision, world.now)
        assert changed == _literal_apply(literal, decision, world.now)
        assert mine.state == literal.state
        assert (mine.moved_to, mine.reports) == (literal.moved_to, literal.reports)
        applied += bool(changed) and not decision.need_roll
    assert applied > 20  # bindings without RolloutStarted True get it when nothing rolls


def test_observing_gives_what_observing_each_binding_gives() -> None:
    rng = random.Random(6)
    world = World(bindings=())
    counted = 0
    for _ in range(300):
        world = _next_world(rng, world, world.bindings)
        plan = world.plan()
        prior = world.prior_index()
        rollview.observe(plan, world.entries, world.now, prior)
        latest = plan.target()
        index = latest.index if latest else None
        bindings, reports = [], {}
        for b in world.bindings:
            entry = world.entries.get(b.cluster, {}).get("web")
            given = given_content(prior.get(b.cluster, {}).get("web"))
            facts = (index, plan.desired.get(b.cluster), entry, given)
            made, entry_counted = rollview._observed(b, facts, world.now)
            bindings.append(made)
            if entry_counted is not None:
                reports[b.cluster] = entry
        assert plan.state.bindings == tuple(bindings)
        assert plan.reports == reports
        assert plan.desired == {
            c: manifests_content_hash(plan.cluster(c).manifests or plan.manifests)
            for c in plan.targeted_clusters()
        }
        counted += bool(reports)
    assert counted > 100


def _rows_index(rows: dict[str, dict[str, Any]]) -> RowsIndex:
    index = RowsIndex()
    for cluster, row in rows.items():
        index[cluster] = {"web": row}
    index.by_placement = {"web": rows}
    return index


def test_the_content_given_is_each_rows_own_when_one_cluster_changed() -> None:
    rng = random.Random(7)
    world = World(bindings=())
    rows: dict[str, dict[str, Any]] = {}
    for _ in range(300):
        world = _next_world(rng, world, world.bindings)
        rows = dict(rows)  # the merged index's rows of a placement: another dict once changed
        for c in rng.sample([f"c{i}" for i in range(60)], rng.randrange(4)):
            rows[c] = {"contentHash": rng.choice([D, D2])} if rng.random() < 0.8 else {}
        plan = world.plan()
        got = rollmemo.given_contents(plan, _rows_index(rows), rng.randrange(3))
        assert got == tuple(given_content(rows.get(b.cluster)) for b in world.bindings)


def test_observing_with_the_entries_read_for_the_key_gives_the_same() -> None:
    rng = random.Random(8)
    world = World(bindings=())
    for _ in range(200):
        world = _next_world(rng, world, world.bindings)
        entries = [world.entries.get(b.cluster, {}).get("web") for b in world.bindings]
        results = []
        for got in (None, tuple(entries), (), tuple(entries[:-1])):
            plan = world.plan()
            rollview.observe(plan, world.entries, world.now, world.prior_index(), None, got)
            results.append((plan.state, plan.reports, plan.desired))
        assert results[1:] == results[:1] * 3

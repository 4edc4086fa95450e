"""The rollout stage's per-cluster memos (`reconciler.rollsplice.Rows` and `Column`, used
by `reconciler.rollview`): a placement observed and viewed with whatever the previous pass left in the memos gives exactly
what it gives afresh - when one binding's condition, one report entry, one cluster's desired
content, its override failures, the assumed-ready clusters or the clock changed - and the very
same objects, without rebuilding them, when nothing changed. `record_sync` skips a placement
only while nothing it reads changed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gitfleet.api import Condition
from gitfleet.api.canonical import placement_content_hash
from gitfleet.api.conditions import ConditionStatus
from gitfleet.api.report import PlacementReport
from reconciler import rollmemo, rollsync, rollview
from reconciler.manifests import ClusterManifests, Manifest
from reconciler.placement import PlacementPlan
from reconciler.priorindex import given_content
from reconciler.rollout.model import BindingView
from reconciler.stagememo import forget_stages
from reconciler.state import Binding, BindingCondition, PlacementState, Snapshot
from reconciler.status import Cond

T0 = datetime(2026, 11, 20, 9, tzinfo=UTC)
NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
LATER = NOW + timedelta(hours=1)


def _manifest(name: str, digest: str) -> Manifest:
    return Manifest(f"{name}.yaml", b"x", {"kind": "ConfigMap", "name": name}, "sha256:" + digest)


DEFAULT = (_manifest("a", "1" * 64),)
CUSTOM = (_manifest("a", "2" * 64),)
OTHER = (_manifest("a", "3" * 64),)
D, D2 = (
    placement_content_hash(m.entry for m in DEFAULT),
    placement_content_hash(m.entry for m in CUSTOM),
)
STARTED = BindingCondition("RolloutStarted", "True", "RolloutStarted", "started", T0)
SYNC_FAILED = BindingCondition("WorkSynchronized", "False", "SyncWorkFailed", "lost", T0)
APPLIED = BindingCondition("Applied", "True", "AllWorkHaveBeenApplied", "", T0)


def _bound(cluster: str, content: str | None, *conds: BindingCondition) -> Binding:
    return Binding(cluster, "Bound", 0, 3, content=content, conditions=(STARTED, *conds))


def _entry(given: str, *conds: tuple[str, ConditionStatus, str]) -> PlacementReport:
    return PlacementReport(
        key="web",
        name="web",
        resource_snapshot_index=3,
        content_hash=given,
        conditions=[Condition(type=t, status=s, reason=r) for t, s, r in conds],
    )


CUSTOM_C2 = ClusterManifests(cluster_overrides=("cro-0",), manifests=CUSTOM)


@dataclass
class World:
    """Everything one placement's observation and view read."""

    bindings: tuple[Binding, ...] = (
        _bound("c1", D, APPLIED),
        _bound("c2", D2),
        Binding("c3", "Scheduled", 0),
        _bound("c4", None),
    )
    custom: ClusterManifests = CUSTOM_C2
    entries: dict[str, dict[str, PlacementReport]] = field(
        default_factory=lambda: {
            "c1": {"web": _entry(D, ("Applied", "True", "AllWorkHaveBeenApplied"))},
            "c2": {"web": _entry(D2, ("Applied", "True", "AllWorkHaveBeenApplied"))},
        }
    )
    assume: frozenset[str] = frozenset({"c4"})
    strategy: dict[str, Any] = field(default_factory=lambda: {"type": "ClientSideApply"})
    now: datetime = NOW
    sync_errors: dict[str, str] = field(default_factory=dict)
    given: dict[str, str] = field(default_factory=dict)
    manifests: tuple[Manifest, ...] = DEFAULT
    index: int = 3

    def plan(self) -> PlacementPlan:
        state = PlacementState(
            key="web", resource_snapshots=(Snapshot(self.index, "h"),), bindings=self.bindings
        )
        return PlacementPlan(
            key="web",
            state=state,
            scheduled=Cond("Scheduled", "True", "Scheduled", "ok"),
            manifests=self.manifests,
            per_cluster={"c2": self.custom},
            apply_strategy=self.strategy,
            sync_errors=dict(self.sync_errors),
        )

    def prior_index(self) -> dict[str, dict[str, dict[str, Any]]]:
        given = {"c1": D, "c2": D2, **self.given}
        return {c: {"web": {"contentHash": h}} for c, h in given.items()}


def _rolled(world: World) -> tuple[Any, ...]:
    """Observe, view (the drivers' and one binding's own) and record sync, as the pass does."""
    plan = world.plan()
    rollview.observe(plan, world.entries, world.now, world.prior_index())
    view = rollview.placement_view(plan, world.assume)
    one = [rollview.binding_view(plan, b, world.assume) for b in plan.state.bindings]
    rollsync.record_sync({"web": plan}, world.now)
    ready = [v.ready(world.now, timedelta(minutes=5)) for v in view.bindings]
    return plan.state, dict(plan.reports), dict(plan.desired), view, one, ready


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


def _fresh_rolled(world: World) -> tuple[Any, ...]:
    forget_stages()
    return _rolled(world)


def _settled(world: World) -> World:
    """`world` as the hub meets it after two passes: its bindings are the last pass's."""
    for _ in range(2):
        world = replace(world, bindings=_rolled(world)[0].bindings)
    return world


def _same(w: World) -> World:
    return _settled(w)


def _unsettled(w: World) -> World:
    """c4's binding still has no content (a state written before its contents)."""
    return w


UNTRACKABLE: tuple[str, ConditionStatus, str] = (
    "Available",
    "True",
    "NotAllWorkAreAvailabilityTrackable",
)
ASSUMED = frozenset({"c1", "c2"})
Change = Callable[[World], World]
CHANGES: list[tuple[str, Change, Change]] = [
    (
        "a binding's condition",
        _same,
        lambda w: replace(w, bindings=(_bound("c1", D), *w.bindings[1:])),
    ),
    (
        "a report entry",
        _same,
        lambda w: replace(
            w, entries={**w.entries, "c1": {"web": _entry(D, ("Applied", "False", "Failed"))}}
        ),
    ),
    ("a report entry about other content", _same, lambda w: replace(w, entries={})),
    (
        "the content a cluster was given",
        _same,
        lambda w: replace(w, given={"c1": D2}),
    ),
    (
        "a cluster's desired content",
        _same,
        lambda w: replace(w, custom=replace(w.custom, manifests=OTHER)),
    ),
    (
        "a cluster's override failures",
        _same,
        lambda w: replace(w, custom=replace(w.custom, failures=(("a.yaml", "bad patch"),))),
    ),
    ("the target index", _same, lambda w: replace(w, index=4)),
    ("the target index, a binding without content", _unsettled, lambda w: replace(w, index=4)),
    (
        "the desired content of a binding without content",
        _unsettled,
        lambda w: replace(w, manifests=OTHER),
    ),
    ("the assumed clusters", _same, lambda w: replace(w, assume=ASSUMED)),
    (
        "the apply strategy of assumed clusters",
        lambda w: _settled(replace(w, assume=ASSUMED)),
        lambda w: replace(w, strategy={"type": "ReportDiff"}),
    ),
    (
        "a binding still marked unsynchronized",
        _same,
        lambda w: replace(w, bindings=(_bound("c1", D, APPLIED, SYNC_FAILED), *w.bindings[1:])),
    ),
    ("a sync error", _same, lambda w: replace(w, sync_errors={"c1": "lost to placement other"})),
    (
        "the clock, a binding waiting on untrackable objects",
        lambda w: _settled(
            replace(w, entries={**w.entries, "c1": {"web": _entry(D, UNTRACKABLE)}})
        ),
        lambda w: replace(w, now=LATER),
    ),
]


@pytest.mark.parametrize(
    ("before", "change"), [c[1:] for c in CHANGES], ids=[c[0] for c in CHANGES]
)
def test_a_changed_input_gives_what_a_fresh_pass_gives(before: Change, change: Change) -> None:
    base = before(World())
    _rolled(base)
    changed = change(base)
    assert _rolled(changed) == _fresh_rolled(changed)


def test_a_result_that_read_the_clock_is_not_reused_later() -> None:
    """A report moves c1 to an untrackable Available at NOW: observed again from the very same
    binding an hour later (a prior replayed), its condition takes the later time, as afresh."""
    world = World(entries={"c1": {"web": _entry(D, UNTRACKABLE)}})
    state = _rolled(world)[0]
    assert state.bindings[0].condition("Available").last_transition_time == NOW
    later = replace(world, now=LATER)
    again = _rolled(later)
    assert again == _fresh_rolled(later)
    assert again[0].bindings[0].condition("Available").last_transition_time == LATER
    waiting = again[5][0]
    assert waiting == (False, timedelta(minutes=5))


def test_a_sync_error_at_a_later_time_is_timed_then() -> None:
    world = World(sync_errors={"c1": "lost"})
    assert _rolled(world)[0].bindings[0].condition("WorkSynchronized").last_transition_time == NOW
    later = replace(world, now=LATER)
    again = _rolled(later)
    assert again == _fresh_rolled(later)
    assert again[0].bindings[0].condition("WorkSynchronized").last_transition_time == LATER


def test_unchanged_inputs_give_the_very_same_objects_without_rebuilding_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second pass reads the first pass's bindings (as the hub chains its passes)."""
    world = World()
    first = _rolled(world)
    settled = replace(world, bindings=first[0].bindings)
    second = _rolled(settled)
    calls = {"observed": 0, "view": 0, "sync": 0}

    def counting(name: str, real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(rollview, "_observed", counting("observed", rollview._observed))
    monkeypatch.setattr(rollview, "_view", counting("view", rollview._view))
    monkeypatch.setattr(rollsync, "with_sync", counting("sync", rollsync.with_sync))
    third = _rolled(settled)
    assert calls == {"observed": 0, "view": 0, "sync": 0}
    assert all(a is b for a, b in zip(third[0].bindings, second[0].bindings, strict=True))
    assert all(a is b for a, b in zip(third[3].bindings, second[3].bindings, strict=True))
    assert third == _fresh_rolled(settled)


def test_one_added_binding_is_the_only_one_observed_and_viewed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = World()
    settled = replace(world, bindings=_rolled(world)[0].bindings)
    _rolled(settled)
    seen: list[str] = []
    real_observed, real_view = rollview._observed, rollview._view

    def observed(b: Binding, *rest: Any) -> Any:
        seen.append(b.cluster)
        return real_observed(b, *rest)

    def view(b: Binding, *rest: Any) -> BindingView:
        seen.append(b.cluster)
        return real_view(b, *rest)

    monkeypatch.setattr(rollview, "_observed", observed)
    monkeypatch.setattr(rollview, "_view", view)
    added = replace(settled, bindings=(*settled.bindings, Binding("c9", "Scheduled", 0)))
    result = _rolled(added)
    assert set(seen) == {"c9"}
    monkeypatch.undo()
    assert result == _fresh_rolled(added)


def test_the_content_given_is_read_again_from_another_prior_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`rollmemo.rollout_inputs` reads the content each cluster was given once per prior index
    object: the same object again reads nothing, an equal-looking new one with one row changed
    gives that row's content."""
    plan, world = World().plan(), World()
    prior = world.prior_index()

    def inputs(index: Any) -> tuple[Any, ...] | None:
        return rollmemo.rollout_inputs(
            plan, {}, index, frozenset({"c1", "c2"}), frozenset(), rollmemo.index_token(index)
        )

    first = inputs(prior)
    assert first is not None and first[-3] == (D, D2, None, None)
    read: list[Any] = []

    def given(row: Any) -> str | None:
        read.append(row)
        return given_content(row)

    monkeypatch.setattr(rollmemo, "given_content", given)
    assert inputs(prior) == first and read == []
    moved = {**prior, "c1": {"web": {"contentHash": D2}}}
    again = inputs(moved)
    assert again is not None and again[-3] == (D2, D2, None, None) and len(read) == 4


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("error on one", lambda w: replace(w, sync_errors={"c2": "lost"})),
        ("error on one not live", lambda w: replace(w, sync_errors={"c3": "lost"})),
        ("error on one on older content", lambda w: replace(w, sync_errors={"c7": "lost"})),
        ("error on one given other content", lambda w: replace(w, sync_errors={"c8": "lost"})),
        ("cluster joined", lambda w: replace(w, bindings=(*w.bindings, _bound("c5", D)))),
        ("its binding changed", lambda w: replace(w, bindings=(_bound("c1", D), *w.bindings[1:]))),
    ],
)
def test_record_sync_looks_at_the_changed_clusters_only(
    name: str, change: Callable[[World], World], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a pass that changed nothing, one cluster's binding or sync error changed: only
    that cluster's binding is synced again, and the bindings are a fresh pass's."""
    older = Binding("c7", "Bound", 0, 2, content=D, conditions=(STARTED,))
    others = (_bound("c6", D, SYNC_FAILED), older, _bound("c8", D2))  # c8 is to get D
    world = World(bindings=(*World().bindings, *others))
    settled = replace(world, bindings=_rolled(world)[0].bindings)
    _rolled(settled)  # changes nothing: remembered
    changed = change(settled)
    synced: list[str] = []
    real = rollsync.with_sync

    def counting(b: Binding, *rest: Any) -> Any:
        synced.append(b.cluster)
        return real(b, *rest)

    monkeypatch.setattr(rollsync, "with_sync", counting)
    warm = _rolled(changed)
    monkeypatch.undo()
    assert warm == _fresh_rolled(changed), name
    assert len(synced) <= 1, (name, synced)

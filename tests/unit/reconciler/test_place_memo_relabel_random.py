"""Random relabels against computing afresh: a remembered plan patched for the clusters that
changed (`placememo._rescheduled`: scheduled again or not, the relabelled targeted clusters'
override results made again by `placepatch.rerendered`) gives exactly the tree every placement
computed afresh gives, over chains of relabels (the memos as the earlier patches left them),
with the prior kept or moved on; and a relabel only overrides read patches plans rather than
placing them again."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.load.model import FleetSnapshot
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo, placepatch
from reconciler.pass_ import PassResult, reconcile
from reconciler.placement import place
from reconciler.state import State, read_state
from renderers import load_fleet
from tests.golden.test_golden import CASES, case_spec
from tests.unit.reconciler.test_place_memo import _same
from tests.unit.reconciler.test_place_memo_labels import _relabel

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
STEPS = 6


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    placememo.forget()
    yield
    placememo.forget()


def _fleet(tmp_path: Path, seed: int) -> FleetSnapshot:
    write_fleet(build_fleet(FleetSize(16, 12, 48, 10), seed=seed), tmp_path)
    return load_fleet(WorkdirTree(tmp_path))


def _values(fleet: FleetSnapshot) -> dict[str, list[str | None]]:
    """Each label key of the fleet -> the values clusters have for it, a new one, removal; and
    a key no cluster has."""
    seen: dict[str, set[str]] = {}
    for cluster in fleet.clusters.values():
        for key, value in (cluster.metadata.labels or {}).items():
            seen.setdefault(key, set()).add(value)
    out = {k: [*sorted(v), "relabelled", None] for k, v in sorted(seen.items())}
    return {**out, "gitfleet.test/added": ["x", None]}


def _step(rng: random.Random, fleet: FleetSnapshot, only: str | None) -> FleetSnapshot:
    """One to three clusters relabelled at random (with key `only` when given)."""
    values = _values(fleet)
    names = sorted(fleet.clusters)
    for cluster in rng.sample(names, rng.randint(1, min(3, len(names)))):
        key = only or rng.choice(sorted(values))
        fleet = _relabel(fleet, cluster, key, rng.choice(values.get(key, ["x"])))
    return fleet


def _chain(fleet: FleetSnapshot, seed: int, only: str | None) -> list[tuple[Any, ...]]:
    """Relabel passes in a row, the memos as the passes before left them: (fleet, prior, time,
    result) of each. The prior stays (plans are patched) or moves on, and a step relabels or
    goes back to the labels before the last step, at random."""
    rng = random.Random(seed)
    result = reconcile(fleet, State(), None, NOW)
    prior = read_state(result.files)[0]
    passes: list[tuple[Any, ...]] = []
    back: FleetSnapshot | None = None
    for k in range(STEPS):
        later = NOW + timedelta(minutes=k + 1)
        if rng.random() < 0.3:
            prior = read_state(result.files)[0]
        reconcile(fleet, prior, None, later)  # remembered under these labels and prior
        if back is not None and rng.random() < 0.5:
            fleet, back = back, fleet
        else:
            fleet, back = _step(rng, fleet, only), fleet
        result = reconcile(fleet, prior, None, later)
        passes.append((fleet, prior, later, result))
    return passes


def _fresh_equal(passes: list[tuple[Any, ...]]) -> None:
    for fleet, prior, later, result in passes:
        placememo.forget()
        fresh: PassResult = reconcile(fleet, prior, None, later)
        _same(result, fresh)


def _placed_alike(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every plan `_rescheduled` patches is checked against `place` run afresh on the same
    inputs: equal, and its per-cluster results in the same order. The keys checked."""
    checked: list[str] = []
    real = placememo._rescheduled

    def compared(key: str, placement: Any, prior: Any, inputs: Any, *rest: Any) -> Any:
        out = real(key, placement, prior, inputs, *rest)
        if out is not None:
            fresh = place(key, placement, prior, *inputs)
            assert out == fresh
            assert list(out.per_cluster.items()) == list(fresh.per_cluster.items())
            checked.append(key)
        return out

    monkeypatch.setattr(placememo, "_rescheduled", compared)
    return checked


@pytest.mark.parametrize("seed", range(4))
def test_random_relabel_chains_give_the_fresh_tree(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet = _fleet(tmp_path, seed)
    checked = _placed_alike(monkeypatch)
    passes = _chain(fleet, seed, None)
    assert checked
    _fresh_equal(passes)


@pytest.mark.parametrize("seed", range(3))
def test_relabels_only_overrides_read_patch_plans_as_placing_afresh_would(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tier` is read by the generated overrides (rule selectors, label variables) and by some
    placements' preferences: the plans are patched, and equal to placing them afresh."""
    fleet = _fleet(tmp_path, seed)
    patched: list[str] = []
    real = placepatch.rerendered

    def counted(plan: Any, *args: Any) -> Any:
        out = real(plan, *args)
        if out is not None and out is not plan.per_cluster:
            patched.append(plan.key)
        return out

    monkeypatch.setattr(placememo, "rerendered", counted)
    checked = _placed_alike(monkeypatch)
    passes = _chain(fleet, seed, "tier")
    assert set(patched) <= set(checked)
    assert patched  # the patch path ran (and made other override results)
    _fresh_equal(passes)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_random_relabel_chains_on_the_golden_fleets(
    case: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The golden fleets' overrides select clusters by label (so a relabel adds a cluster's
    result or drops it) and their bindings keep unscheduled clusters."""
    spec = case_spec(case)
    fleet = load_fleet(WorkdirTree((case / spec.get("fleet", "fleet")).resolve()))
    if not fleet.clusters:
        pytest.skip("no clusters")
    _placed_alike(monkeypatch)
    _fresh_equal(_chain(fleet, len(case.name), None))

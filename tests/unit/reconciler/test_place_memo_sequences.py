"""Random sequences of passes that add, remove and relabel clusters (read and unread label keys,
bound and unbound clusters), each pass from the state the one before left, give exactly what
a fresh full computation of every placement gives for the same input: every output file,
error, wakeup and trailer, and every placement's decisions, Scheduled condition and
explanations. Reuse (`placememo`, `schedule.reuse`, `schedule.pickallpatch`) must also carry
most placements through such passes without running `place`."""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.load.model import FleetSnapshot
from gitfleet.repo.workdir import WorkdirTree
from reconciler import passkey, placememo
from reconciler.override import OverrideIndex, build_override_index
from reconciler.pass_ import PassResult, reconcile
from reconciler.select import build_index
from reconciler.state import State, read_state
from renderers import load_fleet
from tests.unit.reconciler.test_place_memo import _same

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
VALUES = {
    "region": ["eastus", "westus", "westeurope", "x-new"],
    "env": ["prod", "dev", "staging"],
    "tier": ["gold", "silver", "bronze"],
    "team": ["a", "b"],  # read by nothing
}


def _relabelled(fleet: FleetSnapshot, rng: random.Random) -> FleetSnapshot:
    name = rng.choice(sorted(fleet.clusters))
    old = fleet.clusters[name]
    labels = dict(old.metadata.labels or {})
    key = rng.choice(sorted(VALUES))
    if key in labels and rng.random() < 0.2:
        del labels[key]
    else:
        labels[key] = rng.choice(VALUES[key])
    meta = old.metadata.model_copy(update={"labels": labels})
    clusters = {**fleet.clusters, name: old.model_copy(update={"metadata": meta})}
    return dataclasses.replace(fleet, clusters=clusters)


def _added(fleet: FleetSnapshot, rng: random.Random, step: int) -> FleetSnapshot:
    source = fleet.clusters[rng.choice(sorted(fleet.clusters))]
    name = f"{rng.choice(['aaa', 'mmm', 'zzz'])}-added-{step}"
    labels = {k: rng.choice(v) for k, v in VALUES.items() if rng.random() < 0.9}
    meta = source.metadata.model_copy(update={"name": name, "labels": labels})
    clusters = {**fleet.clusters, name: source.model_copy(update={"metadata": meta})}
    return dataclasses.replace(fleet, clusters=clusters)


def _removed(fleet: FleetSnapshot, rng: random.Random) -> FleetSnapshot:
    name = rng.choice(sorted(fleet.clusters))
    return dataclasses.replace(
        fleet, clusters={k: v for k, v in fleet.clusters.items() if k != name}
    )


def _resource_edited(fleet: FleetSnapshot, rng: random.Random, step: int) -> FleetSnapshot:
    """One ConfigMap's data changed (the other objects, and every placement object, stay)."""
    at = rng.choice([i for i, r in enumerate(fleet.resources) if r.kind == "ConfigMap"])
    old = fleet.resources[at]
    obj = {**old.obj, "data": {"edited": str(step)}}
    resources = [
        *fleet.resources[:at],
        dataclasses.replace(old, obj=obj),
        *fleet.resources[at + 1 :],
    ]
    return dataclasses.replace(fleet, resources=resources, commit=f"commit-{step}")


def _placement_edited(fleet: FleetSnapshot, rng: random.Random, step: int) -> FleetSnapshot:
    """One placement's revision history limit changed (a new object; the others stay)."""
    name = rng.choice(sorted(fleet.placements))
    old = fleet.placements[name]
    spec = old.spec.model_copy(update={"revision_history_limit": 3 + step % 5})
    placements = {**fleet.placements, name: old.model_copy(update={"spec": spec})}
    return dataclasses.replace(fleet, placements=placements)


def _edited(fleet: FleetSnapshot, rng: random.Random, step: int) -> FleetSnapshot:
    roll = rng.random()
    if roll < 0.3:
        return _relabelled(fleet, rng)
    if roll < 0.55 or len(fleet.clusters) < 8:
        return _added(fleet, rng, step)
    if roll < 0.75:
        return _removed(fleet, rng)
    if roll < 0.87:
        return _resource_edited(fleet, rng, step)
    if roll < 0.97:
        return _placement_edited(fleet, rng, step)
    return fleet


def _decided(result: PassResult) -> dict[str, Any]:
    return {
        key: (plan.decisions, plan.scheduled, [plan.explanations[n] for n in plan.explanations])
        for key, plan in result.plans.items()
    }


@pytest.mark.parametrize("seed", range(6))
def test_cluster_change_sequences_equal_fresh_passes(
    seed: int, tmp_path: Path, computed: list[str]
) -> None:
    write_fleet(build_fleet(FleetSize(20, 14, 50, 8), seed=seed), tmp_path)
    fleet = load_fleet(WorkdirTree(tmp_path))
    rng = random.Random(seed)
    prior = read_state(reconcile(fleet, State(), None, NOW).files)[0]
    passes = []
    ran = []
    for step in range(12):
        fleet = _edited(fleet, rng, step)
        now = NOW + timedelta(minutes=step + 1)
        computed.clear()
        result = reconcile(fleet, prior, None, now)
        ran.append(len(computed))
        passes.append((fleet, prior, now, result, _decided(result)))
        prior = read_state(result.files)[0]
    for step, (fleet, prior, now, result, decided) in enumerate(passes):
        placememo.forget()
        fresh = reconcile(fleet, prior, None, now)
        _same(result, fresh)
        assert decided == _decided(fresh), f"step {step}"
    total = len(fleet.placements) + len(fleet.resource_placements)
    assert sum(ran[1:]) < total * (len(ran) - 1) / 2, ran


def test_the_inputs_token_changes_with_each_part(tmp_path: Path) -> None:
    write_fleet(build_fleet(FleetSize(6, 4, 12, 4), seed=1), tmp_path)
    fleet = load_fleet(WorkdirTree(tmp_path))
    overrides, _ = build_override_index(fleet)
    inputs = cast(Any, SimpleNamespace(overrides=overrides, override_names={}))
    fewer = cast(
        Any, SimpleNamespace(overrides=OverrideIndex(overrides.overrides[1:]), override_names={})
    )
    named = cast(Any, SimpleNamespace(overrides=overrides, override_names={"o": "o-1"}))
    others = [
        lambda index: (("other",), index, inputs),
        lambda index: (("rest",), build_index(fleet.resources[1:]), inputs),
        lambda index: (("rest",), build_index(fleet.resources, skipped_namespaces=["x"]), inputs),
        lambda index: (("rest",), index, fewer),
        lambda index: (("rest",), index, named),
    ]
    for other in others:
        index = build_index(fleet.resources)  # the entries are the last index's objects
        token = passkey.inputs_token(("rest",), index, inputs)
        assert token == passkey.inputs_token(("rest",), build_index(fleet.resources), inputs)
        assert passkey.inputs_token(*other(index)) != token


def test_a_placement_behind_its_selection_records_each_pass_commit(
    tmp_path: Path, computed: list[str]
) -> None:
    """From the same prior (its latest snapshot not the selection's), two passes of other
    commits record each its own commit: the commit is part of the key then."""
    write_fleet(build_fleet(FleetSize(8, 6, 20, 2), seed=2), tmp_path)
    fleet = dataclasses.replace(load_fleet(WorkdirTree(tmp_path)), commit="commit-a")
    prior = read_state(reconcile(fleet, State(), None, NOW).files)[0]
    edited = _resource_edited(fleet, random.Random(1), 1)
    first = reconcile(dataclasses.replace(edited, commit="commit-b"), prior, None, NOW)
    later = dataclasses.replace(edited, commit="commit-c")
    reused = reconcile(later, prior, None, NOW)
    placememo.forget()
    _same(reused, reconcile(later, prior, None, NOW))
    assert reused.files != first.files


def test_a_placement_back_after_a_pass_without_it_selects_again(
    tmp_path: Path, computed: list[str]
) -> None:
    """A placement absent from a pass that changed the resources, back (the same object) in
    a pass with the same resources: what it selected before that change is not taken."""
    write_fleet(build_fleet(FleetSize(8, 6, 20, 2), seed=3), tmp_path)
    fleet = load_fleet(WorkdirTree(tmp_path))
    prior = read_state(reconcile(fleet, State(), None, NOW).files)[0]
    resources = [  # every ConfigMap edited, so the absent placement's are too
        dataclasses.replace(r, obj={**r.obj, "data": {"edited": "yes"}})
        if r.kind == "ConfigMap"
        else r
        for r in fleet.resources
    ]
    edited = dataclasses.replace(fleet, resources=resources)
    name = sorted(fleet.placements)[0]
    without = dataclasses.replace(
        edited, placements={k: v for k, v in edited.placements.items() if k != name}
    )
    prior = read_state(reconcile(without, prior, None, NOW).files)[0]
    back = reconcile(edited, prior, None, NOW)
    placememo.forget()
    _same(back, reconcile(edited, prior, None, NOW))

"""A placement's key parts (`placememo._parts`) are made again only in part when the resources
changed: a placement that selects the very same objects, under the same overrides and
pass-wide inputs, keeps its declared JSON, serving overrides and label keys. Random sequences
of resource and override edits (alone and in the same pass), each pass from the state the one
before left, give exactly what a fresh computation gives; and the compiled overrides
(`override.index._compile`, once per override object) follow an edited or moved override."""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.load.model import FleetSnapshot, Origin
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo
from reconciler.override import build_override_index
from reconciler.pass_ import reconcile
from reconciler.state import State, read_state
from renderers import load_fleet
from tests.unit.reconciler.test_place_memo import _same
from tests.unit.reconciler.test_place_memo_sequences import _resource_edited

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)


def _fleet(tmp_path: Path, seed: int) -> FleetSnapshot:
    write_fleet(build_fleet(FleetSize(20, 14, 50, 8), seed=seed), tmp_path)
    return load_fleet(WorkdirTree(tmp_path))


def _override_edited(fleet: FleetSnapshot, rng: random.Random, step: int) -> FleetSnapshot:
    """One override's first patch value changed (a new object; the others stay)."""
    kinds = [k for k in ("cluster_overrides", "resource_overrides") if getattr(fleet, k)]
    kind = rng.choice(kinds)
    return _with_override_edited(fleet, kind, rng.choice(sorted(getattr(fleet, kind))), step)


def _with_override_edited(fleet: FleetSnapshot, kind: str, key: Any, step: int) -> FleetSnapshot:
    table = getattr(fleet, kind)
    old = table[key]
    doc = old.model_dump(by_alias=True, exclude_none=True, mode="json")
    rules = doc["spec"]["policy"]["overrideRules"]
    op = next(r["jsonPatchOverrides"][0] for r in rules if r.get("jsonPatchOverrides"))
    op["value"] = step + 2 if isinstance(op["value"], int) else f"s{step}"
    return dataclasses.replace(fleet, **{kind: {**table, key: type(old).model_validate(doc)}})


def _step(fleet: FleetSnapshot, rng: random.Random, step: int) -> FleetSnapshot:
    roll = rng.random()
    if roll < 0.4:  # both in one pass: the entries and the overrides of the token change
        return _override_edited(_resource_edited(fleet, rng, step), rng, step)
    if roll < 0.8:
        return _resource_edited(fleet, rng, step)
    return _override_edited(fleet, rng, step)


@pytest.mark.parametrize("seed", range(4))
def test_resource_and_override_edit_sequences_equal_fresh_passes(
    seed: int, tmp_path: Path, computed: list[str]
) -> None:
    fleet = _fleet(tmp_path, seed)
    rng = random.Random(seed)
    prior = read_state(reconcile(fleet, State(), None, NOW).files)[0]
    passes = []
    for step in range(10):
        fleet = _step(fleet, rng, step)
        now = NOW + timedelta(minutes=step + 1)
        result = reconcile(fleet, prior, None, now)
        passes.append((fleet, prior, now, result))
        prior = read_state(result.files)[0]
    for fleet, prior, now, result in passes:
        placememo.forget()
        _same(result, reconcile(fleet, prior, None, now))


def test_an_edited_resource_makes_only_its_placements_parts_again(
    tmp_path: Path, computed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet = _fleet(tmp_path, 1)
    prior = read_state(reconcile(fleet, State(), None, NOW).files)[0]
    made: list[Any] = []
    real = placememo.label_keys
    monkeypatch.setattr(placememo, "label_keys", lambda *a: made.append(a[0]) or real(*a))
    edited = _resource_edited(fleet, random.Random(2), 1)
    result = reconcile(edited, prior, None, NOW)
    assert len(made) == 1, made  # the placement of the edited ConfigMap, no other
    placememo.forget()
    _same(result, reconcile(edited, prior, None, NOW))


def test_an_unchanged_override_object_is_compiled_once(tmp_path: Path) -> None:
    fleet = _fleet(tmp_path, 1)
    first, _ = build_override_index(fleet)
    again, _ = build_override_index(fleet)
    assert all(a.rules is b.rules for a, b in zip(first.overrides, again.overrides, strict=True))


def _first_value(index: Any, key: str) -> Any:
    override = next(o for o in index.overrides if o.key == key)
    op = next(r.ops[0] for r in override.rules if r.ops)
    return override.hash, op.value, override.origin


def test_an_edited_or_moved_override_is_compiled_anew(tmp_path: Path) -> None:
    fleet = _fleet(tmp_path, 1)
    before = {
        o.key: _first_value(build_override_index(fleet)[0], o.key)
        for o in build_override_index(fleet)[0].overrides
    }
    edited = _override_edited(fleet, random.Random(0), 5)
    index = build_override_index(edited)[0]
    changed = [k for k in before if _first_value(index, k) != before[k]]
    assert len(changed) == 1, changed
    assert _first_value(index, changed[0])[1] in (7, "s5")
    ident = next(k for k in fleet.origins if k[0] == "ClusterResourceOverride")
    key = f"ClusterResourceOverride/{ident[2]}"
    moved = Origin(file="overrides/moved.yaml", doc=1, line=7)
    shifted = dataclasses.replace(fleet, origins={**fleet.origins, ident: moved})
    assert _first_value(build_override_index(shifted)[0], key)[2] == moved
    assert _first_value(build_override_index(fleet)[0], key)[2] != moved


def _unplaceable_added(fleet: FleetSnapshot) -> FleetSnapshot:
    """A ConfigMap with a label the API server refuses, next to the first ConfigMap: its
    placement matches it but cannot place it (its selection's hash stays)."""
    old = next(r for r in fleet.resources if r.kind == "ConfigMap")
    meta = {**old.obj["metadata"], "name": "unplaceable", "labels": {"-bad-": "x"}}
    bad = dataclasses.replace(old, obj={**old.obj, "metadata": meta})
    return dataclasses.replace(fleet, resources=[*fleet.resources, bad])


def test_an_unplaceable_match_is_part_of_the_key(tmp_path: Path, computed: list[str]) -> None:
    fleet = _fleet(tmp_path, 2)
    prior = read_state(reconcile(fleet, State(), None, NOW).files)[0]
    prior = read_state(reconcile(fleet, prior, None, NOW).files)[0]
    added = _unplaceable_added(fleet)
    result = reconcile(added, prior, None, NOW)
    assert computed, "the placement matching it is computed again"
    placememo.forget()
    _same(result, reconcile(added, prior, None, NOW))


def _selecting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The placements `placememo` selects for, in order."""
    selected: list[str] = []
    real = placememo.select_read
    monkeypatch.setattr(
        placememo, "select_read", lambda p, i: selected.append(p.metadata.name) or real(p, i)
    )
    return selected


@pytest.mark.parametrize(
    ("edit", "selects"),
    [
        ("resource", "few"),  # only placements whose lookups find the edited ConfigMap
        ("resource and override", "all"),  # the overrides changed too: no lookup is trusted
        ("nothing", "none"),
    ],
)
def test_an_edited_resource_selects_again_only_for_placements_that_look_it_up(
    edit: str, selects: str, tmp_path: Path, computed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet = _fleet(tmp_path, 3)
    prior = read_state(reconcile(fleet, State(), None, NOW).files)[0]
    selected = _selecting(monkeypatch)
    rng = random.Random(4)
    edited = {
        "resource": lambda: _resource_edited(fleet, rng, 1),
        "resource and override": lambda: _override_edited(_resource_edited(fleet, rng, 1), rng, 1),
        "nothing": lambda: dataclasses.replace(fleet, resources=list(fleet.resources)),
    }[edit]()
    result = reconcile(edited, prior, None, NOW)
    total = len(fleet.placements) + len(fleet.resource_placements)
    count = {"few": (1 <= len(selected) < total / 2), "all": len(selected) == total}
    assert count.get(selects, not selected), (selects, selected)
    placememo.forget()
    _same(result, reconcile(edited, prior, None, NOW))


@pytest.mark.parametrize("restricted", [True, False])
def test_an_edited_override_selects_again_only_for_the_placements_it_may_serve(
    restricted: bool, tmp_path: Path, computed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An override restricted to one placement: that placement only (its parts are made
    again, and its plan); one serving any placement: every placement."""
    fleet = _fleet(tmp_path, 3)
    prior = read_state(reconcile(fleet, State(), None, NOW).files)[0]
    prior = read_state(reconcile(fleet, prior, None, NOW).files)[0]
    reconcile(fleet, prior, None, NOW)  # every plan remembered with this prior
    selected = _selecting(monkeypatch)
    key, cro = next(
        (k, o)
        for k, o in sorted(fleet.cluster_overrides.items())
        if (o.spec.placement is not None) == restricted
    )
    edited = _with_override_edited(fleet, "cluster_overrides", key, 1)
    computed.clear()
    result = reconcile(edited, prior, None, NOW)
    if restricted:
        assert cro.spec.placement is not None
        assert selected == [cro.spec.placement.name], selected
        assert computed == [cro.spec.placement.name], computed
    else:
        assert len(selected) == len(fleet.placements), selected
    placememo.forget()
    _same(result, reconcile(edited, prior, None, NOW))

"""A pass that changes nothing makes no new object where the last pass's still holds: a reused
plan keeps its state (its origin file already recorded), a placement keeps its key parts
(`placememo._PARTS`), and an override named after the same snapshot stays the same object
(`OverrideIndex.with_snapshots`); so planning costs next to nothing per unchanged placement."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.load.model import FleetSnapshot
from gitfleet.repo.workdir import WorkdirTree
from reconciler import passstages, placememo
from reconciler.override import build_override_index
from reconciler.pass_ import reconcile
from reconciler.state import Snapshot, State, read_state
from renderers import load_fleet

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)


def _fleet(tmp_path: Path) -> FleetSnapshot:
    write_fleet(build_fleet(FleetSize(12, 10, 30, 6), seed=3), tmp_path)
    return load_fleet(WorkdirTree(tmp_path))


def test_unchanged_placements_keep_their_states_and_parts(
    tmp_path: Path, computed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet = _fleet(tmp_path)
    states: list[dict[str, Any]] = []
    real = passstages._plan_all

    def planning(*args: Any) -> Any:
        made = real(*args)
        states.append({key: plan.state for key, plan in made[0].items()})
        return made

    monkeypatch.setattr(passstages, "_plan_all", planning)
    prior = State()
    parts = []
    for _ in range(3):
        prior = read_state(reconcile(fleet, prior, None, NOW).files)[0]
        parts.append({key: placememo._PARTS.last(key) for key in states[-1]})
    kept = {key: entry[1] for key, entry in parts[1].items() if entry is not None}
    assert len(kept) == len(states[-1]) > 1
    for key, state in states[-1].items():
        last = placememo._PLANS.last(key)
        assert last is not None and state is last[1].plan.state, key  # not copied
        assert state.origin_file.startswith("placements/")
        found = parts[2][key]
        assert found is not None and found[1] is kept[key], key  # not made again


def test_an_override_named_as_before_is_the_same_object(tmp_path: Path) -> None:
    fleet = _fleet(tmp_path)
    index, _ = build_override_index(fleet)
    key = index.overrides[0].key
    snapshots = {o.key: (Snapshot(index=2, hash=o.hash),) for o in index.overrides}
    first = index.with_snapshots(snapshots).overrides
    again = build_override_index(fleet)[0].with_snapshots(snapshots).overrides
    assert all(a is b for a, b in zip(first, again, strict=True))
    moved = {**snapshots, key: (*snapshots[key], Snapshot(index=3, hash="other"))}
    later = index.with_snapshots(moved).overrides
    assert [o.snapshot.rsplit("-", 1)[1] for o in later[:1]] == ["3"]
    assert later[0] is not first[0] and all(
        a is b for a, b in zip(first[1:], later[1:], strict=True)
    )

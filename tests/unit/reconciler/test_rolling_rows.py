"""A rolling placement's rows across passes (`assembleheld.rollout_kept`, `merge_rolling`,
`layoutcells.clean_layout`, `indexfiles`): an override flipping between two values each pass
while the rollout moves some clusters and stops at others gives, with the memos each pass
leaves for the next, exactly the output of the same chain computed with every memo forgotten
before each pass; a cluster kept where it was laid out last pass keeps that very row, and one
laid out from the content it had two passes ago gets that pass's very row. The merge of kept
and live rows, on random rows, lists per cluster what the separate mappings list."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping
from datetime import timedelta
from operator import is_
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from benchmarks.hub_scenarios import scenarios
from gitfleet.repo.workdir import WorkdirTree
from reconciler import assembleheld, indexfiles, placememo
from reconciler.assembleheld import merge_rolling
from reconciler.indexrows import Rows
from reconciler.pass_ import PassResult, reconcile
from reconciler.state import State, read_state
from renderers import load_fleet
from tests.unit.reconciler.test_layout_diff import NOW
from tests.unit.reconciler.test_place_memo import _same

Step = Callable[[Path], object] | None


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    placememo.forget()
    yield
    placememo.forget()


@pytest.fixture
def substituted(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """What each `same_listing` call of `rollout_kept` answered."""
    calls: list[bool] = []
    real = indexfiles.same_listing

    def counting(row: Any, other: Any) -> bool:
        calls.append(real(row, other))
        return calls[-1]

    monkeypatch.setattr(assembleheld, "same_listing", counting)
    return calls


def _steps(tmp: Path) -> list[Step]:
    fleet = build_fleet(FleetSize(24, 14, 60, 8), seed=3)
    write_fleet(fleet, tmp)
    edit = dict(scenarios(fleet))["edit one override"]
    assert edit is not None
    flip = [lambda clone, k=k: edit(clone, k) for k in range(2)]
    return [flip[0], None, flip[1], flip[0], flip[1], None, flip[0], None]


def _chain(tmp: Path, forget: bool, steps: list[Step]) -> list[PassResult]:
    """Every step's pass, each from the last one's output (`forget`: no memo survives a pass)."""
    result = reconcile(load_fleet(WorkdirTree(tmp)), State(), None, NOW)
    out = [result]
    for k, step in enumerate(steps):
        if step is not None:
            step(tmp)
        if forget:
            placememo.forget()
        prior = read_state(result.files)[0]
        result = reconcile(
            load_fleet(WorkdirTree(tmp)), prior, None, NOW + timedelta(minutes=k + 1)
        )
        out.append(result)
    return out


def test_flipping_an_override_during_a_rollout_equals_a_fresh_chain(
    tmp_path: Path, substituted: list[bool]
) -> None:
    remembered = _chain(tmp_path / "a", False, _steps(tmp_path / "a"))
    assert True in substituted, "no kept cluster took its laid-out row"
    fresh = _chain(tmp_path / "b", True, _steps(tmp_path / "b"))
    for k, (mine, theirs) in enumerate(zip(remembered, fresh, strict=True)):
        try:
            _same(mine, theirs)
        except AssertionError as exc:
            raise AssertionError(f"pass {k}: {exc}") from exc


def _row(key: str, cluster: str, version: int) -> dict[str, Any]:
    return {"key": key, "name": key, "cluster": cluster, "v": version}


def _random_parts(rng: random.Random, keys: list[str]) -> tuple[dict[str, Rows], list[str]]:
    """Units in the assembly's order (held, live, failed); some keys rolling (kept rows in
    `held/` and live rows in `live/` on other clusters, now and then on a shared one)."""
    clusters = [f"c{i}" for i in range(8)]
    held: dict[str, Rows] = {}
    live: dict[str, Rows] = {}
    rolling = []
    for key in keys:
        chosen = rng.sample(clusters, rng.randrange(len(clusters) + 1))
        cut = rng.randrange(len(chosen) + 1)
        kept, laid = chosen[:cut], chosen[cut:]
        if rng.random() < 0.1 and kept and laid:
            laid.append(kept[0])  # both kept and written: never merged
        if kept and rng.random() < 0.7:
            held["held/" + key] = {c: [_row(key, c, rng.randrange(3))] for c in kept}
            rolling.append(key)
        if laid or rng.random() < 0.5:
            live["live/" + key] = {c: [_row(key, c, rng.randrange(3))] for c in laid}
    return {**held, **live}, rolling


def _by_cluster(parts: Mapping[str, Rows]) -> dict[str, list[tuple[str, int]]]:
    """cluster -> its rows (key, version), in any order: the index files sort them by name."""
    out: dict[str, list[tuple[str, int]]] = {}
    for rows in parts.values():
        for cluster, listed in rows.items():
            out.setdefault(cluster, []).extend((r["key"], r["v"]) for r in listed)
    return {cluster: sorted(rows) for cluster, rows in out.items()}


def _pick(mode: int, rows: Any, was: Any) -> Any:
    """New rows (0), last pass's very list (1), or a new list of its very rows (2)."""
    if was is None or mode == 0:
        return rows
    return was if mode == 1 else [*was]


def test_merged_rows_list_what_the_units_list() -> None:
    rng = random.Random(11)
    keys = [f"p{i}" for i in range(5)]
    laid: dict[str, Rows] = {}
    ended: set[str] = set()
    for _ in range(300):
        parts, rolling = _random_parts(rng, keys)
        if laid and rng.random() < 0.5:  # last pass's very rows, in its lists or in new ones
            for name, rows in parts.items():
                before = laid.get(name.replace("held/", "live/"), {})
                mode = rng.randrange(3)
                parts[name] = {c: _pick(mode, r, before.get(c)) for c, r in rows.items()}
        expected = _by_cluster(parts)
        merged = dict(parts)
        merge_rolling(rolling, merged, laid)
        assert _by_cluster(merged) == expected
        now: set[str] = set()  # the names merged: their lists are compared to last pass's
        for key in rolling:
            kept, live = parts["held/" + key], parts.get("live/" + key)
            if live is not None and not kept.keys() & live.keys():
                assert "held/" + key not in merged
                now.add("live/" + key)
        for name in now | ended:
            before = laid.get(name, {})
            for cluster, listed in merged.get(name, {}).items():
                was = before.get(cluster)
                if was is not None and len(was) == len(listed) and all(map(is_, was, listed)):
                    assert listed is was
        ended = now
        laid = merged

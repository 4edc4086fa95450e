"""The placement status stages patch last pass's work where clusters changed; each patched
result equals the one computed from scratch, on random inputs: the bindings and decisions keyed
by cluster (`statuskeyed`), the kept entries with their line slots and summaries counted
(`statustable`), the entries grouped in C (`statusgroups`), and the per-cluster entries of a
placement over random sequences of cluster edits, additions and removals (`statusentries`)."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.api.output import group_cluster_statuses
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo, statusentries
from reconciler.pass_ import reconcile
from reconciler.placement import PlacementPlan
from reconciler.schedule.outcome import Decision
from reconciler.stagememo import StageMemo
from reconciler.state import State
from reconciler.statusgroups import grouped_statuses
from reconciler.statuskeyed import SELECTED, Keyed, keyed, keyed_afresh
from reconciler.statustable import Table
from renderers import load_fleet

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)


@dataclasses.dataclass(frozen=True)
class _Item:
    cluster: str
    selected: bool


def _edited(rng: random.Random, items: tuple[Any, ...], names: int) -> tuple[Any, ...]:
    """A few items removed, inserted or replaced by other objects; the rest the same ones."""
    out = list(items)
    for _ in range(rng.randrange(0 if rng.random() < 0.2 else 1, 5)):
        op = rng.randrange(3)
        if op == 0 and out:
            del out[rng.randrange(len(out))]
        elif op == 1:
            out.insert(rng.randrange(len(out) + 1), _Item(f"c{rng.randrange(names)}", True))
        elif out:
            at = rng.randrange(len(out))
            out[at] = _Item(out[at].cluster, rng.random() < 0.7)
    if rng.random() < 0.05:  # many changed: made afresh
        out = [_Item(i.cluster, i.selected) for i in out]
    return tuple(out)


def _same_keyed(patched: Keyed, fresh: Keyed, before: dict[str, Any]) -> None:
    assert (patched.flags, patched.picked, patched.names) == (
        fresh.flags,
        fresh.picked,
        fresh.names,
    )
    assert patched.unique == fresh.unique
    if fresh.unique:
        assert patched.by_name == fresh.by_name
        moved = {n for n, item in fresh.by_name.items() if before.get(n) is not item}
        moved |= before.keys() - fresh.by_name.keys()
        assert patched.changed is None or moved <= patched.changed


@pytest.mark.parametrize("seed", range(6))
def test_keyed_patched_in_place_equals_keyed_afresh(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        names = rng.choice((6, 40, 400))
        items = tuple(_Item(f"c{rng.randrange(names)}", rng.random() < 0.7) for _ in range(30))
        pick = rng.choice((None, SELECTED))
        kept = keyed(None, items, pick)
        for _ in range(8):
            before = dict(kept.by_name) if kept.unique else {}
            items = _edited(rng, items, names)
            kept = keyed(kept, items, pick)
            _same_keyed(kept, keyed_afresh(items, pick), before)


def _made(rng: random.Random, name: str, summaries: list[tuple[str]]) -> tuple[Any, ...]:
    return ((name,), rng.choice(summaries), (), {"clusterName": name}, [], [name])


@pytest.mark.parametrize("seed", range(4))
def test_table_patched_equals_a_fresh_table(seed: int) -> None:
    rng = random.Random(seed)
    summaries = [("Applied",), ("Available",), ("Failed",)]
    names = [f"c{i}" for i in range(rng.randrange(1, 60))]
    table = Table(names, [_made(rng, n, summaries) for n in names])
    for _ in range(40):
        gone = set(rng.sample(names, rng.randrange(min(3, len(names)) + 1)))
        new = {f"c{rng.randrange(80)}": None for _ in range(rng.randrange(4))}
        changed = {n: _made(rng, n, summaries) for n in new if n not in gone}
        changed |= {n: table.made[n] for n in rng.sample(names, 1) if n not in gone}
        table.patch(gone, changed)
        names = sorted(table.made)
        fresh = Table(names, [table.made[n] for n in names])
        assert dict(table.summaries()) == dict(fresh.summaries())  # no summary counted 0
        assert table.pieces == fresh.pieces  # the slots of the held entries, by id: none stale


def _entry(rng: random.Random, name: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"clusterName": name}
    kind = rng.randrange(5)
    if kind == 1:
        entry["message"] = f'work applied in "{name}"'
    elif kind == 2:
        entry["failedPlacements"] = [{"name": "x"}]
    elif kind == 3:
        entry["conditions"] = [{"type": "Applied", "reason": rng.choice("ab")}]
    elif kind == 4:
        entry = {"conditions": [{"type": "Scheduled"}]}  # an unselected one: no name
    return entry


@pytest.mark.parametrize("seed", range(8))
def test_grouped_statuses_equals_group_cluster_statuses(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    for _ in range(40):
        count = rng.randrange(0, 80)
        entries = [_entry(rng, f"c{rng.randrange(100)}") for _ in range(count)]
        if rng.random() < 0.3:
            monkeypatch.setattr("reconciler.statusgroups.MAX_GROUPS", rng.randrange(3))
        texts: list[list[Any]] = [[] for _ in entries]
        kept_texts = [list(t) for t in texts]
        if rng.random() < 0.5:  # slots kept from an earlier pass, some of them
            group_cluster_statuses(entries, kept_texts)
            texts = [t if rng.random() < 0.7 else [] for t in kept_texts]
        assert grouped_statuses(entries, texts) == group_cluster_statuses(entries)


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    placememo.forget()
    yield
    placememo.forget()


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> PlacementPlan:
    """The generated fleet's placement with the most selected clusters, all bound."""
    root: Path = tmp_path_factory.mktemp("fleet")
    write_fleet(build_fleet(FleetSize(16, 12, 48, 6), seed=7), root)
    result = reconcile(load_fleet(WorkdirTree(root)), State(), None, NOW)
    return max(result.plans.values(), key=lambda p: (len(p.live_clusters()), p.key))


def _step(rng: random.Random, plan: PlacementPlan, pool: dict[str, Any]) -> PlacementPlan:
    """One cluster's decision or binding replaced, or a cluster removed or put back."""
    decisions, bindings = list(plan.decisions), list(plan.state.bindings)
    op = rng.randrange(4)
    if op == 0 and decisions:
        at = rng.randrange(len(decisions))
        d = decisions[at]
        decisions[at] = Decision(d.cluster, rng.random() < 0.8, d.reason + " again")
    elif op == 1 and bindings:
        at = rng.randrange(len(bindings))
        b = bindings[at]
        bindings[at] = dataclasses.replace(b, resource_index=(b.resource_index or 0) + 1)
    elif op == 2 and decisions:
        gone = decisions.pop(rng.randrange(len(decisions)))
        pool[gone.cluster] = (gone, [b for b in bindings if b.cluster == gone.cluster])
        bindings = [b for b in bindings if b.cluster != gone.cluster]
    elif pool:
        name = rng.choice(sorted(pool))
        decision, back = pool.pop(name)
        decisions.insert(rng.randrange(len(decisions) + 1), decision)
        bindings[rng.randrange(len(bindings) + 1) : 0] = back
    state = dataclasses.replace(plan.state, bindings=tuple(bindings))
    return dataclasses.replace(plan, decisions=tuple(decisions), state=state)


def _entries(plan: PlacementPlan, prior: dict[str, Any]) -> Any:
    made = statusentries.cluster_entries(plan, prior, {}, NOW)
    named = [e for e in made.entries if "clusterName" in e]
    assert set(made.pieces) == set(map(id, named))  # a slot for each entry, none stale
    return made.entries, dict(made.summaries), made.by_name


@pytest.mark.parametrize("seed", range(3))
def test_random_cluster_changes_give_the_fresh_entries(
    plan: PlacementPlan, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    prior: dict[str, Any] = {}
    pool: dict[str, Any] = {}
    for _ in range(25):
        for _ in range(rng.randrange(1, 4)):
            plan = _step(rng, plan, pool)
        warm = _entries(plan, prior)
        kept = statusentries._ENTRIES
        monkeypatch.setattr(statusentries, "_ENTRIES", StageMemo())
        assert warm == _entries(plan, prior)  # computed from scratch
        monkeypatch.setattr(statusentries, "_ENTRIES", kept)
        prior = warm[2]

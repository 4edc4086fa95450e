"""Adding, removing, tainting and retiring clusters, with plans reused where the placement decides
the same (`placememo._rescheduled`) and scheduling reused per placement (`schedule.reuse`),
gives exactly what computing every placement afresh gives, on every golden fleet and on a
generated fleet; and on the generated fleet some placements are not computed again."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.api import MemberCluster, Taint
from gitfleet.load.model import FleetSnapshot
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo
from reconciler.pass_ import PassResult, reconcile
from reconciler.state import State, read_state
from renderers import load_fleet
from tests.golden.test_golden import CASES, case_spec
from tests.unit.reconciler.test_place_memo import _same

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
Edit = Callable[[FleetSnapshot], FleetSnapshot]


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    placememo.forget()
    yield
    placememo.forget()


def _with(fleet: FleetSnapshot, clusters: dict[str, MemberCluster]) -> FleetSnapshot:
    return dataclasses.replace(fleet, clusters=clusters)


def _copy_as(fleet: FleetSnapshot, source: str, name: str) -> FleetSnapshot:
    """A new cluster `name` with the labels, taints and status of `source`."""
    old = fleet.clusters[source]
    meta = old.metadata.model_copy(update={"name": name})
    return _with(fleet, {**fleet.clusters, name: old.model_copy(update={"metadata": meta})})


def _without(fleet: FleetSnapshot, name: str) -> FleetSnapshot:
    return _with(fleet, {k: v for k, v in fleet.clusters.items() if k != name})


def _tainted(fleet: FleetSnapshot, name: str) -> FleetSnapshot:
    old = fleet.clusters[name]
    taint = Taint.model_validate(
        {"key": "gitfleet.test/taint", "value": "x", "effect": "NoSchedule"}
    )
    spec = old.spec.model_copy(update={"taints": [taint]})
    return _with(fleet, {**fleet.clusters, name: old.model_copy(update={"spec": spec})})


def _leaving(fleet: FleetSnapshot, name: str) -> FleetSnapshot:
    old = fleet.clusters[name]
    meta = old.metadata.model_copy(update={"deletion_timestamp": "2026-11-21T09:00:00Z"})
    return _with(fleet, {**fleet.clusters, name: old.model_copy(update={"metadata": meta})})


def _edits(fleet: FleetSnapshot) -> list[tuple[str, Edit]]:
    """For the first three clusters: a copy of it added (named to sort first and last), it
    removed, tainted, and leaving the fleet."""
    out: list[tuple[str, Edit]] = []
    for c in sorted(fleet.clusters)[:3]:
        out += [
            (f"copy {c} first", lambda f, c=c: _copy_as(f, c, "aaa-added")),
            (f"copy {c} last", lambda f, c=c: _copy_as(f, c, "zzz-added")),
            (f"remove {c}", lambda f, c=c: _without(f, c)),
            (f"taint {c}", lambda f, c=c: _tainted(f, c)),
            (f"retire {c}", lambda f, c=c: _leaving(f, c)),
        ]
    return out


def _decided(result: PassResult) -> dict[str, Any]:
    """What each plan holds of its schedule beyond the files: decisions, condition, and every
    explanation (`gitfleet explain`)."""
    return {
        key: (plan.decisions, plan.scheduled, [plan.explanations[n] for n in plan.explanations])
        for key, plan in result.plans.items()
    }


def _each_edit(
    fleet: FleetSnapshot, computed: list[str], other_prior: bool = False
) -> list[tuple[str, int]]:
    """Every edit from the settled fleet, reused vs fresh; how many placements each computed.
    `other_prior`: the edited pass starts from another state than the remembered one."""
    result = reconcile(fleet, State(), None, NOW)
    result = reconcile(fleet, read_state(result.files)[0], None, NOW)
    ran = []
    for k, (name, edit) in enumerate(_edits(fleet)):
        prior = read_state(result.files)[0]
        later = NOW + timedelta(minutes=k + 1)
        reconcile(fleet, prior, None, later)  # remembered on the fleet before the edit
        if other_prior:  # as if every placement's spec had changed twice more
            prior = dataclasses.replace(
                prior,
                placements={
                    key: dataclasses.replace(ps, generation=ps.generation + 2)
                    for key, ps in prior.placements.items()
                },
            )
        computed.clear()
        changed = reconcile(edit(fleet), prior, None, later)
        ran.append((name, len(computed)))
        placememo.forget()
        fresh = reconcile(edit(fleet), prior, None, later)
        _same(changed, fresh)
        assert _decided(changed) == _decided(fresh), name
    return ran


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_cluster_changes_give_the_fresh_tree(case: Path, computed: list[str]) -> None:
    spec = case_spec(case)
    _each_edit(load_fleet(WorkdirTree((case / spec.get("fleet", "fleet")).resolve())), computed)


@pytest.mark.parametrize("case", CASES[:6], ids=lambda c: c.name)
def test_cluster_changes_from_another_prior_give_the_fresh_tree(
    case: Path, computed: list[str]
) -> None:
    spec = case_spec(case)
    fleet = load_fleet(WorkdirTree((case / spec.get("fleet", "fleet")).resolve()))
    _each_edit(fleet, computed, other_prior=True)


def test_cluster_changes_on_a_generated_fleet_recompute_only_some(
    tmp_path: Path, computed: list[str]
) -> None:
    write_fleet(build_fleet(FleetSize(16, 12, 48, 6), seed=7), tmp_path)
    fleet = load_fleet(WorkdirTree(tmp_path))
    ran = _each_edit(fleet, computed)
    _each_edit(fleet, computed, other_prior=True)
    placements = len(fleet.placements) + len(fleet.resource_placements)
    assert all(n < placements for _, n in ran), ran

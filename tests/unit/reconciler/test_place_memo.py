"""Reusing `place` across passes (`reconciler.placememo`), and the stages' remembered results
(`reconciler.stagememo`), gives exactly what computing every placement afresh gives: on every golden fleet, and on a generated fleet after each kind of source
change the hub benchmark makes (resource, fleet-wide resource, override, placement, relabel, add
and remove a cluster) and after agent reports move the rollout. A pass with nothing changed
computes no placement at all; a change recomputes the placements it touches."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from benchmarks.hub_reports import report_of
from benchmarks.hub_scenarios import scenarios
from gitfleet.api import parse_time
from gitfleet.api.report import AgentReport
from gitfleet.cli.app import read_reports_dir
from gitfleet.load.model import FleetSnapshot
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo
from reconciler.pass_ import PassResult, reconcile
from reconciler.placecarry import condition_moves
from reconciler.state import State, read_state
from renderers import load_fleet
from tests.golden.test_golden import CASES, case_spec

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)


def _same(reused: PassResult, fresh: PassResult) -> None:
    assert reused.files.keys() == fresh.files.keys()
    differ = [p for p in reused.files if reused.files[p] != fresh.files[p]]
    assert not differ, differ[:5]
    assert reused.errors == fresh.errors
    assert reused.next_wakeup == fresh.next_wakeup
    assert reused.trailers == fresh.trailers


def _twice(
    computed: list[str],
    fleet: FleetSnapshot,
    prior: State,
    now: datetime = NOW,
    reports: Mapping[str, AgentReport] | None = None,
) -> tuple[PassResult, int]:
    """The pass with the memo as the earlier passes left it, checked against a fresh one; and
    how many placements the first of them computed."""
    computed.clear()
    reused = reconcile(fleet, prior, None, now, reports)
    ran = len(computed)
    placememo.forget()
    _same(reused, reconcile(fleet, prior, None, now, reports))
    return reused, ran


def _count(fleet: FleetSnapshot) -> int:
    return len(fleet.placements) + len(fleet.resource_placements)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_golden_fleets_reuse_gives_the_same_tree(case: Path, computed: list[str]) -> None:
    spec = case_spec(case)
    fleet = load_fleet(WorkdirTree((case / spec.get("fleet", "fleet")).resolve()))
    first = reconcile(fleet, State(), None, NOW)
    second = reconcile(fleet, read_state(first.files)[0], None, NOW)
    _, ran = _twice(computed, fleet, read_state(second.files)[0])
    if _count(fleet) >= 2:
        assert ran < _count(fleet), "a pass with nothing changed computed every placement"


EXPECTED = {  # placements a scenario recomputes: none, some, or every one
    "unrelated source commit": "none",
    "edit one resource": "some",
    "edit fleet-wide resource": "some",
    "edit one override": "some",
    "change one placement": "some",
    "relabel one cluster": "some",  # only placements that read the label (its overrides)
    "add a cluster": "some",  # only placements whose decisions or bound clusters it changes
    "remove a cluster": "some",
}


def test_every_hub_scenario_reuses_only_what_it_may(tmp_path: Path, computed: list[str]) -> None:
    made = build_fleet(FleetSize(24, 10, 60, 8), seed=5)
    root = tmp_path / "fleet"
    write_fleet(made, root)
    fleet = load_fleet(WorkdirTree(root))
    result = reconcile(fleet, State(), None, NOW)
    result = reconcile(fleet, read_state(result.files)[0], None, NOW)
    result, ran = _twice(computed, fleet, read_state(result.files)[0])
    assert ran == 0
    edits = [(name, edit) for name, edit in scenarios(made) if edit is not None]
    assert {name for name, _ in edits} == set(EXPECTED)
    for k, (name, edit) in enumerate(edits):
        edit(root, 0)  # trial 0: every edit changes its file (later trials alternate values)
        fleet = load_fleet(WorkdirTree(root))
        later = NOW + timedelta(minutes=k + 1)  # what was remembered is reused at a later time
        result, ran = _twice(computed, fleet, read_state(result.files)[0], later)
        seen = "none" if ran == 0 else "all" if ran == _count(fleet) else "some"
        assert seen == EXPECTED[name], (name, ran, _count(fleet))


def test_agent_reports_moving_a_rolling_update(computed: list[str]) -> None:
    case = next(c for c in CASES if c.name == "rolling-waves")
    spec = case_spec(case)
    result = reconcile(load_fleet(WorkdirTree(case / "fleet")), State(), None, NOW, {})
    for step in spec["steps"]:
        fleet = load_fleet(WorkdirTree(case / step.get("fleet", "fleet")))
        reports, problems = read_reports_dir(case / "steps" / step["name"] / "reports")
        assert not problems
        now = parse_time(step["now"])
        prior = read_state(result.files)[0]
        result, _ = _twice(computed, fleet, prior, now, reports)
        again, ran = _twice(computed, fleet, read_state(result.files)[0], now, reports)
        assert again.files == result.files or ran > 0


def _tenants_settled(tmp_path: Path, computed: list[str]) -> tuple[Path, PassResult]:
    """A copy of the golden tenants fleet and its second pass (the memo filled)."""
    case = next(c for c in CASES if c.name == "tenants")
    root = tmp_path / "fleet"
    shutil.copytree(case / "fleet", root)
    fleet = load_fleet(WorkdirTree(root))
    result = reconcile(fleet, State(), None, NOW)
    return root, _twice(computed, fleet, read_state(result.files)[0])[0]


def test_a_tenant_that_breaks_alone_is_not_hidden_by_reuse(
    tmp_path: Path, computed: list[str]
) -> None:
    """Only the Tenant file changes: every placement's other inputs are as before, yet the
    placements no loaded Tenant owns must now be held (fail closed), not reused."""
    root, result = _tenants_settled(tmp_path, computed)
    tenant = root / "tenants" / "payments.yaml"
    tenant.write_text(tenant.read_text() + "\n  broken: [\n")
    fleet = load_fleet(WorkdirTree(root))
    broken, ran = _twice(computed, fleet, read_state(result.files)[0])
    assert ran > 0
    assert any("failed to load" in str(e) for e in broken.errors)


def test_a_tenant_rule_change_alone_is_not_hidden_by_reuse(
    tmp_path: Path, computed: list[str]
) -> None:
    """A Tenant narrows what its team may reach; nothing the placements read themselves
    changes, yet their refusal must show at once."""
    root, result = _tenants_settled(tmp_path, computed)
    tenant = root / "tenants" / "payments.yaml"
    tenant.write_text(tenant.read_text().replace("{team: payments}", "{team: nobody}"))
    fleet = load_fleet(WorkdirTree(root))
    narrowed, ran = _twice(computed, fleet, read_state(result.files)[0])
    assert ran > 0
    assert narrowed.errors != result.errors


def _reports_of(result: PassResult, clusters: list[str], now: datetime) -> dict[str, AgentReport]:
    """Healthy agents' reports of what `result` gave `clusters` (the hub benchmark's)."""
    at = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    out = {}
    for cluster in clusters:
        index = yaml.safe_load(result.files[f"clusters/{cluster}/index.yaml"])
        out[cluster] = AgentReport.model_validate(report_of(index, cluster, "", at, at))
    return out


LATER = NOW + timedelta(minutes=1)


def _reported(
    tmp_path: Path, computed: list[str]
) -> tuple[FleetSnapshot, State, PassResult, dict[str, AgentReport]]:
    """A settled generated fleet's pass recording three agents' first reports: the fleet, the
    state that pass wrote, the pass and the reports."""
    made = build_fleet(FleetSize(24, 10, 60, 8), seed=5)
    write_fleet(made, tmp_path / "fleet")
    fleet = load_fleet(WorkdirTree(tmp_path / "fleet"))
    settled = reconcile(fleet, State(), None, NOW)
    settled = reconcile(fleet, read_state(settled.files)[0], None, NOW)
    reports = _reports_of(settled, [c.name for c in made.clusters[:3]], NOW)
    recorded, _ = _twice(computed, fleet, read_state(settled.files)[0], LATER, reports)
    before, after = read_state(settled.files)[0], read_state(recorded.files)[0]
    moved = [k for k, s in after.placements.items() if s != before.placements.get(k)]
    assert moved, "the reports changed no placement's state"
    assert all(
        condition_moves(before.placements[k].bindings, after.placements[k].bindings) for k in moved
    )
    return fleet, after, recorded, reports


def test_a_prior_that_moved_only_in_reported_conditions_places_nothing(
    tmp_path: Path, computed: list[str]
) -> None:
    """Reports move the conditions of their clusters' bindings; the pass after the one that
    recorded them reads a prior changed in those alone, which `place` only carries: no
    placement is placed again, and the tree is a fresh pass's (`placecarry`)."""
    fleet, after, recorded, reports = _reported(tmp_path, computed)
    again, ran = _twice(computed, fleet, after, LATER + timedelta(minutes=1), reports)
    assert ran == 0, computed
    assert again.errors == recorded.errors


def test_a_fault_carrying_a_plan_places_it_again(
    tmp_path: Path, computed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception while carrying a remembered plan is not the placement's error: `place`
    runs, and the tree is a fresh pass's."""
    fleet, after, _, reports = _reported(tmp_path, computed)

    def broken(*_: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(placememo, "carried_plan", broken)
    again, ran = _twice(computed, fleet, after, LATER + timedelta(minutes=1), reports)
    assert ran > 0
    assert not any("boom" in str(e) for e in again.errors)

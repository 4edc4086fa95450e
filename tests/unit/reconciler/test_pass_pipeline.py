"""`reconciler.passstages.PIPELINE`: the pass is its stages run in order on one `PassRun`, each
setting the values `PassRun` assigns to it and no other (of the inputs, only `prepare` may
replace the fleet, with the overlays and tenancy applied, and the statuses, with the reports
added), and `STAGES` names them in that order."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gitfleet.repo.workdir import WorkdirTree
from reconciler import pass_, passstages
from reconciler.pass_ import STAGES, reconcile
from reconciler.state import State
from renderers import load_fleet

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)

SETS = {
    "prepare": {"overlay", "tenancy", "assume_ready", "views"},
    "plan": {"plans", "origins", "errors", "override_snapshots"},
    "distribute": {"kept", "deleted", "distributed"},
    "seal": set(),
    "rollout": {"prior_index", "rollout"},
    "assemble": {"assembled", "files"},
    "decisions": set(),
    "placement status": set(),
    "cluster status": set(),
    "state": {"states"},
    "finish": {"all_errors", "holds"},
}
"""What each stage sets."""
MAY = {"prepare": {"fleet", "statuses"}}
"""The inputs a stage may replace (the very objects when there is nothing to change)."""


def _set_by_their_stages(seen: list[tuple[str, set[str]]]) -> None:
    assert [name for name, _ in seen] == list(STAGES) == list(SETS)
    for name, changed in seen:
        assert SETS[name] <= changed <= SETS[name] | MAY.get(name, set()), name


def _watched(monkeypatch: pytest.MonkeyPatch, seen: list[tuple[str, set[str]]]) -> None:
    """Each stage of the pipeline recorded with the attributes it added or rebound."""

    def watch(name: str, stage: passstages.Stage) -> passstages.Stage:
        def run_stage(run: passstages.PassRun) -> None:
            before = dict(vars(run))
            stage(run)
            after = vars(run)
            seen.append((name, {k for k, v in after.items() if before.get(k, run) is not v}))

        return run_stage

    pipeline = tuple((name, watch(name, stage)) for name, stage in passstages.PIPELINE)
    monkeypatch.setattr(pass_, "PIPELINE", pipeline)


def test_each_stage_sets_its_own_values_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    fleet = load_fleet(WorkdirTree(ROOT / "examples/quickstart"))
    seen: list[tuple[str, set[str]]] = []
    _watched(monkeypatch, seen)
    first = reconcile(fleet, State(), None, NOW)
    _set_by_their_stages(seen)
    seen.clear()
    again = reconcile(fleet, first.state, None, NOW)  # a pass with a prior: the same stages
    _set_by_their_stages(seen)
    assert again.files == first.files


def test_reports_make_prepare_replace_the_statuses(monkeypatch: pytest.MonkeyPatch) -> None:
    fleet = load_fleet(WorkdirTree(ROOT / "examples/quickstart"))
    seen: list[tuple[str, set[str]]] = []
    _watched(monkeypatch, seen)
    reports: dict[str, Any] = {}
    reconcile(fleet, State(), None, NOW, reports=reports)
    _set_by_their_stages(seen)
    assert "statuses" in dict(seen)["prepare"]

"""Rollout details through the whole pass, stepped with agent reports: the apply strategy a
driver records reaches the clusters it moves (kubefleet.md §4.4), External clusters keep it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from reconciler.rollout.model import DriverResult, ExternalUpdate, RolloutInputs
from tests.unit.rollout.test_pass_rollout import EXTERNAL, Stepper, write_fleet

SSA = {"type": "ServerSideApply", "serverSideApplyConfig": {"forceConflicts": True}}


def _entry(files: Mapping[str, bytes], cluster: str) -> dict[str, Any] | None:
    doc = yaml.safe_load(files[f"clusters/{cluster}/index.yaml"])
    entries = [p for p in doc["placements"] if p["key"] == "web"]
    return entries[0] if entries else None


def _driver(moves: Mapping[str, int], strategy: Mapping[str, Any] | None) -> Any:
    def run(fleet: Any, inputs: RolloutInputs, prior: Mapping[str, bytes]) -> DriverResult:
        update = ExternalUpdate(
            "web", "ClusterStagedUpdateRun/r1", dict(moves), frozenset(), strategy
        )
        return DriverResult(updates=(update,) if moves else ())

    return run


def test_a_driver_s_recorded_apply_strategy_reaches_the_clusters_it_moves(tmp_path: Path) -> None:
    write_fleet(tmp_path, EXTERNAL)
    s = Stepper(tmp_path)
    s.step()
    s.step((_driver({"c2": 0}, SSA), _driver({"c5": 0}, None)))
    c2, c5 = _entry(s.files, "c2"), _entry(s.files, "c5")
    assert c2 is not None and c2["applyStrategy"] == SSA
    assert c5 is not None and c5["applyStrategy"] != SSA  # no recorded strategy: the placement's
    assert _entry(s.files, "c3") is None
    # Later passes without a driver: the clusters keep the strategy they were moved with.
    s.step()
    c2 = _entry(s.files, "c2")
    assert c2 is not None and c2["applyStrategy"] == SSA


def test_external_clusters_keep_their_strategy_when_the_placement_s_changes(
    tmp_path: Path,
) -> None:
    write_fleet(tmp_path, EXTERNAL)
    s = Stepper(tmp_path)
    s.step()
    s.step((_driver({"c2": 0, "c3": 0}, None),))
    before = _entry(s.files, "c2")
    assert before is not None
    changed = EXTERNAL + "    applyStrategy:\n      whenToApply: IfNotDrifted\n"
    write_fleet(tmp_path, changed)
    s.step((_driver({"c3": 0}, {"whenToApply": "IfNotDrifted"}),))
    c2, c3 = _entry(s.files, "c2"), _entry(s.files, "c3")
    assert c2 is not None and c2["applyStrategy"] == before["applyStrategy"]
    assert c3 is not None and c3["applyStrategy"] == {"whenToApply": "IfNotDrifted"}


def test_rolling_update_clusters_get_the_placement_s_strategy_at_once(tmp_path: Path) -> None:
    write_fleet(tmp_path)
    s = Stepper(tmp_path)
    s.step()
    s.step()
    write_fleet(tmp_path, "  strategy:\n    applyStrategy:\n      type: ServerSideApply\n")
    s.step()
    for cluster in ("c0", "c7"):
        entry = _entry(s.files, cluster)
        assert entry is not None and entry["applyStrategy"]["type"] == "ServerSideApply"

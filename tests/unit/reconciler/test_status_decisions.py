"""A placement's status is reused while the decisions it reads are unchanged (its selected
clusters, and the unselected names a PickFixed placement lists): a cluster it does not select
coming or going reuses it, and a named cluster whose reason changes does not."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from gitfleet.api.output import placement_status_path
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo
from reconciler.pass_ import PassResult, reconcile
from reconciler.placement import PlacementPlan
from reconciler.schedule.outcome import Decision
from reconciler.state import PlacementState, State, read_state
from reconciler.status import Cond
from reconciler.statusdocs import _decisions_read
from renderers import load_fleet
from tests.unit.reconciler.test_place_memo import NOW, _same

QUICKSTART = Path(__file__).resolve().parents[3] / "examples/quickstart"


def _pass(root: Path, prior: State) -> PassResult:
    """The pass with the memos as earlier passes left them, checked against a fresh one."""
    fleet = load_fleet(WorkdirTree(root))
    reused = reconcile(fleet, prior, None, NOW)
    placememo.forget()
    _same(reused, reconcile(fleet, prior, None, NOW))
    return reused


def _unselected(result: PassResult) -> list[Any]:
    doc = yaml.safe_load(result.files[placement_status_path("fleet-viewer")])
    entries = doc["status"].get("perClusterPlacementStatuses") or []
    return [e["conditions"][0]["message"] for e in entries if "clusterName" not in e]


def test_a_named_cluster_that_stays_unselected_with_another_reason(tmp_path: Path) -> None:
    root = tmp_path / "fleet"
    shutil.copytree(QUICKSTART, root)
    placement = root / "placements/fleet-viewer.yaml"
    doc = yaml.safe_load(placement.read_text())
    doc["spec"]["policy"]["clusterNames"] = ["eu-1", "us-1", "late"]
    placement.write_text(yaml.safe_dump(doc))
    placememo.forget()
    first = _pass(root, State())
    assert any("late" in m and "not found" in m for m in _unselected(first))
    prior = read_state(first.files)[0]  # the memos hold the first pass (its fresh twin)
    late = {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": "late", "deletionTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {},
    }
    (root / "clusters/late.yaml").write_text(yaml.safe_dump(late))
    second = _pass(root, prior)
    assert any("left the fleet" in m for m in _unselected(second))
    placememo.forget()


def _plan_with(decisions: list[tuple[str, bool]], fixed: int | None) -> PlacementPlan:
    return PlacementPlan(
        key="p",
        state=PlacementState(key="p"),
        scheduled=Cond("Scheduled", "True", "Scheduled", "ok"),
        decisions=tuple(Decision(c, s, "why") for c, s in decisions),
        fixed_names=fixed,
    )


def test_the_decisions_a_status_reads() -> None:
    """Selected decisions always; unselected ones only for a PickFixed placement, as many as
    the names it could not place, in order."""
    rows = [("a", True), ("x", False), ("b", True), ("y", False), ("z", False)]
    selected, unplaced = _decisions_read(_plan_with(rows, None))
    assert [d.cluster for d in selected] == ["a", "b"] and unplaced == ()
    selected, unplaced = _decisions_read(_plan_with(rows, 4))
    assert [d.cluster for d in selected] == ["a", "b"]
    assert [d.cluster for d in unplaced] == ["x", "y"]
    assert _decisions_read(_plan_with(rows, 1))[1] == ()

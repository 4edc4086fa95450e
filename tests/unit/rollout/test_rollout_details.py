"""Rollout details through the whole pass, stepped with agent reports: the apply strategy a
driver records reaches the clusters it moves (kubefleet.md §4.4), External clusters keep it; a
WorkSynchronized failure (a conflict with another placement) makes the binding failed (§2.3)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitfleet.api.grouping import expand_named
from gitfleet.api.indexrow import read_row
from reconciler.rollout.model import BindingView, DriverResult, ExternalUpdate, RolloutInputs
from reconciler.rollsync import with_sync
from reconciler.state import Binding, BindingCondition
from tests.unit.rollout.test_pass_rollout import EXTERNAL, Stepper, write_fleet

SSA = {"type": "ServerSideApply", "serverSideApplyConfig": {"forceConflicts": True}}


def _entry(files: Mapping[str, bytes], cluster: str) -> dict[str, Any] | None:
    doc = yaml.safe_load(files[f"clusters/{cluster}/index.yaml"])
    entries = [p for p in doc["placements"] if p["key"] == "web"]
    return read_row(entries[0]) if entries else None  # the default strategy filled in


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


RIVAL = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: a-web
spec:
  resourceSelectors:
    - {group: '', version: v1, kind: Namespace, name: web}
  policy:
    placementType: PickFixed
    clusterNames: [c3]
"""
ONE = "  strategy:\n    rollingUpdate: {maxUnavailable: 1}\n"


def _binding(files: Mapping[str, bytes], key: str, cluster: str) -> dict[str, Any]:
    doc = yaml.safe_load(files[f"state/placements/{key}.yaml"])
    rows = expand_named(doc["bindings"], doc.get("bindingGroups"), "cluster", "clusters")
    found: dict[str, Any] = next(b for b in rows if b["cluster"] == cluster)
    return found


def test_a_work_synchronized_conflict_fails_the_binding_it_is_updated_without_budget(
    tmp_path: Path,
) -> None:
    write_fleet(tmp_path, ONE)
    (tmp_path / "placements/a-web.yaml").write_text(RIVAL)
    s = Stepper(tmp_path)
    s.step()
    s.step()
    # a-web owns the objects on c3 (first by name): web's binding there is failed.
    sync = [
        c for c in _binding(s.files, "web", "c3")["conditions"] if c["type"] == "WorkSynchronized"
    ]
    assert [(c["status"], c["reason"]) for c in sync] == [("False", "SyncWorkFailed")]
    assert "also placed by placement a-web" in sync[0]["message"]
    assert not [
        c
        for c in _binding(s.files, "web", "c2").get("conditions", [])
        if c["type"] == "WorkSynchronized"
    ]
    write_fleet(tmp_path, ONE, image="v2")
    s.step()
    # maxUnavailable 1 moves c0; the failed c3 moves too, without budget (§2.4 step 1).
    assert s.on(1) == ["c0", "c3"]
    # Once the conflict is gone (a-web deleted, the deletion approved), the condition goes too.
    (tmp_path / "placements/a-web.yaml").unlink()
    (tmp_path / "approvals").mkdir(exist_ok=True)
    (tmp_path / "approvals/drop-a-web.yaml").write_text(
        "apiVersion: gitfleet.io/v1alpha1\nkind: DeletionApproval\n"
        "metadata: {name: drop-a-web}\nspec: {placements: [a-web]}\n"
    )
    s.step()
    s.step()
    conds = _binding(s.files, "web", "c3").get("conditions", [])
    assert [c for c in conds if c["type"] == "WorkSynchronized"] == []


@pytest.mark.parametrize(
    ("ctype", "status", "reason", "failed"),
    [
        ("WorkSynchronized", "False", "SyncWorkFailed", True),
        ("WorkSynchronized", "False", "WorkNotSynchronizedYet", False),
        ("WorkSynchronized", "False", "", True),  # unknown/empty reasons count as failed
        ("WorkSynchronized", "True", "AllWorkSynced", False),
        ("WorkSynchronized", "Unknown", "WorkSynchronizedUnknown", False),
        ("Overridden", "False", "OverriddenFailed", True),
        ("Overridden", "False", "OverriddenPending", False),
        ("Applied", "False", "NotAllWorkHaveBeenApplied", True),
        ("Applied", "False", "ApplyInProgress", True),  # §9 quirk 5
        ("Applied", "False", "ApplyPending", False),
        ("Available", "False", "NotAllWorkAreAvailable", True),
        ("Available", "False", "ResourceNotAvailableYet", False),
        ("DiffReported", "False", "NotAllWorkHaveDiffReported", False),  # not a failure type
    ],
)
def test_binding_failed_table(ctype: str, status: str, reason: str, failed: bool) -> None:
    view = BindingView("c0", "Bound", conditions=(BindingCondition(ctype, status, reason),))
    assert view.failed is failed


T0 = datetime(2026, 11, 21, 9, tzinfo=UTC)
T1 = datetime(2026, 11, 21, 10, tzinfo=UTC)
STARTED = BindingCondition("RolloutStarted", "True", "RolloutStarted", "", T0)
APPLIED = BindingCondition("Applied", "True", "AllWorkHaveBeenApplied", "", T0)
LOST = BindingCondition("WorkSynchronized", "False", "SyncWorkFailed", "lost", T0)


LOST_NOW = BindingCondition("WorkSynchronized", "False", "SyncWorkFailed", "lost", T1)


@pytest.mark.parametrize(
    ("before", "error", "after"),
    [
        ((STARTED, APPLIED), None, (STARTED, APPLIED)),
        ((STARTED, APPLIED), "lost", (STARTED, LOST_NOW, APPLIED)),
        ((STARTED, LOST, APPLIED), "lost", (STARTED, LOST, APPLIED)),  # time kept
        ((STARTED, LOST, APPLIED), "other", (STARTED, replace(LOST_NOW, message="other"), APPLIED)),
        ((STARTED, LOST, APPLIED), None, (STARTED, APPLIED)),
    ],
)
def test_recorded_work_synchronized_table(
    before: tuple[BindingCondition, ...], error: str | None, after: tuple[BindingCondition, ...]
) -> None:
    binding = Binding("c0", "Bound", 0, conditions=before)
    assert with_sync(binding, error, T1).conditions == after


def test_placement_decisions_list_scheduled_and_bound_clusters_not_unscheduled() -> None:
    from reconciler.placement import PlacementPlan
    from reconciler.publish import decision_files
    from reconciler.state import PlacementState, State
    from reconciler.status import Cond

    bindings = (
        Binding("held", "Scheduled", 0),
        Binding("bound", "Bound", 0, resource_index=0),
        Binding("going", "Unscheduled", 0, resource_index=0, previous_state="Bound"),
    )
    plan = PlacementPlan(
        key="web",
        state=PlacementState(key="web", bindings=bindings),
        scheduled=Cond("Scheduled", "True", "SchedulingPolicyFulfilled", ""),
    )
    files = decision_files({"web": plan}, State())
    doc = yaml.safe_load(files["decisions/web-0.yaml"])
    assert [d["clusterProfileRef"]["name"] for d in doc["decisions"]] == ["bound", "held"]

"""The rollout stage through the whole pure pass, stepped with agent reports (as the hub runs it):
waves of maxUnavailable, a bad version stops, External placements hold, the driver hook moves
clusters, untrackable timers, evictions blocked then allowed by a disruption budget."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from gitfleet.api import format_time
from gitfleet.api.grouping import expand_named
from gitfleet.api.output import expanded_status
from gitfleet.api.report import AgentReport
from gitfleet.repo.workdir import WorkdirTree
from reconciler.pass_ import PassResult, reconcile
from reconciler.rollout.model import DriverResult, ExternalUpdate, RolloutInputs
from reconciler.state import read_state
from renderers import load_fleet

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
CLUSTERS = [f"c{i}" for i in range(8)]


def write_fleet(root: Path, strategy: str = "", image: str = "v1", extra: str = "") -> None:
    (root / "clusters").mkdir(parents=True, exist_ok=True)
    for name in CLUSTERS:
        (root / f"clusters/{name}.yaml").write_text(
            "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
            f"metadata:\n  name: {name}\n"
        )
    (root / "resources").mkdir(exist_ok=True)
    (root / "resources/web.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: web\n"
        f"data:\n  image: {image}\n"
    )
    (root / "placements").mkdir(exist_ok=True)
    (root / "placements/web.yaml").write_text(
        "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacement\n"
        "metadata:\n  name: web\nspec:\n  resourceSelectors:\n"
        "    - {group: '', version: v1, kind: Namespace, name: web}\n" + strategy
    )
    if extra:
        (root / "evictions").mkdir(exist_ok=True)
        (root / "evictions/all.yaml").write_text(extra)


def report(
    files: Mapping[str, bytes], cluster: str, available: bool = True, reason: str = ""
) -> AgentReport:
    """What an agent that applied its index would push."""
    index = yaml.safe_load(files.get(f"clusters/{cluster}/index.yaml", b"{}")) or {}
    placements = []
    for p in index.get("placements") or []:
        avail = (
            ("True", reason or "AllWorkAreAvailable")
            if available
            else ("False", "NotAllWorkAreAvailable")
        )
        placements.append(
            {
                "key": p["key"],
                "name": p["name"],
                "resourceSnapshotIndex": p["resourceSnapshotIndex"],
                "contentHash": p["contentHash"],
                "conditions": [
                    {"type": "Applied", "status": "True", "reason": "AllWorkHaveBeenApplied"},
                    {"type": "Available", "status": avail[0], "reason": avail[1]},
                ],
            }
        )
    return AgentReport.model_validate(
        {
            "apiVersion": "gitfleet.io/v1alpha1",
            "kind": "AgentReport",
            "metadata": {"name": cluster},
            "heartbeatTime": format_time(NOW),
            "agentVersion": "test",
            "placements": placements,
        }
    )


class Stepper:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[str, bytes] = {}
        self.now = NOW
        self.bad: set[str] = set()

    def step(self, drivers: tuple[Any, ...] = (), reason: str = "") -> PassResult:
        prior, problems = read_state(self.files)
        assert not problems
        reports = {c: report(self.files, c, c not in self.bad, reason) for c in CLUSTERS}
        fleet = load_fleet(WorkdirTree(self.root))
        result = reconcile(fleet, prior, None, self.now, reports, drivers=drivers)
        self.files = dict(result.files)
        return result

    def indexes(self) -> dict[str, int | None]:
        out: dict[str, int | None] = {}
        for c in CLUSTERS:
            doc = yaml.safe_load(self.files[f"clusters/{c}/index.yaml"])
            entries = [p for p in doc["placements"] if p["key"] == "web"]
            out[c] = entries[0]["resourceSnapshotIndex"] if entries else None
        return out

    def on(self, index: int) -> list[str]:
        return [c for c, i in self.indexes().items() if i == index]

    def status(self) -> dict[str, Any]:
        doc: dict[str, Any] = yaml.safe_load(self.files["status/placements/web.yaml"])
        return {**doc, "status": expanded_status(doc["status"])}


def started(tmp_path: Path, strategy: str = "") -> Stepper:
    write_fleet(tmp_path, strategy)
    s = Stepper(tmp_path)
    s.step()  # reports with nothing yet: clusters join
    s.step()  # initial placement goes everywhere at once (maxSurge does not limit it)
    assert s.on(0) == CLUSTERS
    return s


def test_good_version_reaches_all_clusters_in_ceil_n_over_max_unavailable_waves(
    tmp_path: Path,
) -> None:
    s = started(tmp_path)
    write_fleet(tmp_path, image="v2")
    reached = []
    for _ in range(5):
        s.step()
        reached.append(len(s.on(1)))
    assert reached == [2, 4, 6, 8, 8]  # 25% of 8 = 2 a wave: ceil(8 / 2) = 4 waves
    conds = {c["type"]: c["status"] for c in s.status()["status"]["conditions"]}
    assert conds["ClusterResourcePlacementAvailable"] == "True"


def test_bad_version_stops_at_max_unavailable_clusters(tmp_path: Path) -> None:
    s = started(tmp_path)
    before = s.files["clusters/c7/web/configmap_web_app.yaml"]
    write_fleet(tmp_path, image="broken")
    s.step()
    s.bad = set(s.on(1))  # the new version never becomes available
    for _ in range(4):
        s.step()
    assert s.on(1) == ["c0", "c1"]
    assert s.files["clusters/c7/web/configmap_web_app.yaml"] == before  # byte for byte
    per = {e["clusterName"]: e for e in s.status()["status"]["perClusterPlacementStatuses"]}
    assert per["c5"]["rolloutWaiting"] == (
        "waiting: maxUnavailable 2 reached, 2 clusters updating (maxUnavailable 25% of 8)"
    )
    state = yaml.safe_load(s.files["state/placements/web.yaml"])
    rows = expand_named(state["bindings"], state.get("bindingGroups"), "cluster", "clusters")
    stale = next(b for b in rows if b["cluster"] == "c5")
    assert stale["conditions"][0]["message"] == (
        "The resources cannot be updated to the latest because of the rollout strategy"
    )
    assert per["c5"]["observedResourceIndex"] == "0"


def test_a_report_about_other_content_does_not_count(tmp_path: Path) -> None:
    s = started(tmp_path, "  strategy:\n    rollingUpdate: {maxUnavailable: 1}\n")
    write_fleet(tmp_path, "  strategy:\n    rollingUpdate: {maxUnavailable: 1}\n", image="v2")
    s.step()
    assert s.on(1) == ["c0"]
    old = dict(s.files)
    s.step()  # c0's agent applied and reported the new content: the next wave
    assert s.on(1) == ["c0", "c1"]
    # Replay that step with c0's agent still on the old content: its report names the old
    # content hash, so it does not count for c0 and c1 is not moved.
    prior, _ = read_state(old)
    stale = {c: report({**old, **_rewind(old, c)}, c) for c in CLUSTERS}
    result = reconcile(load_fleet(WorkdirTree(tmp_path)), prior, None, NOW, stale)
    files = result.files
    doc = yaml.safe_load(files["clusters/c1/index.yaml"])
    assert doc["placements"][0]["resourceSnapshotIndex"] == 0


def _rewind(files: Mapping[str, bytes], cluster: str) -> dict[str, bytes]:
    """c0's index as it was before the rollout (its agent has not pulled yet)."""
    if cluster != "c0":
        return {}
    doc = yaml.safe_load(files["clusters/c1/index.yaml"])
    return {"clusters/c0/index.yaml": yaml.safe_dump(doc).encode()}


def test_untrackable_objects_wait_unavailable_period_by_the_hub_clock(tmp_path: Path) -> None:
    strategy = "  strategy:\n    rollingUpdate: {maxUnavailable: 1, unavailablePeriodSeconds: 60}\n"
    s = started(tmp_path, strategy)
    s.step(reason="NotAllWorkAreAvailabilityTrackable")  # the hub first sees it now
    s.now += timedelta(seconds=59)
    write_fleet(tmp_path, strategy, image="v2")
    s.step(reason="NotAllWorkAreAvailabilityTrackable")
    assert s.on(1) == []  # 1 s of the 60 left everywhere
    s.now += timedelta(seconds=1)
    s.step(reason="NotAllWorkAreAvailabilityTrackable")
    assert s.on(1) == ["c0"]
    s.now += timedelta(seconds=10)
    result = s.step(reason="NotAllWorkAreAvailabilityTrackable")
    assert s.on(1) == ["c0"]
    assert result.next_wakeup == s.now + timedelta(seconds=60)
    per = {e["clusterName"]: e for e in s.status()["status"]["perClusterPlacementStatuses"]}
    assert per["c0"]["rolloutWaiting"] == (
        "waiting: untrackable objects, 60 s of unavailablePeriodSeconds left"
    )
    s.now += timedelta(seconds=59)
    s.step(reason="NotAllWorkAreAvailabilityTrackable")
    assert s.on(1) == ["c0"]
    s.now += timedelta(seconds=1)
    s.step(reason="NotAllWorkAreAvailabilityTrackable")
    assert s.on(1) == ["c0", "c1"]


EXTERNAL = "  strategy:\n    type: External\n"


def test_external_placement_holds_everything(tmp_path: Path) -> None:
    write_fleet(tmp_path, EXTERNAL)
    s = Stepper(tmp_path)
    s.step()
    result = s.step()
    assert s.on(0) == []
    assert result.plans["web"].rollout_note == (
        "held: External strategy, no update run targets this placement"
    )
    per = s.status()["status"]["perClusterPlacementStatuses"]
    assert {e["conditions"][1]["reason"] for e in per} == {"RolloutControlledByExternalController"}


def test_a_driver_moves_the_clusters_it_names(tmp_path: Path) -> None:
    write_fleet(tmp_path, EXTERNAL)
    s = Stepper(tmp_path)
    seen: list[RolloutInputs] = []

    def run(fleet: Any, inputs: RolloutInputs, prior: Mapping[str, bytes]) -> DriverResult:
        seen.append(inputs)
        view = inputs.placements["web"]
        assert view.strategy_type == "External"
        update = ExternalUpdate("web", "ClusterStagedUpdateRun/r1", {"c2": 0, "c5": 0})
        return DriverResult(
            updates=(update,),
            files={"status/updateruns/r1.yaml": b"x: 1\n"},
            wakeup=NOW + timedelta(minutes=1),
            trailers=(("Gitfleet-Approved-By", "someone"),),
        )

    s.step((run,))
    result = s.step((run,))
    assert s.on(0) == ["c2", "c5"]
    assert s.files["status/updateruns/r1.yaml"] == b"x: 1\n"
    assert result.next_wakeup == NOW + timedelta(minutes=1)
    assert result.trailers == (("Gitfleet-Approved-By", "someone"),)
    assert len(seen[-1].placements["web"].bindings) == 8


EVICT = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementEviction
metadata:
  name: {name}
spec:
  placementName: web
  clusterName: c3
"""
BUDGET = """---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: {n}
"""


def test_eviction_blocked_then_allowed_by_the_budget(tmp_path: Path) -> None:
    s = started(tmp_path)
    write_fleet(tmp_path, extra=EVICT.format(name="first") + BUDGET.format(n=8))
    s.step()
    doc = yaml.safe_load(s.files["status/evictions/first.yaml"])
    executed = doc["status"]["conditions"][1]
    assert (executed["status"], executed["message"]) == (
        "False",
        "Eviction is blocked by specified ClusterResourcePlacementDisruptionBudget, "
        "availablePlacements: 8, totalPlacements: 8",
    )
    assert s.on(0) == CLUSTERS
    # Terminal: relaxing the budget does not retry it; a new eviction is allowed.
    write_fleet(
        tmp_path,
        extra=EVICT.format(name="first")
        + BUDGET.format(n=7)
        + "---\n"
        + EVICT.format(name="second"),
    )
    before = s.files["status/evictions/first.yaml"]
    result = s.step()
    assert s.files["status/evictions/first.yaml"] == before
    doc = yaml.safe_load(s.files["status/evictions/second.yaml"])
    assert doc["status"]["conditions"][1]["reason"] == "ClusterResourcePlacementEvictionExecuted"
    assert "clusters/c3/web/configmap_web_app.yaml" not in s.files
    assert not [e for e in result.errors if "evict" in str(e)]


def test_status_placement_shows_progress_and_waits(tmp_path: Path) -> None:
    from reconciler.describe import describe_placement

    s = started(tmp_path)
    write_fleet(tmp_path, image="v2")
    s.step()
    text = describe_placement(s.status())
    assert "Rollout:                 2 of 8 cluster(s) have snapshot 1, 0 available" in text
    assert "  c7: waiting: maxUnavailable 2 reached, 2 clusters updating" in text

"""KubeFleet's deleting phase (kubefleet.md §2.2-2.3, §5.2): a removed binding stays, counted by
the rollout, until the cluster's agent reports the placement's objects gone or the cluster left;
stepped through the whole pass with agent reports, some of them lagging."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from gitfleet.repo.workdir import WorkdirTree
from reconciler.pass_ import PassResult, reconcile
from reconciler.state import read_state
from renderers import load_fleet
from tests.unit.rollout.test_pass_rollout import (
    BUDGET,
    CLUSTERS,
    EVICT,
    Stepper,
    report,
    started,
    write_fleet,
)

FIXED = (
    "  policy:\n    placementType: PickFixed\n    clusterNames: [{names}]\n"
    "  strategy:\n    rollingUpdate: {{maxUnavailable: 1, maxSurge: 0}}\n"
)


def lagging_step(s: Stepper, lag: Mapping[str, Mapping[str, bytes]]) -> PassResult:
    """A pass where the clusters in `lag` report what they had applied from an older output."""
    prior, problems = read_state(s.files)
    assert not problems
    reports = {c: report(lag.get(c, s.files), c) for c in CLUSTERS}
    result = reconcile(load_fleet(WorkdirTree(s.root)), prior, None, s.now, reports)
    s.files = dict(result.files)
    return result


def deleting(s: Stepper) -> list[dict[str, Any]]:
    doc = yaml.safe_load(s.files["status/placements/web.yaml"])
    found: list[dict[str, Any]] = doc["status"].get("deletingClusters", [])
    return found


def state_deleting(s: Stepper) -> list[dict[str, Any]]:
    doc = yaml.safe_load(s.files["state/placements/web.yaml"])
    found: list[dict[str, Any]] = doc.get("deleting", [])
    return found


def test_a_removed_cluster_holds_its_surge_slot_until_its_agent_removed_the_objects(
    tmp_path: Path,
) -> None:
    write_fleet(tmp_path, FIXED.format(names="c0, c1"))
    s = Stepper(tmp_path)
    s.step()
    s.step()
    assert s.on(0) == ["c0", "c1"]
    write_fleet(tmp_path, FIXED.format(names="c0, c2"))
    old = dict(s.files)
    s.step()  # c1 is removed (maxUnavailable 1); c2 waits: maxSurge 0, c1 still counts
    assert s.on(0) == ["c0"]
    assert deleting(s) == [
        {"clusterName": "c1", "message": "deleting: waiting for cluster c1 to remove 2 objects"}
    ]
    assert [(b["cluster"], b["state"], b["removing"]) for b in state_deleting(s)] == [
        ("c1", "Unscheduled", 2)
    ]
    from reconciler.describe import describe_placement

    text = describe_placement(yaml.safe_load(s.files["status/placements/web.yaml"]))
    assert "Deleting:\n  c1: deleting: waiting for cluster c1 to remove 2 objects\n" in text
    lagging_step(s, {"c1": old})  # c1's agent has not pulled yet: still deleting
    assert s.on(0) == ["c0"]
    assert [d["clusterName"] for d in deleting(s)] == ["c1"]
    again = dict(s.files)
    assert lagging_step(s, {"c1": old}).files == again  # a no-op pass while it waits
    s.step()  # c1's agent pruned and reports no entry for web: the slot is free
    assert deleting(s) == [] and state_deleting(s) == []
    s.step()
    assert s.on(0) == ["c0", "c2"]


def test_a_deleting_cluster_that_leaves_the_fleet_frees_its_slot(tmp_path: Path) -> None:
    write_fleet(tmp_path, FIXED.format(names="c0, c1"))
    s = Stepper(tmp_path)
    s.step()
    s.step()
    write_fleet(tmp_path, FIXED.format(names="c0, c2"))
    old = dict(s.files)
    s.step()
    assert [d["clusterName"] for d in deleting(s)] == ["c1"]
    (tmp_path / "clusters/c1.yaml").unlink()
    lagging_step(s, {"c1": old})
    assert state_deleting(s) == []


def test_an_evicted_cluster_is_rescheduled_only_after_its_objects_are_gone(
    tmp_path: Path,
) -> None:
    s = started(tmp_path)
    old = dict(s.files)
    write_fleet(tmp_path, extra=EVICT.format(name="first"))
    lagging_step(s, {"c3": old})
    assert "c3" not in s.on(0)
    assert [(b["cluster"], b["state"]) for b in state_deleting(s)] == [("c3", "Bound")]
    # The scheduler picks c3 again; its new binding waits for the old one (§2.2 step 2).
    lagging_step(s, {"c3": old})
    assert "c3" not in s.on(0)
    per = {
        e["clusterName"]: e
        for e in yaml.safe_load(s.files["status/placements/web.yaml"])["status"][
            "perClusterPlacementStatuses"
        ]
    }
    assert per["c3"]["rolloutWaiting"] == (
        "waiting: cluster c3 is still removing the objects of this placement"
    )
    s.step()  # c3's agent removed them
    assert state_deleting(s) == []
    s.step()
    assert s.on(0) == CLUSTERS


def _executed(s: Stepper, name: str) -> tuple[str, str]:
    doc = yaml.safe_load(s.files[f"status/evictions/{name}.yaml"])
    cond = next(c for c in doc["status"]["conditions"] if c["type"] == "Executed")
    return cond["status"], cond["message"]


def _eviction(name: str, cluster: str) -> str:
    return EVICT.format(name=name).replace("clusterName: c3", f"clusterName: {cluster}")


def test_a_deleting_binding_counts_as_unavailable_for_the_disruption_budget(
    tmp_path: Path,
) -> None:
    s = started(tmp_path)
    old = dict(s.files)
    evictions = _eviction("a", "c3") + "---\n" + _eviction("b", "c4")
    write_fleet(tmp_path, extra=evictions + BUDGET.format(n=7))
    lagging_step(s, {"c3": old})
    assert _executed(s, "a") == (
        "True",
        "Eviction is allowed by specified ClusterResourcePlacementDisruptionBudget, "
        "availablePlacements: 8, totalPlacements: 8",
    )
    # In the same pass c3 is deleting: not available any more.
    assert _executed(s, "b") == (
        "False",
        "Eviction is blocked by specified ClusterResourcePlacementDisruptionBudget, "
        "availablePlacements: 7, totalPlacements: 8",
    )
    # The next pass: c3 still deleting (its agent lags) and picked again (Scheduled).
    write_fleet(tmp_path, extra=evictions + "---\n" + _eviction("c", "c5") + BUDGET.format(n=7))
    lagging_step(s, {"c3": old})
    assert _executed(s, "c") == (
        "False",
        "Eviction is blocked by specified ClusterResourcePlacementDisruptionBudget, "
        "availablePlacements: 7, totalPlacements: 9",
    )


def test_a_second_eviction_of_a_deleting_cluster_says_it_is_being_removed(
    tmp_path: Path,
) -> None:
    s = started(tmp_path, "  policy:\n    placementType: PickN\n    numberOfClusters: 8\n")
    old = dict(s.files)
    write_fleet(
        tmp_path,
        "  policy:\n    placementType: PickN\n    numberOfClusters: 8\n",
        extra=_eviction("a", "c3") + "---\n" + _eviction("b", "c3"),
    )
    lagging_step(s, {"c3": old})
    assert _executed(s, "b") == (
        "True",
        "Eviction is allowed, resources propagated by placement is currently being removed "
        "from cluster targeted by eviction",
    )

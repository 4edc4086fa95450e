"""Issue 11 row 37 of the distribution table through the real rollout stage: a scale from 10 to
20 reaches the clusters at the placement's RollingUpdate pace; clusters not yet updated keep
their old replica count and the status shows it as `renderedReplicas`."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import yaml

from gitfleet.api import AgentReport, format_time
from gitfleet.repo.workdir import WorkdirTree
from reconciler.pass_ import reconcile
from reconciler.state import read_state
from renderers import load_fleet
from tests.unit.distribute.rd_helpers import CLUSTERS, NOW, rd, subset, write_fleet

PLACEMENT_STRATEGY = {
    "type": "RollingUpdate",
    "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 0},
}


def reports(files: dict[str, bytes], now: object) -> dict[str, AgentReport]:
    out = {}
    for c in CLUSTERS:
        index = yaml.safe_load(files[f"clusters/{c}/index.yaml"]) or {}
        placements = [
            {
                "key": e["key"],
                "name": e["name"],
                "resourceSnapshotIndex": e["resourceSnapshotIndex"],
                "contentHash": e.get("contentHash", ""),
                "conditions": [
                    {
                        "type": "Applied",
                        "status": "True",
                        "reason": "AppliedWorkSuccessfully",
                        "lastTransitionTime": format_time(now),
                    },  # type: ignore[arg-type]
                    {
                        "type": "Available",
                        "status": "True",
                        "reason": "AvailableWorkSuccessfully",
                        "lastTransitionTime": format_time(now),
                    },
                ],
            }  # type: ignore[arg-type]
            for e in index.get("placements") or []
        ]
        out[c] = AgentReport.model_validate(
            {
                "apiVersion": "gitfleet.io/v1alpha1",
                "kind": "AgentReport",
                "metadata": {"name": c},
                "heartbeatTime": format_time(now),
                "agentVersion": "test",  # type: ignore[arg-type]
                "outputCommit": "a" * 40,
                "placements": placements,
            }
        )
    return out


def test_row37_scale_rolls_at_the_placement_pace(tmp_path: Path) -> None:
    eu_us = [subset("eu", "eu"), subset("us", "us")]
    placement = {
        "placements/web.yaml": [
            {
                "apiVersion": "placement.kubernetes-fleet.io/v1",
                "kind": "ClusterResourcePlacement",
                "metadata": {"name": "web"},
                "spec": {
                    "resourceSelectors": [
                        {"group": "", "version": "v1", "kind": "Namespace", "name": "shop"}
                    ],
                    "policy": {"placementType": "PickAll"},
                    "strategy": PLACEMENT_STRATEGY,
                },
            }
        ]
    }
    write_fleet(tmp_path, [rd({"replicas": 10, "topology": {"subsets": eu_us}})], extra=placement)
    first = reconcile(load_fleet(WorkdirTree(tmp_path.resolve())), read_state({})[0], None, NOW)
    prior, _ = read_state(first.files)
    write_fleet(tmp_path, [rd({"replicas": 20, "topology": {"subsets": eu_us}})], extra=placement)
    now = NOW + timedelta(minutes=1)
    second = reconcile(
        load_fleet(WorkdirTree(tmp_path.resolve())),
        prior,
        None,
        now,
        reports=reports(dict(first.files), now),
    )
    status = yaml.safe_load(second.files["status/replicadistributions/shop/web.yaml"])["status"]
    rows = [c for s in status["subsetStatuses"] for c in s["clusters"]]
    pending = [r["name"] for r in rows if "renderedReplicas" in r]
    moved = [r["name"] for r in rows if "renderedReplicas" not in r]
    assert pending and moved, rows  # some clusters wait for the rolling budget
    assert status["renderedReplicas"] != status["placedReplicas"] == 20

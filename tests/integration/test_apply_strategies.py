"""Every apply strategy end to end: render, then hub and agents through real Git with in-memory
clusters. One cluster already holds the ConfigMap (written by someone else, different data), so
takeover, drift and diff rules all have something to decide."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitfleet.agent.memory import InMemoryCluster
from gitfleet.api.indexrow import read_row
from gitfleet.api.output import expand_cluster_statuses
from tests.helpers.agents import make_agent
from tests.helpers.fleetfiles import format_cluster, format_settings, write_tree
from tests.helpers.gitrepo import commit_all, init_bare, init_work, show_output
from tests.helpers.hubs import Clock, make_hub
from tests.integration.fleet_helpers import run_cli

PLACEMENT = """apiVersion: placement.kubernetes-fleet.io/v1
kind: ClusterResourcePlacement
metadata:
  name: shop
spec:
  resourceSelectors:
    - {{group: "", version: v1, kind: Namespace, name: shop}}
  strategy:
    applyStrategy:
{strategy}
"""
PREEXISTING = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "settings", "namespace": "shop"},
    "data": {"mode": "manual"},
}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}

# strategy YAML, expected ConfigMap data on (fresh, preexisting) clusters, expected CRP
# condition types -> status.
STRATEGIES: list[tuple[str, str, tuple[str | None, str], dict[str, str]]] = [
    (
        "client-side-apply",
        "type: ClientSideApply",
        ("live", "live"),
        {"ClusterResourcePlacementApplied": "True"},
    ),
    (
        "server-side-apply-force",
        "type: ServerSideApply\n      serverSideApplyConfig: {force: true}",
        ("live", "live"),
        {"ClusterResourcePlacementApplied": "True"},
    ),
    (
        "report-diff",
        "type: ReportDiff",
        (None, "manual"),
        {"ClusterResourcePlacementDiffReported": "True"},
    ),
    (
        "report-diff-full-comparison",
        "type: ReportDiff\n      comparisonOption: FullComparison",
        (None, "manual"),
        {"ClusterResourcePlacementDiffReported": "True"},
    ),
    (
        "never-take-over",
        "type: ClientSideApply\n      whenToTakeOver: Never",
        ("live", "manual"),
        {"ClusterResourcePlacementApplied": "False"},
    ),
    (
        "take-over-if-no-diff",
        "whenToTakeOver: IfNoDiff",
        ("live", "manual"),
        {"ClusterResourcePlacementApplied": "False"},
    ),
    (
        "apply-if-not-drifted",
        "whenToApply: IfNotDrifted\n      comparisonOption: FullComparison",
        ("live", "live"),
        {"ClusterResourcePlacementApplied": "True"},
    ),
]


def _world(tmp: Path, strategy: str) -> tuple[Path, Path]:
    remote = init_bare(tmp / "remote.git")
    work = init_work(tmp / "work")
    files = {f"clusters/{name}.yaml": format_cluster(name, api="v1") for name in ("fresh", "taken")}
    files["resources/shop.yaml"] = format_settings("shop", "mode", "live")
    files["placements/shop.yaml"] = PLACEMENT.format(strategy="      " + strategy)
    write_tree(work, files)
    commit_all(work, "fleet", push_to=remote)
    return remote, work


def _settings(cluster: InMemoryCluster) -> Any:
    found = [o for o in cluster.objects() if o["metadata"]["name"] == "settings"]
    return found[0]["data"]["mode"] if found else None


@pytest.mark.parametrize(
    ("strategy", "data", "conditions"),
    [case[1:] for case in STRATEGIES],
    ids=[case[0] for case in STRATEGIES],
)
def test_apply_strategy_end_to_end(
    tmp_path: Path,
    strategy: str,
    data: tuple[str | None, str],
    conditions: dict[str, str],
) -> None:
    remote, work = _world(tmp_path, strategy)
    rendered = run_cli(
        tmp_path, "render", work, "--out", tmp_path / "out", "--now", "2026-11-21T10:00:00Z"
    )
    assert rendered.code == 0, rendered.output
    index = yaml.safe_load((tmp_path / "out/clusters/fresh/index.yaml").read_text())
    row = read_row(index["placements"][0])  # the default strategy is left out of the file
    assert row["applyStrategy"]["type"] in strategy or "type" not in strategy

    clock = Clock()
    hub = make_hub(remote, tmp_path / "hub", clock)
    clusters = {"fresh": InMemoryCluster(), "taken": InMemoryCluster()}
    clusters["taken"].apply(NAMESPACE, field_manager="kubectl", force=False, dry_run=False)
    clusters["taken"].apply(PREEXISTING, field_manager="kubectl", force=False, dry_run=False)
    agents = {
        n: make_agent(remote, n, tmp_path / f"agent-{n}", clock, c) for n, c in clusters.items()
    }
    for _ in range(3):
        hub.run_once()
        for agent in agents.values():
            agent.run_once()
    hub.run_once()

    assert (_settings(clusters["fresh"]), _settings(clusters["taken"])) == data
    status = yaml.safe_load(show_output(remote, "status/placements/shop.yaml"))
    types = {c["type"]: c["status"] for c in status["status"]["conditions"]}
    for ctype, value in conditions.items():
        assert types.get(ctype) == value, status["status"]["conditions"]
    if "ReportDiff" in strategy:
        assert "ClusterResourcePlacementApplied" not in types
        taken = next(
            e for e in expand_cluster_statuses(status["status"]) if e["clusterName"] == "taken"
        )
        diffed = taken.get("diffedPlacements") or []
        assert [d["name"] for d in diffed] == ["settings"], taken


def test_report_diff_validates_and_renders(tmp_path: Path) -> None:
    _, work = _world(tmp_path, "type: ReportDiff")
    result = run_cli(
        tmp_path, "validate", work, "--now", datetime(2026, 11, 21, tzinfo=UTC).isoformat()
    )
    assert result.code == 0, result.output

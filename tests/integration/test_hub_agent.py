"""The whole flow through real Git: the hub renders, agents apply to in-memory clusters and push
reports, the hub reads the reports into eligibility and placement status.

A bare repository in a temp dir is the remote; the source branch is written with plain git.
Clusters are `InMemoryCluster`s (the Kubernetes API is not available here).
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from gitfleet.agent.gitloop import Agent, AgentConfig
from gitfleet.agent.memory import InMemoryCluster
from gitfleet.agent.retry import Backoff
from gitfleet.agent.run import AgentOptions
from gitfleet.agent.sync import CrdWait
from reconciler.loop import Hub, HubConfig

CLUSTER = """apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata:
  name: {name}
  labels: {{env: prod}}
"""
RESOURCES = """apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  mode: {mode}
"""
PLACEMENT = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: shop
spec:
  resourceSelectors:
    - {group: "", version: v1, kind: Namespace, name: shop}
"""


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-c", "user.name=Dev", "-c", "user.email=dev@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture()
def world(tmp_path: Path) -> dict[str, object]:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "clusters").mkdir()
    for name in ("c1", "c2"):
        (work / "clusters" / f"{name}.yaml").write_text(CLUSTER.format(name=name))
    (work / "resources").mkdir()
    (work / "resources/shop.yaml").write_text(RESOURCES.format(mode="live"))
    (work / "placements").mkdir()
    (work / "placements/shop.yaml").write_text(PLACEMENT)
    git(work, "add", "-A")
    git(work, "commit", "-qm", "fleet")
    git(work, "push", "-q", str(remote), "main")
    return {"remote": remote, "work": work, "tmp": tmp_path}


def agent_for(name: str, world: dict[str, object], clock: Clock, cluster: InMemoryCluster) -> Agent:
    tmp = world["tmp"]
    assert isinstance(tmp, Path)
    options = AgentOptions(
        version="test",
        backoff=Backoff(sleep=lambda s: None),
        crd_wait=CrdWait(sleep=lambda s: None),
    )
    config = AgentConfig(
        str(world["remote"]), name, tmp / f"agent-{name}", heartbeat=timedelta(seconds=60)
    )
    return Agent(config, cluster, clock=clock, options=options)


def output_file(remote: Path, path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(remote), "show", f"gitfleet/rendered:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def output_files(remote: Path) -> set[str]:
    out = subprocess.run(
        ["git", "--git-dir", str(remote), "ls-tree", "-r", "--name-only", "gitfleet/rendered"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(out.splitlines())


def test_hub_and_agents_converge(world: dict[str, object]) -> None:
    remote, work, tmp = world["remote"], world["work"], world["tmp"]
    assert isinstance(remote, Path) and isinstance(work, Path) and isinstance(tmp, Path)
    clock = Clock()
    hub = Hub(HubConfig(str(remote), tmp / "hub"), clock=clock, sleep=lambda s: None)
    clusters = {n: InMemoryCluster() for n in ("c1", "c2")}
    agents = {n: agent_for(n, world, clock, clusters[n]) for n in clusters}

    # No agent has reported: KubeFleet eligibility places nothing.
    first = hub.run_once()
    assert first.outcome == "committed"
    status = yaml.safe_load(output_file(remote, "status/placements/shop.yaml"))
    assert "perClusterPlacementStatuses" not in status["status"]
    assert hub.run_once().outcome == "skipped"

    # Agents report (nothing to apply yet); the hub now places on both clusters.
    for a in agents.values():
        assert a.run_once().outcome == "pushed"
    assert hub.run_once().outcome == "committed"
    assert "settings" in output_file(remote, "clusters/c1/shop/configmap_shop_settings.yaml")

    # Agents apply and report Applied/Available; the hub shows them per cluster.
    for name, a in agents.items():
        result = a.run_once()
        assert result.outcome == "pushed", result.message
        names = {o["metadata"]["name"] for o in clusters[name].objects()}
        assert {"shop", "settings"} <= names
    assert hub.run_once().outcome == "committed"
    status = yaml.safe_load(output_file(remote, "status/placements/shop.yaml"))
    types = {c["type"]: c["status"] for c in status["status"]["conditions"]}
    assert types["ClusterResourcePlacementApplied"] == "True"
    assert types["ClusterResourcePlacementAvailable"] == "True"

    # The hub's status commit is a new output commit: agents confirm it once (their report
    # names the output commit), the hub's pass then changes nothing, and the next round is quiet.
    for a in agents.values():
        assert a.run_once().outcome == "pushed"
    assert hub.run_once().outcome == "unchanged"
    for a in agents.values():
        assert a.run_once().outcome == "unchanged"
    assert hub.run_once().outcome == "skipped"

    # Edit the resource: new snapshot. The default RollingUpdate (maxUnavailable 25% of 2 = 1)
    # gives it to c1 only; c2 keeps its files byte for byte until c1 reports it Available.
    before_c2 = output_file(remote, "clusters/c2/shop/configmap_shop_settings.yaml")
    (work / "resources/shop.yaml").write_text(RESOURCES.format(mode="maintenance"))
    git(work, "commit", "-qam", "maintenance mode")
    git(work, "push", "-q", str(remote), "main")
    assert hub.run_once().outcome == "committed"
    status = yaml.safe_load(output_file(remote, "status/placements/shop.yaml"))
    assert status["status"]["observedResourceIndex"] == "1"
    types = {c["type"]: c["status"] for c in status["status"]["conditions"]}
    assert types["ClusterResourcePlacementRolloutStarted"] == "False"
    per_cluster = {e["clusterName"]: e for e in status["status"]["perClusterPlacementStatuses"]}
    assert per_cluster["c2"]["rolloutWaiting"] == (
        "waiting: maxUnavailable 1 reached, 1 cluster updating (maxUnavailable 25% of 2)"
    )
    assert output_file(remote, "clusters/c2/shop/configmap_shop_settings.yaml") == before_c2
    index_c2 = yaml.safe_load(output_file(remote, "clusters/c2/index.yaml"))
    assert index_c2["placements"][0]["resourceSnapshotIndex"] == 0
    assert hub.run_once().outcome == "skipped"  # no report, no progress

    def mode(name: str) -> str:
        cm = next(o for o in clusters[name].objects() if o["metadata"]["name"] == "settings")
        return str(cm["data"]["mode"])

    # Wave 1: c1 applies and reports; only then does the hub move c2.
    for a in agents.values():
        a.run_once()
    assert (mode("c1"), mode("c2")) == ("maintenance", "live")
    assert hub.run_once().outcome == "committed"
    assert "maintenance" in output_file(remote, "clusters/c2/shop/configmap_shop_settings.yaml")
    # Wave 2.
    for a in agents.values():
        a.run_once()
    assert (mode("c1"), mode("c2")) == ("maintenance", "maintenance")
    hub.run_once()
    for a in agents.values():
        a.run_once()
    hub.run_once()
    status = yaml.safe_load(output_file(remote, "status/placements/shop.yaml"))
    types = {c["type"]: c["status"] for c in status["status"]["conditions"]}
    assert types["ClusterResourcePlacementAvailable"] == "True"

    # Remove the placement: the mass-deletion guard holds it (its files stay) until a commit
    # approves it; then the hub drops the files and the agents prune what they applied.
    (work / "placements/shop.yaml").unlink()
    git(work, "commit", "-qam", "remove shop")
    git(work, "push", "-q", str(remote), "main")
    assert hub.run_once().outcome == "committed"
    assert "clusters/c1/shop/configmap_shop_settings.yaml" in output_files(remote)
    held = yaml.safe_load(output_file(remote, "status/placements/shop.yaml"))
    assert any(c["type"] == "DeletionHeld" for c in held["status"]["conditions"])
    git(work, "commit", "-q", "--allow-empty", "-m", "drop shop\n\nGitfleet-Allow-Deletion: shop")
    git(work, "push", "-q", str(remote), "main")
    assert hub.run_once().outcome == "committed"
    assert "clusters/c1/shop/configmap_shop_settings.yaml" not in output_files(remote)
    for name, a in agents.items():
        a.run_once()
        names = {o["metadata"]["name"] for o in clusters[name].objects()}
        assert "settings" not in names and "shop" not in names


def test_heartbeat_timeout_makes_a_cluster_ineligible_for_new_placements(
    world: dict[str, object],
) -> None:
    remote, tmp = world["remote"], world["tmp"]
    assert isinstance(remote, Path) and isinstance(tmp, Path)
    clock = Clock()
    hub = Hub(HubConfig(str(remote), tmp / "hub"), clock=clock, sleep=lambda s: None)
    agent = agent_for("c1", world, clock, InMemoryCluster())
    agent.run_once()
    clock.now += timedelta(minutes=10)
    hub.run_once()
    cluster = yaml.safe_load(output_file(remote, "status/clusters/c1.yaml"))
    eligible = next(
        c for c in cluster["status"]["conditions"] if c["type"] == "gitfleet.io/Eligible"
    )
    assert eligible["status"] == "False"
    assert "no recent heartbeat signals (last received 10.00 minutes ago)" in eligible["message"]

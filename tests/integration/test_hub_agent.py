"""The whole flow through real Git: the hub renders, agents apply to in-memory clusters and push
reports, the hub reads the reports into eligibility and placement status.

A bare repository in a temp dir is the remote; the source branch is written with plain git.
Clusters are `InMemoryCluster`s (the Kubernetes API is not available here).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from gitfleet.agent.gitloop import Agent
from gitfleet.agent.memory import InMemoryCluster
from gitfleet.api.limits import Limits
from gitfleet.api.output import expand_cluster_statuses
from gitfleet.load.jsontext import json_body
from tests.helpers.agents import make_agent
from tests.helpers.fleetfiles import format_cluster, format_placement, format_settings, write_tree
from tests.helpers.gitrepo import commit_all, git, init_bare, init_work, list_output, show_output
from tests.helpers.hubs import Clock, make_hub


@pytest.fixture()
def world(tmp_path: Path) -> dict[str, object]:
    remote = init_bare(tmp_path / "remote.git")
    work = init_work(tmp_path / "work")
    files = {f"clusters/{name}.yaml": format_cluster(name, "prod") for name in ("c1", "c2")}
    files["resources/shop.yaml"] = format_settings("shop", "mode", "live")
    files["placements/shop.yaml"] = format_placement("shop")
    write_tree(work, files)
    commit_all(work, "fleet", push_to=remote)
    return {"remote": remote, "work": work, "tmp": tmp_path}


def agent_for(name: str, world: dict[str, object], clock: Clock, cluster: InMemoryCluster) -> Agent:
    tmp, remote = world["tmp"], world["remote"]
    assert isinstance(tmp, Path) and isinstance(remote, Path)
    return make_agent(remote, name, tmp / f"agent-{name}", clock, cluster)


def test_hub_and_agents_converge(world: dict[str, object]) -> None:
    remote, work, tmp = world["remote"], world["work"], world["tmp"]
    assert isinstance(remote, Path) and isinstance(work, Path) and isinstance(tmp, Path)
    clock = Clock()
    hub = make_hub(remote, tmp / "hub", clock)
    clusters = {n: InMemoryCluster() for n in ("c1", "c2")}
    agents = {n: agent_for(n, world, clock, clusters[n]) for n in clusters}

    # No agent has reported: KubeFleet eligibility places nothing.
    first = hub.run_once()
    assert first.outcome == "committed"
    status = yaml.safe_load(show_output(remote, "status/placements/shop.yaml"))
    assert not expand_cluster_statuses(status["status"])
    assert hub.run_once().outcome == "skipped"

    # Agents report (nothing to apply yet); the hub now places on both clusters.
    for a in agents.values():
        assert a.run_once().outcome == "pushed"
    assert hub.run_once().outcome == "committed"
    assert "settings" in show_output(remote, "clusters/c1/shop/configmap_shop_settings.yaml")

    # Agents apply and report Applied/Available; the hub shows them per cluster.
    for name, a in agents.items():
        result = a.run_once()
        assert result.outcome == "pushed", result.message
        names = {o["metadata"]["name"] for o in clusters[name].objects()}
        assert {"shop", "settings"} <= names
    pushed = git(remote, "show", "gitfleet/status/c1:report.yaml")  # JSON text, read fast
    assert pushed.startswith("{") and json_body(pushed, Limits()) is not None
    assert hub.run_once().outcome == "committed"
    status = yaml.safe_load(show_output(remote, "status/placements/shop.yaml"))
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
    before_c2 = show_output(remote, "clusters/c2/shop/configmap_shop_settings.yaml")
    (work / "resources/shop.yaml").write_text(format_settings("shop", "mode", "maintenance"))
    git(work, "commit", "-qam", "maintenance mode")
    git(work, "push", "-q", str(remote), "main")
    assert hub.run_once().outcome == "committed"
    status = yaml.safe_load(show_output(remote, "status/placements/shop.yaml"))
    assert status["status"]["observedResourceIndex"] == "1"
    types = {c["type"]: c["status"] for c in status["status"]["conditions"]}
    assert types["ClusterResourcePlacementRolloutStarted"] == "False"
    per_cluster = {e["clusterName"]: e for e in expand_cluster_statuses(status["status"])}
    assert per_cluster["c2"]["rolloutWaiting"] == (
        "waiting: maxUnavailable 1 reached, 1 cluster updating (maxUnavailable 25% of 2)"
    )
    assert show_output(remote, "clusters/c2/shop/configmap_shop_settings.yaml") == before_c2
    index_c2 = yaml.safe_load(show_output(remote, "clusters/c2/index.yaml"))
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
    assert "maintenance" in show_output(remote, "clusters/c2/shop/configmap_shop_settings.yaml")
    # Wave 2.
    for a in agents.values():
        a.run_once()
    assert (mode("c1"), mode("c2")) == ("maintenance", "maintenance")
    hub.run_once()
    for a in agents.values():
        a.run_once()
    hub.run_once()
    status = yaml.safe_load(show_output(remote, "status/placements/shop.yaml"))
    types = {c["type"]: c["status"] for c in status["status"]["conditions"]}
    assert types["ClusterResourcePlacementAvailable"] == "True"

    # Remove the placement: the mass-deletion guard holds it (its files stay) until a commit
    # approves it; then the hub drops the files and the agents prune what they applied.
    (work / "placements/shop.yaml").unlink()
    git(work, "commit", "-qam", "remove shop")
    git(work, "push", "-q", str(remote), "main")
    assert hub.run_once().outcome == "committed"
    assert "clusters/c1/shop/configmap_shop_settings.yaml" in list_output(remote)
    held = yaml.safe_load(show_output(remote, "status/placements/shop.yaml"))
    assert any(c["type"] == "DeletionHeld" for c in held["status"]["conditions"])
    git(work, "commit", "-q", "--allow-empty", "-m", "drop shop\n\nGitfleet-Allow-Deletion: shop")
    git(work, "push", "-q", str(remote), "main")
    assert hub.run_once().outcome == "committed"
    assert "clusters/c1/shop/configmap_shop_settings.yaml" not in list_output(remote)
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
    hub = make_hub(remote, tmp / "hub", clock)
    agent = agent_for("c1", world, clock, InMemoryCluster())
    agent.run_once()
    clock.now += timedelta(minutes=10)
    hub.run_once()
    cluster = yaml.safe_load(show_output(remote, "status/clusters/c1.yaml"))
    eligible = next(
        c for c in cluster["status"]["conditions"] if c["type"] == "gitfleet.io/Eligible"
    )
    assert eligible["status"] == "False"
    assert "no recent heartbeat signals (last received 10.00 minutes ago)" in eligible["message"]

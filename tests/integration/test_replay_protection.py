"""Replay protection survives restarts: the agent records the last applied output commit on the
cluster, so an agent restarted with an empty cache (and a deleted status branch) still refuses an
output branch rewound to an older commit, and the cluster keeps its applied state."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gitfleet.agent.gitloop import Agent, AgentConfig
from gitfleet.agent.inventory import read_applied_commit
from gitfleet.agent.memory import InMemoryCluster
from reconciler.loop import Hub, HubConfig
from tests.helpers.gitrepo import commit_all, copy_work, git, init_bare

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
OUTPUT = "gitfleet/rendered"


def _replicas(cluster: InMemoryCluster) -> int:
    live = cluster.get("apps/v1", "Deployment", "web", "frontend")
    assert live is not None
    return int(live["spec"]["replicas"])


def test_a_restarted_agent_refuses_a_rewound_output_branch(tmp_path: Path) -> None:
    remote = init_bare(tmp_path / "remote.git")
    work = copy_work(ROOT / "examples/quickstart", tmp_path / "work")
    commit_all(work, "fleet", push_to=remote)
    hub = Hub(HubConfig(str(remote), tmp_path / "hub"), clock=lambda: NOW)
    old = hub.run_once().output
    deployment = work / "resources/web/deployment.yaml"
    deployment.write_text(deployment.read_text().replace("replicas: 2", "replicas: 5"))
    git(work, "commit", "-qam", "scale")
    git(work, "push", "-q", str(remote), "main")
    new = hub.run_once().output
    assert old and new and old != new

    cluster = InMemoryCluster()
    first = Agent(
        AgentConfig(str(remote), "eu-1", tmp_path / "agent-1"), cluster, clock=lambda: NOW
    )
    assert first.run_once().outcome == "pushed"
    assert _replicas(cluster) == 5 and read_applied_commit(cluster) == new

    # Whoever can push rewinds the output branch and deletes the agent's status branch.
    git(remote, "update-ref", f"refs/heads/{OUTPUT}", old)
    git(remote, "update-ref", "-d", "refs/heads/gitfleet/status/eu-1")
    fresh = Agent(
        AgentConfig(str(remote), "eu-1", tmp_path / "agent-2"), cluster, clock=lambda: NOW
    )
    result = fresh.run_once()
    assert result.outcome == "refused-downgrade", result
    assert new[:12] in result.message
    assert _replicas(cluster) == 5

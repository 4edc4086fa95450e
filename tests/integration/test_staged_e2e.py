"""A staged rollout end to end on real Git: a bare remote, the hub and in-memory agents.

Three stages (staging -> TimedWait 10m -> canary -> Approval -> prod). The approval is a branch
made by `gitfleet approve` and merged into main by a reviewer; the test checks the output commits,
the trailers naming the approver, that no prod cluster receives anything before the merge, and
that `gitfleet history` shows who approved.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import yaml

from gitfleet import rolloutops
from gitfleet.agent.memory import InMemoryCluster
from gitfleet.repo.trailers import parse_trailers
from gitfleet.service import format_history, history, output_files
from tests.helpers import gitrepo
from tests.helpers.agents import make_agent
from tests.helpers.fleetfiles import format_cluster, format_placement, format_settings, write_tree
from tests.helpers.gitrepo import git
from tests.helpers.hubs import Clock, make_hub

LABELS = {"stg1": "staging", "can1": "canary", "prod1": "prod", "prod2": "prod"}
RESOURCES = format_settings("shop", "version", "v2")
PLACEMENT = format_placement("shop", "External")
ROLLOUT = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateStrategy
metadata:
  name: three-stages
spec:
  stages:
    - name: staging
      labelSelector: {matchLabels: {env: staging}}
      afterStageTasks:
        - type: TimedWait
          waitTime: 10m
    - name: canary
      labelSelector: {matchLabels: {env: canary}}
      afterStageTasks:
        - type: Approval
    - name: prod
      labelSelector: {matchLabels: {env: prod}}
      maxConcurrency: 1
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata:
  name: release
spec:
  placementName: shop
  stagedRolloutStrategyName: three-stages
  state: Run
"""


def _world(tmp: Path) -> tuple[Path, Path]:
    remote = gitrepo.init_bare(tmp / "remote.git")
    work = gitrepo.init_work(tmp / "work", origin=remote)
    git(work, "config", "user.name", "Ana Approver")
    git(work, "config", "user.email", "ana@example.com")
    files = {f"clusters/{name}.yaml": format_cluster(name, env) for name, env in LABELS.items()}
    files["resources/shop.yaml"] = RESOURCES
    files["placements/shop.yaml"] = PLACEMENT
    write_tree(work, files)
    gitrepo.commit_all(work, "fleet with an External placement", push_to="origin")
    return remote, work


def _show(remote: Path, path: str) -> str | None:
    found = gitrepo.find_output(remote, path)
    return None if found is None else found.decode()


def _has(cluster: InMemoryCluster) -> bool:
    return any(o["metadata"]["name"] == "settings" for o in cluster.objects())


def _run_status(remote: Path) -> dict[str, object]:
    doc = yaml.safe_load(_show(remote, "status/updateruns/release.yaml") or "{}")
    return doc["status"]  # type: ignore[no-any-return]


def _stage_ok(remote: Path, i: int) -> bool:
    stage = _run_status(remote)["stagesStatus"][i]  # type: ignore[index]
    return any(
        c["type"] == "Succeeded" and c["status"] == "True" for c in stage.get("conditions", [])
    )


def test_three_stage_rollout_approved_by_merging_a_pull_request(tmp_path: Path) -> None:
    remote, work = _world(tmp_path)
    clock = Clock()
    hub = make_hub(remote, tmp_path / "hub", clock)
    clusters = {n: InMemoryCluster() for n in LABELS}
    agents = {n: make_agent(remote, n, tmp_path / f"agent-{n}", clock, clusters[n]) for n in LABELS}

    def round_trip(advance: timedelta = timedelta(seconds=30)) -> None:
        clock.now += advance
        for agent in agents.values():
            agent.run_once()
        hub.run_once()

    hub.run_once()
    round_trip()
    round_trip()
    assert not any(_has(c) for c in clusters.values()), "an External placement waits for a run"

    # The release is created once the clusters have joined (a run initializes once).
    write_tree(work, {"rollouts/release.yaml": ROLLOUT})
    git(work, "add", "-A")
    git(work, "commit", "-qm", "release v2 in three stages")
    git(work, "push", "-q", "origin", "main")
    for _ in range(4):
        round_trip()
    assert _has(clusters["stg1"]), "staging is updated first"
    assert not any(_has(clusters[c]) for c in ("can1", "prod1", "prod2"))
    assert _stage_ok(remote, 0) is False, "staging waits 10 minutes after its clusters"

    round_trip(timedelta(minutes=10))
    for _ in range(3):
        round_trip()
    assert _stage_ok(remote, 0) and _has(clusters["can1"])
    assert _stage_ok(remote, 1) is False
    request = _show(remote, "status/approvals/release-after-canary.yaml")
    assert request is not None and "ApprovalAccepted" not in request
    pending = gitrepo.read_output_messages(remote)
    assert (
        "Gitfleet-Approval-Pending: release-after-canary (gitfleet approve release canary)"
        in pending
    )
    for _ in range(3):
        round_trip(timedelta(minutes=30))
    assert not any(_has(clusters[c]) for c in ("prod1", "prod2")), "no prod change before the merge"
    prod_files = [
        p for p in (_show(remote, "clusters/prod1/index.yaml") or "").splitlines() if "shop" in p
    ]
    assert prod_files == []

    # Ana runs `gitfleet approve`; Rita reviews and merges the pull request.
    git(
        work,
        "fetch",
        "-q",
        "origin",
        "+refs/heads/gitfleet/rendered:refs/remotes/origin/gitfleet/rendered",
    )
    git(work, "fetch", "-q", "origin", "+refs/heads/main:refs/remotes/origin/main")
    done = rolloutops.approve(work, "release", "canary", message="canary is healthy", now=clock.now)
    assert done.branch == "approve/release-after-canary"
    assert git(work, "rev-parse", "main") == git(work, "rev-parse", "origin/main"), "never on main"
    git(
        work,
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge approval of canary",
        done.branch,
        user="Rita Reviewer",
    )
    merge = git(work, "rev-parse", "HEAD")
    git(work, "push", "-q", "origin", "main")

    clock.now += timedelta(seconds=30)
    hub.run_once()
    accepted = yaml.safe_load(_show(remote, "status/approvals/release-after-canary.yaml") or "{}")
    notes = accepted["metadata"]["annotations"]
    assert notes["gitfleet.io/approved-by"] == "Rita Reviewer <rita@example.com>"
    assert notes["gitfleet.io/approval-commit"] == merge
    message = gitrepo.read_output_messages(remote, 1)
    trailers = parse_trailers(message)
    assert trailers["Gitfleet-Approved-By"] == ["Rita Reviewer <rita@example.com>"]
    assert trailers["Gitfleet-Approval-Commit"] == [merge]

    for _ in range(8):
        round_trip()
    assert _has(clusters["prod1"]) and _has(clusters["prod2"])
    status = _run_status(remote)
    conditions = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}  # type: ignore[index]
    assert conditions["Succeeded"] == ("True", "UpdateRunSucceeded")

    # Deleting the approval file later changes nothing.
    git(work, "rm", "-q", "approvals/release-after-canary.yaml")
    git(work, "commit", "-qm", "clean up approval")
    git(work, "push", "-q", "origin", "main")
    round_trip()
    assert _run_status(remote) == status

    files = dict(output_files(str(remote), "gitfleet/rendered", tmp_path / "c"))
    described = rolloutops.describe_run(files, "release", "")
    assert (
        "Approval release-after-canary: approved by Rita Reviewer <rita@example.com>" in described
    )
    assert "  - prod2: succeeded" in described

    text = format_history(history(str(remote), "gitfleet/rendered", None, None, 50, tmp_path / "c"))
    assert (
        f"approved release-after-canary by Rita Reviewer <rita@example.com> (commit {merge[:12]})"
        in text
    )

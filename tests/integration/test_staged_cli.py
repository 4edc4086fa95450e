"""`gitfleet approve`, `gitfleet updaterun stop|run` and `gitfleet status updaterun` on real Git
repositories (the output branch is written by the staged driver through the test simulator)."""

from __future__ import annotations

import subprocess
from datetime import timedelta
from pathlib import Path

import yaml
from click.testing import CliRunner

from gitfleet.cli import main
from gitfleet.repo.gitwrite import Identity, commit_files
from tests.unit.rollout.stagedkit import Sim, binding, fleet, run, strategy, view

RUN_FILE = """\
# Release of app v2 (reviewed by the platform team)
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateStrategy
metadata:
  name: strat
spec:
  stages:
    - name: canary   # first
      labelSelector: {matchLabels: {env: canary}}
      afterStageTasks:
        - type: Approval
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata:
  name: run1
spec:
  placementName: 'app'     # the placement
  stagedRolloutStrategyName: strat
  state: Run   # Initialize | Run | Stop
"""
STAGES = [
    {
        "name": "canary",
        "labelSelector": {"matchLabels": {"env": "canary"}},
        "afterStageTasks": [{"type": "Approval"}],
    }
]


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "fleet"
    (repo / "rollouts").mkdir(parents=True)
    (repo / "rollouts" / "release.yaml").write_text(RUN_FILE)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    git(repo, "config", "user.name", "Ana Approver")
    git(repo, "config", "user.email", "ana@example.com")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fleet")
    return repo


def _output(repo: Path, files: dict[str, bytes]) -> None:
    hub = Identity("gitfleet", "gitfleet@localhost")
    done = commit_files(
        repo, None, files, "gitfleet: render\n", hub, ref="refs/heads/gitfleet/rendered"
    )
    assert done.changed


def _waiting_output() -> dict[str, bytes]:
    sim = Sim(fleet(strategy(STAGES), run()), view([binding("c1")]), {"c1": {"env": "canary"}})
    sim.step()
    sim.step(timedelta(minutes=1))
    return sim.prior


def test_updaterun_stop_and_run_keep_the_file(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    result = CliRunner().invoke(main, ["updaterun", "stop", "run1", "--repo", str(repo)])
    assert result.exit_code == 0, result.output
    assert "spec.state Run -> Stop" in result.output
    edited = (repo / "rollouts" / "release.yaml").read_text()
    assert [line for line in edited.splitlines() if line not in RUN_FILE.splitlines()] == [
        "  state: Stop   # Initialize | Run | Stop"
    ]
    result = CliRunner().invoke(main, ["updaterun", "run", "run1", "--repo", str(repo)])
    assert result.exit_code == 0, result.output
    assert (repo / "rollouts" / "release.yaml").read_text() == RUN_FILE
    missing = CliRunner().invoke(main, ["updaterun", "stop", "nope", "--repo", str(repo)])
    assert missing.exit_code == 1 and "is not declared" in missing.output


def test_forbidden_state_transition(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    path = repo / "rollouts" / "release.yaml"
    path.write_text(RUN_FILE.replace("state: Run", "state: Initialize"))
    result = CliRunner().invoke(main, ["updaterun", "stop", "run1", "--repo", str(repo)])
    assert result.exit_code == 1
    assert "cannot transition from Initialize to Stop" in result.output


def test_approve_creates_a_branch_and_never_pushes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    main_before = git(repo, "rev-parse", "main")
    refused = CliRunner().invoke(main, ["approve", "run1", "canary", "--repo", str(repo)])
    assert refused.exit_code == 1 and "output branch gitfleet/rendered not found" in refused.output
    _output(repo, {"README": b"x\n"})
    refused = CliRunner().invoke(main, ["approve", "run1", "canary", "--repo", str(repo)])
    assert (
        refused.exit_code == 1
        and "no pending approval request for run run1 stage canary" in refused.output
    )
    git(repo, "update-ref", "-d", "refs/heads/gitfleet/rendered")
    _output(repo, _waiting_output())
    args = [
        "approve",
        "run1",
        "canary",
        "--repo",
        str(repo),
        "-m",
        "canary looks good",
        "--now",
        "2026-11-21T11:00:00Z",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "git push origin approve/run1-after-canary" in result.output
    assert "gh pr create --base main --head approve/run1-after-canary" in result.output
    assert git(repo, "rev-parse", "main") == main_before, "main is never touched"
    approval = yaml.safe_load(
        git(repo, "show", "approve/run1-after-canary:approvals/run1-after-canary.yaml")
    )
    assert approval["kind"] == "ClusterApprovalRequest"
    assert approval["spec"] == {"parentStageRollout": "run1", "targetStage": "canary"}
    (cond,) = approval["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["observedGeneration"], cond["message"]) == (
        "Approved",
        "True",
        1,
        "canary looks good",
    )
    assert git(repo, "log", "-1", "--format=%an", "approve/run1-after-canary") == "Ana Approver"
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 1 and "already exists" in again.output
    # the committed approval is exactly what the driver accepts
    from gitfleet.load.model import PathCommit

    sim = Sim(
        fleet(
            strategy(STAGES),
            run(),
            approval,
            commits={
                "approvals/run1-after-canary.yaml": PathCommit("c" * 40, "Ana <a@x>", "Ana <a@x>")
            },
        ),
        view([binding("c1")]),
        {"c1": {"env": "canary"}},
    )
    sim.prior = _waiting_output()
    sim.now += timedelta(hours=1)
    assert ("Gitfleet-Approved-By", "Ana <a@x>") in sim.step().trailers


def test_status_updaterun(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _output(repo, _waiting_output())
    result = CliRunner().invoke(
        main,
        [
            "status",
            "updaterun",
            "run1",
            "--repo",
            str(repo),
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Stage canary" in result.output
    assert "c1: succeeded" in result.output
    assert "PENDING (approve: gitfleet approve run1 canary)" in result.output
    assert "UpdateRunWaiting" in result.output

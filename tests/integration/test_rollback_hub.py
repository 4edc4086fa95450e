"""The hub loop on a real bare remote: staged runs advance on their own timers, and a run on an
older resource snapshot index renders it from the recorded commit (read from the hub's mirror).

Clusters are AssumeJoined without agents, so nothing but the hub's clock moves the runs: the
after-stage TimedWait is passed only when the hub wakes up for it (`Gitfleet-Wakeup`), with no
new source commit and no new report.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

from reconciler.loop import WAKEUP_TRAILER, Hub, HubConfig

FLEET = """apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: rollback
spec:
  clusterEligibility: AssumeJoined
"""
CLUSTER = """apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata:
  name: {name}
  labels: {{env: {env}}}
"""
RESOURCES = """apiVersion: v1
kind: Namespace
metadata:
  name: app
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: app
data:
  version: {version}
"""
PLACEMENT = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: app
spec:
  resourceSelectors:
    - {group: "", version: v1, kind: Namespace, name: app}
  strategy:
    type: External
"""
STRATEGY = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateStrategy
metadata:
  name: two-stages
spec:
  stages:
    - name: staging
      labelSelector: {matchLabels: {env: staging}}
      afterStageTasks:
        - type: TimedWait
          waitTime: 10m
    - name: prod
      labelSelector: {matchLabels: {env: prod}}
"""
RUN = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata:
  name: {name}
spec:
  placementName: app
  stagedRolloutStrategyName: two-stages
  state: Run
{index}"""
CM = "clusters/{cluster}/app/configmap_app_settings.yaml"


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
        self.now = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _world(tmp: Path) -> tuple[Path, Path]:
    remote = tmp / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    work = tmp / "work"
    for folder in ("clusters", "resources", "placements", "rollouts"):
        (work / folder).mkdir(parents=True)
    git(work, "init", "-q", "-b", "main")
    git(work, "remote", "add", "origin", str(remote))
    (work / "fleet.yaml").write_text(FLEET)
    for name, env in (("c1", "staging"), ("c2", "prod")):
        (work / "clusters" / f"{name}.yaml").write_text(CLUSTER.format(name=name, env=env))
    (work / "placements/app.yaml").write_text(PLACEMENT)
    return remote, work


def _push(work: Path, version: str, runs: dict[str, str | None]) -> str:
    (work / "resources/app.yaml").write_text(RESOURCES.format(version=version))
    docs = [STRATEGY] + [
        RUN.format(name=n, index=f"  resourceSnapshotIndex: '{i}'\n" if i is not None else "")
        for n, i in runs.items()
    ]
    (work / "rollouts/release.yaml").write_text("---\n".join(docs))
    git(work, "add", "-A")
    git(work, "commit", "-qm", f"{version}: {', '.join(runs)}")
    git(work, "push", "-q", "origin", "main")
    return git(work, "rev-parse", "HEAD")


def _show(remote: Path, path: str) -> bytes | None:
    out = subprocess.run(
        ["git", "--git-dir", str(remote), "show", f"gitfleet/rendered:{path}"],
        capture_output=True,
    )
    return out.stdout if out.returncode == 0 else None


def _run(remote: Path, name: str) -> dict[str, object]:
    doc = yaml.safe_load(_show(remote, f"status/updateruns/{name}.yaml") or b"{}")
    return doc.get("status") or {}  # type: ignore[no-any-return]


def _done(remote: Path, name: str) -> bool:
    conds = _run(remote, name).get("conditions") or []
    return any(c["type"] == "Succeeded" and c["status"] == "True" for c in conds)  # type: ignore[attr-defined]


def _finish(hub: Hub, clock: Clock, remote: Path, run: str) -> None:
    """Pass at each due time the hub recorded until the run succeeds."""
    hub.run_once()
    for _ in range(12):
        if _done(remote, run):
            return
        assert hub.next_wakeup is not None, f"run {run} waits without a timer"
        clock.now = max(clock.now, hub.next_wakeup)
        hub.run_once()
    raise AssertionError(f"run {run} did not finish")


def _wakeup(remote: Path) -> str:
    message = subprocess.run(
        ["git", "--git-dir", str(remote), "log", "-1", "--format=%B", "gitfleet/rendered"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return next(
        line.split(": ", 1)[1] for line in message.splitlines() if line.startswith(WAKEUP_TRAILER)
    )


def _waiting_after_staging(remote: Path) -> bool:
    stage = _run(remote, "first")["stagesStatus"][0]  # type: ignore[index]
    return any(
        c["type"] == "Progressing" and c["reason"] == "StageUpdatingWaiting"
        for c in stage.get("conditions", [])
    )


def test_timed_wait_alone_wakes_the_hub_and_advances(tmp_path: Path) -> None:
    remote, work = _world(tmp_path)
    clock = Clock()
    hub = Hub(HubConfig(str(remote), tmp_path / "hub"), clock=clock, sleep=lambda s: None)
    _push(work, "v1", {"first": None})
    hub.run_once()
    for _ in range(6):
        if _waiting_after_staging(remote):
            break
        assert hub.next_wakeup is not None
        clock.now = hub.next_wakeup
        hub.run_once()
    assert _waiting_after_staging(remote)
    due = hub.next_wakeup
    assert due is not None and _wakeup(remote) == due.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert _show(remote, CM.format(cluster="c2")) is None, "prod waits for the TimedWait"
    head = git(work, "rev-parse", "HEAD")

    clock.now = due - timedelta(seconds=1)
    assert hub.run_once().outcome == "skipped", "nothing is due yet, nothing changed"
    restarted = Hub(HubConfig(str(remote), tmp_path / "hub"), clock=clock, sleep=lambda s: None)
    assert restarted.run_once().outcome == "skipped", "a restarted hub reads the trailer"

    clock.now = due
    report = restarted.run_once()
    assert report.outcome == "committed", report
    assert git(work, "rev-parse", "HEAD") == head, "no new source commit"
    task = _run(remote, "first")["stagesStatus"][0]["afterStageTaskStatus"][0]  # type: ignore[index]
    assert [c["reason"] for c in task["conditions"]] == ["AfterStageTaskWaitTimeElapsed"]
    assert _show(remote, CM.format(cluster="c2")) is not None, "prod started in the same pass"


def test_the_hub_rolls_back_from_the_recorded_commit(tmp_path: Path) -> None:
    remote, work = _world(tmp_path)
    clock = Clock()
    hub = Hub(HubConfig(str(remote), tmp_path / "hub"), clock=clock, sleep=lambda s: None)
    v1 = _push(work, "v1", {"first": None})
    _finish(hub, clock, remote, "first")
    at_v1 = {c: _show(remote, CM.format(cluster=c)) for c in ("c1", "c2")}
    assert b"version: v1" in (at_v1["c1"] or b"")
    _push(work, "v2", {"first": None, "second": None})
    _finish(hub, clock, remote, "second")
    assert b"version: v2" in (_show(remote, CM.format(cluster="c2")) or b"")

    _push(work, "v2", {"first": None, "second": None, "back": "0"})
    hub = Hub(HubConfig(str(remote), tmp_path / "hub"), clock=clock, sleep=lambda s: None)
    _finish(hub, clock, remote, "back")  # a restarted hub: v1 is read from its mirror
    assert {c: _show(remote, CM.format(cluster=c)) for c in ("c1", "c2")} == at_v1
    doc = yaml.safe_load(_show(remote, "status/updateruns/back.yaml") or b"{}")
    assert doc["metadata"]["annotations"] == {"gitfleet.io/resource-snapshot-commit": v1}
    assert list(hub.older.fleets) == [v1], "the fleet at v1 is read once and cached by commit id"

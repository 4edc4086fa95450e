"""The hub loop on a real bare remote: staged runs advance on their own timers, and a run on an
older resource snapshot index renders it from the recorded commit (read from the hub's mirror).

Clusters are AssumeJoined without agents, so nothing but the hub's clock moves the runs: the
after-stage TimedWait is passed only when the hub wakes up for it (`Gitfleet-Wakeup`), with no
new source commit and no new report.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

from reconciler.loop import WAKEUP_TRAILER, Hub
from tests.helpers.fleetfiles import (
    format_cluster,
    format_placement,
    format_run,
    format_settings,
    format_two_stages,
    write_tree,
)
from tests.helpers.gitrepo import (
    commit_all,
    find_output,
    git,
    init_bare,
    init_work,
    read_output_messages,
)
from tests.helpers.hubs import Clock, make_hub

FLEET = """apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: rollback
spec:
  clusterEligibility: AssumeJoined
"""
CLUSTERS = {"c1": "staging", "c2": "prod"}
PLACEMENT = format_placement("app", "External")
CM = "clusters/{cluster}/app/configmap_app_settings.yaml"
START = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)


def _world(tmp: Path) -> tuple[Path, Path]:
    remote = init_bare(tmp / "remote.git")
    work = init_work(tmp / "work", origin=remote)
    files = {f"clusters/{name}.yaml": format_cluster(name, env) for name, env in CLUSTERS.items()}
    write_tree(work, {"fleet.yaml": FLEET, **files, "placements/app.yaml": PLACEMENT})
    return remote, work


def _push(work: Path, version: str, runs: dict[str, str | None]) -> str:
    docs = [format_two_stages("10m")] + [format_run(n, index=i) for n, i in runs.items()]
    release = "---\n".join(docs)
    resources = format_settings("app", "version", version)
    write_tree(work, {"resources/app.yaml": resources, "rollouts/release.yaml": release})
    return commit_all(work, f"{version}: {', '.join(runs)}", push_to="origin")


def _run(remote: Path, name: str) -> dict[str, object]:
    doc = yaml.safe_load(find_output(remote, f"status/updateruns/{name}.yaml") or b"{}")
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
    message = read_output_messages(remote, 1)
    return next(
        line.split(": ", 1)[1] for line in message.splitlines() if line.startswith(WAKEUP_TRAILER)
    )


def _waiting_after_staging(remote: Path) -> bool:
    stage = _run(remote, "first")["stagesStatus"][0]  # type: ignore[index]
    return any(
        c["type"] == "Progressing" and c["reason"] == "StageUpdatingWaiting"
        for c in stage.get("conditions", [])
    )


def started_waiting(tmp_path: Path) -> tuple[Path, Path, Clock, Hub]:
    """Run `first` (pass at each due time) until it waits after its staging stage."""
    remote, work = _world(tmp_path)
    clock = Clock(START)
    hub = make_hub(remote, tmp_path / "hub", clock)
    _push(work, "v1", {"first": None})
    hub.run_once()
    for _ in range(6):
        if _waiting_after_staging(remote):
            break
        assert hub.next_wakeup is not None
        clock.now = hub.next_wakeup
        hub.run_once()
    assert _waiting_after_staging(remote)
    return remote, work, clock, hub


def test_timed_wait_alone_wakes_the_hub_and_advances(tmp_path: Path) -> None:
    remote, work, clock, hub = started_waiting(tmp_path)
    due = hub.next_wakeup
    assert due is not None and _wakeup(remote) == due.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert find_output(remote, CM.format(cluster="c2")) is None, "prod waits for the TimedWait"
    head = git(work, "rev-parse", "HEAD")

    clock.now = due - timedelta(seconds=1)
    assert hub.run_once().outcome == "skipped", "nothing is due yet, nothing changed"
    restarted = make_hub(remote, tmp_path / "hub", clock)
    assert restarted.run_once().outcome == "skipped", "a restarted hub reads the trailer"

    clock.now = due
    report = restarted.run_once()
    assert report.outcome == "committed", report
    assert git(work, "rev-parse", "HEAD") == head, "no new source commit"
    task = _run(remote, "first")["stagesStatus"][0]["afterStageTaskStatus"][0]  # type: ignore[index]
    assert [c["reason"] for c in task["conditions"]] == ["AfterStageTaskWaitTimeElapsed"]
    assert find_output(remote, CM.format(cluster="c2")) is not None, "prod started in the same pass"


def test_the_hub_rolls_back_from_the_recorded_commit(tmp_path: Path) -> None:
    remote, work = _world(tmp_path)
    clock = Clock(START)
    hub = make_hub(remote, tmp_path / "hub", clock)
    v1 = _push(work, "v1", {"first": None})
    _finish(hub, clock, remote, "first")
    at_v1 = {c: find_output(remote, CM.format(cluster=c)) for c in ("c1", "c2")}
    assert b"version: v1" in (at_v1["c1"] or b"")
    _push(work, "v2", {"first": None, "second": None})
    _finish(hub, clock, remote, "second")
    assert b"version: v2" in (find_output(remote, CM.format(cluster="c2")) or b"")

    _push(work, "v2", {"first": None, "second": None, "back": "0"})
    hub = make_hub(remote, tmp_path / "hub", clock)
    _finish(hub, clock, remote, "back")  # a restarted hub: v1 is read from its mirror
    assert {c: find_output(remote, CM.format(cluster=c)) for c in ("c1", "c2")} == at_v1
    doc = yaml.safe_load(find_output(remote, "status/updateruns/back.yaml") or b"{}")
    assert doc["metadata"]["annotations"] == {"gitfleet.io/resource-snapshot-commit": v1}
    assert list(hub.older.fleets) == [v1], "the fleet at v1 is read once and cached by commit id"

"""Passes for agent reports alone, on a real Git remote: the hub neither lists nor loads the
source tree again while the source tip and the last reconciled source stay (the same fleet
snapshot is reused), and a heartbeat that only moves the agent's observations makes no output
commit (`clusterStatusRecordInterval`); a source edit loads again, and a heartbeat the
interval past the recorded one is committed."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.hub_checks import git as plumb
from benchmarks.hub_reports import push_report
from gitfleet.load import report
from gitfleet.repo import gitcmd
from reconciler import hubinputs
from renderers.hubload import FleetLoader
from tests.helpers.gitrepo import OUTPUT, git
from tests.helpers.hubs import Clock
from tests.integration.test_hub_faults import World, rev


def _stamp(clock: Clock, seconds: int) -> str:
    return (clock.now + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _status(remote: Path, cluster: str) -> dict[str, Any]:
    doc = yaml.safe_load(git(remote, "show", f"{OUTPUT}:status/clusters/{cluster}.yaml"))
    return dict(doc["status"])


def _recorded_heartbeat(remote: Path) -> str:
    doc = yaml.safe_load(git(remote, "show", f"{OUTPUT}:status/clusters/east.yaml"))
    return str(doc["status"]["agentStatus"][0]["lastReceivedHeartbeat"])


def test_report_passes_reuse_the_source_and_heartbeats_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[str] = []
    real = FleetLoader.load

    def counting(self: FleetLoader, tree: object) -> object:
        loads.append("load")
        return real(self, tree)  # type: ignore[arg-type]

    monkeypatch.setattr(FleetLoader, "load", counting)
    world, clock = World.create(tmp_path), Clock()
    hub = world.hub("hub", clock)
    assert hub.run_once().outcome == "committed" and loads == ["load"]
    since = _stamp(clock, -600)

    push_report(world.remote, "east", _stamp(clock, -60), since)  # the first report
    first = hub.run_once()
    assert first.outcome == "committed" and _recorded_heartbeat(world.remote) == _stamp(clock, -60)
    assert len(loads) == 2  # the output now records the source: approvals count from there
    loads.clear()

    clock.now += timedelta(seconds=30)
    push_report(world.remote, "east", _stamp(clock, -60), since)  # and its next heartbeat
    assert hub.run_once().outcome == "unchanged" and loads == []  # the source was not loaded

    clock.now += timedelta(minutes=2)
    output = rev(world.remote, f"refs/heads/{OUTPUT}")
    push_report(world.remote, "east", _stamp(clock, -5), since)  # only the heartbeat moved
    beat = hub.run_once()
    assert beat.outcome == "unchanged" and rev(world.remote, f"refs/heads/{OUTPUT}") == output
    assert loads == []

    clock.now += timedelta(minutes=4)
    push_report(world.remote, "east", _stamp(clock, -5), since)  # 5 min past the recorded one
    assert hub.run_once().outcome == "committed" and loads == []
    assert _recorded_heartbeat(world.remote) == _stamp(clock, -5)

    world.edit(1)
    assert hub.run_once().outcome == "committed" and loads == ["load"]


def test_the_same_source_pair_gives_the_same_snapshot(tmp_path: Path) -> None:
    world = World.create(tmp_path)
    source = git(world.remote, "rev-parse", "refs/heads/main")
    fleets = hubinputs.SourceFleets()
    fleet = fleets.fleet(world.remote, source, None)
    assert fleets.fleet(world.remote, source, None) is fleet
    assert fleets.fleet(world.remote, source, source) is not fleet  # other approvals window
    asked: list[str] = []

    def lookup(commit: str) -> str:
        asked.append(commit)
        return "A <a@example.com>"

    author = git(world.remote, "log", "-1", "--format=%an <%ae>", source)
    assert [fleets.author(source, lookup) for _ in range(3)] == [author] * 3
    assert asked == []  # the `git log` of the first `fleet` call named the tip's author
    others = hubinputs.SourceFleets()
    others.fleet(world.remote, source, source)  # no new commit: no author read
    assert [others.author(source, lookup) for _ in range(3)] == ["A <a@example.com>"] * 3
    assert asked == [source]


def test_new_reports_are_read_through_one_git_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two clusters report at once and a third's status branch holds no report file: the
    hub mirror's long-running `cat-file --batch` (started by the first pass, which read the
    source through it) reads them all (no process per report, none at all this pass), each
    report counts, and the branch without a report is no report and no error."""
    world, clock = World.create(tmp_path), Clock()
    hub = world.hub("hub", clock)
    assert hub.run_once().outcome == "committed"
    since = _stamp(clock, -600)
    for cluster in ("east", "west"):
        push_report(world.remote, cluster, _stamp(clock, -60), since)
    empty = plumb(world.remote, "mktree", stdin=b"").strip()
    bare = plumb(world.remote, "commit-tree", empty, stdin=b"no report\n").strip()
    plumb(world.remote, "update-ref", "refs/heads/gitfleet/status/lab", bare)
    started: list[list[str]] = []
    real = gitcmd.subprocess.Popen

    def popen(argv: list[str], **kwargs: Any) -> Any:
        started.append(argv)
        return real(argv, **kwargs)

    assert hub.mirror.objects.pids  # the first pass read the source through it
    monkeypatch.setattr(gitcmd.subprocess, "Popen", popen)
    passed = hub.run_once()
    assert passed.outcome == "committed" and not passed.errors
    batches = [a for a in started if "cat-file" in a]
    assert not batches and not [a for a in started if "ls-tree" in a], started
    assert "agentStatus" not in _status(world.remote, "lab")
    for cluster in ("east", "west"):
        beat = _status(world.remote, cluster)["agentStatus"][0]["lastReceivedHeartbeat"]
        assert beat == _stamp(clock, -60)


def test_a_linked_report_is_an_error_naming_the_file(tmp_path: Path) -> None:
    """A status branch whose `report.yaml` is a symbolic link is not read through the link:
    the pass reports an error naming that branch's report file, and goes on."""
    world, clock = World.create(tmp_path), Clock()
    hub = world.hub("hub", clock)
    assert hub.run_once().outcome == "committed"
    push_report(world.remote, "east", _stamp(clock, -60), _stamp(clock, -600))
    target = plumb(world.remote, "hash-object", "-w", "--stdin", stdin=b"../../etc/passwd").strip()
    tree = plumb(world.remote, "mktree", stdin=f"120000 blob {target}\treport.yaml\n".encode())
    linked = plumb(world.remote, "commit-tree", tree.strip(), stdin=b"a link\n").strip()
    plumb(world.remote, "update-ref", "refs/heads/gitfleet/status/west", linked)
    passed = hub.run_once()
    assert passed.outcome == "committed"
    assert [(e.file, e.message) for e in passed.errors] == [
        ("gitfleet/status/west:report.yaml", report._LINKED)
    ]
    assert _status(world.remote, "east")["agentStatus"][0]["lastReceivedHeartbeat"]
    assert "agentStatus" not in _status(world.remote, "west")

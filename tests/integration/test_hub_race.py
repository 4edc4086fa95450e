"""Two hub reconcilers racing on one remote while an author pushes 100 source commits.

Two `Hub` objects (each with its own private mirror, the same fixed clock) run passes in threads
against the same `git daemon` remote on 127.0.0.1, while the main thread pushes 100
source commits that each change one resource. Afterwards: the output branch is linear and only
ever moved forward (the remote's reflog), no two consecutive output commits have the same tree,
every output commit records its source, no pass's commit was lost, and the output equals both a
single-process replay of the same source sequence (tree for tree) and, for the rendered
manifests, a fresh render of the final source. A second test reproduces deterministically (with
an `update` hook on the remote) the push that loses the race inside receive-pack.
"""

from __future__ import annotations

import random
import subprocess
import threading
from collections import Counter
from pathlib import Path

import pytest

from reconciler.loop import Hub, HubConfig, PassReport
from tests.helpers.gitrepo import git
from tests.helpers.hubs import Clock
from tests.integration.test_hub_faults import (
    OUTPUT,
    Daemon,
    World,
    check_output_history,
    daemon,  # noqa: F401  (fixture)
    fresh_render,
    fsck,
    manifests,
    recorded_source,
    rev,
    wait_for,
)

SOURCE_COMMITS = 100
HUBS = 2


def drive(hub: Hub, stop: threading.Event, reports: list[PassReport], errors: list[str]) -> None:
    """Back-to-back passes until `stop` (a real reconciler with a zero interval)."""
    while not stop.is_set():
        try:
            reports.append(hub.run_once())
        except Exception as exc:  # a crash is a test failure, reported after the join
            errors.append(f"{type(exc).__name__}: {exc}")
            return


def replay(tmp: Path, world: World, sources: list[str], clock: Clock) -> list[str]:
    """One Hub renders `sources` in order into a new remote; the output tree after each."""
    remote = tmp / "replay.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    hub = Hub(HubConfig(str(remote), tmp / "replay-cache"), clock=clock)
    trees = []
    for source in sources:
        git(world.work, "push", "-q", str(remote), f"{source}:refs/heads/main")
        report = hub.run_once()
        assert report.outcome == "committed", report
        trees.append(git(remote, "rev-parse", f"{report.output}^{{tree}}"))
    return trees


def test_two_hubs_race_for_100_source_commits(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    served: Daemon = request.getfixturevalue("daemon")
    world, url = World.create(tmp_path, served.base / "fleet.git"), served.url("fleet.git")
    clock = Clock()
    hubs = [
        Hub(HubConfig(url, tmp_path / f"hub-{i}"), clock=clock, rng=random.Random(i))
        for i in range(HUBS)
    ]
    stop = threading.Event()
    reports: list[list[PassReport]] = [[] for _ in hubs]
    errors: list[str] = []
    threads = [
        threading.Thread(target=drive, args=(hub, stop, mine, errors), daemon=True)
        for hub, mine in zip(hubs, reports, strict=True)
    ]
    for thread in threads:
        thread.start()
    try:
        sources = [world.edit(n) for n in range(1, SOURCE_COMMITS + 1)]
        # A liveness bound only (the machine may be loaded); every check below is exact.
        wait_for(lambda: recorded_source(world.remote) == sources[-1], "convergence", 240)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert not errors, errors
    assert [hub.run_once().outcome for hub in hubs] == ["skipped"] * HUBS

    outcomes = Counter(r.outcome for mine in reports for r in mine)
    assert outcomes["committed"] >= 2, outcomes
    assert outcomes <= Counter(
        committed=outcomes["committed"],
        skipped=outcomes["skipped"],
        unchanged=outcomes["unchanged"],
    ), outcomes
    rows = check_output_history(world.remote)
    committed = {r.output for mine in reports for r in mine if r.outcome == "committed"}
    assert committed == {commit for commit, *_ in rows}, "a pushed output commit was lost"
    fsck(world.remote)

    trees = replay(tmp_path, world, [source for *_, source in rows], clock)
    assert trees == [tree for _, tree, _, _ in rows]
    fresh, commit = fresh_render(tmp_path, world.work, sources[-1], clock)
    assert manifests(world.remote, rows[-1][0]) == manifests(fresh, commit)


def test_push_that_loses_inside_receive_pack_is_retried(tmp_path: Path) -> None:
    """Deterministic form of the race: an `update` hook on the remote lets another writer's
    output commit land after the pushing hub's lease was checked, just before the ref update."""
    world, clock = World.create(tmp_path), Clock()
    mine, other = world.hub("mine", clock), world.hub("other", clock)
    first = mine.run_once().output
    source = world.edit(1)
    theirs = other.run_once().output
    assert first and theirs
    git(world.remote, "update-ref", f"refs/heads/{OUTPUT}", first, theirs)
    hook = world.remote / "hooks" / "update"
    hook.write_text(f'#!/bin/sh\nrm -f "$0"\ngit update-ref "$1" {theirs} "$2"\n')
    hook.chmod(0o755)
    report = mine.run_once()
    assert rev(world.remote, OUTPUT) == theirs
    assert (report.outcome, report.source, report.attempts) == ("skipped", source, 2), report
    assert mine.unavailable_since is None

"""What the hub knows of its own writes instead of asking git, on a real remote: the trailers
of the output commit it pushed equal the ones read back from git, and the ancestry and peels
of a commit it wrote save the processes that would ask (a pass after an edit starts fewer git
processes than it did before these were known, and commits the same tree as a fresh hub);
the tips of the source, output and status branches come from one listing."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from gitfleet.repo import gitcmd
from gitfleet.repo.trailers import parse_trailers
from tests.helpers.gitrepo import OUTPUT, git
from tests.helpers.hubs import Clock
from tests.integration.test_hub_faults import World, rev


def test_the_pushed_commits_trailers_are_the_ones_git_gives_back(tmp_path: Path) -> None:
    world, clock = World.create(tmp_path), Clock()
    world.edit(1)
    hub = world.hub("hub", clock)
    assert hub.run_once().outcome == "committed"
    pushed = rev(world.remote, f"refs/heads/{OUTPUT}")
    assert hub._trailers is not None and hub._trailers[0] == pushed
    assert hub._trailers[1] == parse_trailers(git(world.remote, "log", "-1", "--format=%B", OUTPUT))


def test_a_pass_asks_git_nothing_it_wrote_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world, clock = World.create(tmp_path), Clock()
    world.edit(1)
    hub = world.hub("hub", clock)
    assert hub.run_once().outcome == "committed"
    first = rev(world.remote, f"refs/heads/{OUTPUT}")
    started: list[list[str]] = []
    real = subprocess.run

    def counting(argv: list[str], *args: Any, **kwargs: Any) -> Any:
        started.append(argv)
        return real(argv, *args, **kwargs)

    world.edit(2)
    monkeypatch.setattr(gitcmd.subprocess, "run", counting)
    assert hub.run_once().outcome == "committed"
    monkeypatch.undo()
    pushed = rev(world.remote, f"refs/heads/{OUTPUT}")
    assert pushed is not None
    asked = [" ".join(argv[argv.index("-C") + 2 :]) for argv in started if "-C" in argv]
    assert len(asked) == len(started) >= 3  # fetch, for-each-ref, push... (counting works)
    assert not [a for a in asked if a.startswith("merge-base") and pushed in a], asked
    assert not [a for a in asked if a.startswith("rev-parse") and f"{pushed}^{{commit}}" in a]
    assert not [a for a in asked if a.startswith("log") and "--max-count=1" in a and pushed in a]
    assert not [a for a in asked if a.startswith("gc")]  # below gc --auto's thresholds
    assert not [a for a in asked if a.startswith("rev-parse") and f"{first}^{{tree}}" in a]
    assert not [a for a in asked if a.startswith("rev-parse") and "refs/remotes/" in a], asked
    source = rev(world.remote, "refs/heads/main")
    assert not [a for a in asked if a.startswith("rev-parse") and source in a], asked
    assert len([a for a in asked if a.startswith("for-each-ref")]) == 1, asked  # every tip
    fresh = world.hub("fresh", clock)
    world.edit(3)
    assert hub.run_once().outcome == "committed"
    tree = rev(world.remote, f"refs/heads/{OUTPUT}^{{tree}}")
    assert fresh.run_once().outcome in ("skipped", "unchanged")
    assert rev(world.remote, f"refs/heads/{OUTPUT}^{{tree}}") == tree


def test_a_new_source_commit_is_read_without_history_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One new source commit on top of the last reconciled one: the walk through the mirror's
    long-running `cat-file` answers rev-parse, merge-base, rev-list and log; the changed
    source files are found and read through it too (no diff-tree, ls-tree or `cat-file`
    start in the pass)."""
    world, clock = World.create(tmp_path), Clock()
    world.edit(1)
    hub = world.hub("hub", clock)
    assert hub.run_once().outcome == "committed"
    started: list[str] = []
    real_run, real_popen = subprocess.run, subprocess.Popen

    def counting(argv: list[str], *args: Any, **kwargs: Any) -> Any:
        started.append(" ".join(argv[argv.index("-C") + 2 :]) if "-C" in argv else str(argv))
        return real_run(argv, *args, **kwargs)

    def spawning(argv: list[str], *args: Any, **kwargs: Any) -> Any:
        started.append(" ".join(argv[argv.index("-C") + 2 :]) if "-C" in argv else str(argv))
        return real_popen(argv, *args, **kwargs)

    source = rev(world.remote, "refs/heads/main") or ""
    assert hub.mirror.objects.info(source) is not None  # both processes run (once a hub)
    assert hub.mirror.objects.read(source) is not None
    for k in (2, 3):
        world.edit(k)
        started.clear()
        monkeypatch.setattr(gitcmd.subprocess, "run", counting)
        monkeypatch.setattr(gitcmd.subprocess, "Popen", spawning)
        assert hub.run_once().outcome == "committed"
        monkeypatch.undo()
        history = ("rev-parse", "merge-base", "rev-list", "log", "cat-file", "diff-tree")
        history += ("ls-tree",)
        assert not [a for a in started if a.startswith(history)], started
    fresh = world.hub("fresh", clock)  # the same output as a hub that asked git
    assert fresh.run_once().outcome in ("skipped", "unchanged")


def test_a_rewritten_source_is_still_refused_after_walks(tmp_path: Path) -> None:
    """The walk only ever proves ancestry: a force-pushed source that does not descend from
    the last reconciled commit is refused as before (git answers when the walk fails)."""
    world, clock = World.create(tmp_path), Clock()
    world.edit(1)
    hub = world.hub("hub", clock)
    assert hub.run_once().outcome == "committed"
    world.edit(2)
    assert hub.run_once().outcome == "committed"
    git(world.work, "reset", "-q", "--hard", "HEAD~1")
    git(world.work, "commit", "-q", "--allow-empty", "-m", "rewritten")
    git(world.work, "push", "-q", "-f", str(world.remote), "HEAD:refs/heads/main")
    assert hub.run_once().outcome == "source-rewritten"

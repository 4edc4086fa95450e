"""`benchmarks.gitserver.GitDaemon`: a push over git://127.0.0.1 lands, and the CPU the server
spent receiving it is counted (the daemon's reaped children), not the pusher's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks.gitserver import GitDaemon


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_push_is_served_and_its_cpu_counted(tmp_path: Path) -> None:
    served, work = tmp_path / "served", tmp_path / "work"
    served.mkdir()
    _git(tmp_path, "init", "-q", "--bare", str(served / "remote.git"))
    _git(tmp_path, "init", "-q", "-b", "main", str(work))
    for i in range(3000):  # enough objects that receiving them takes several clock ticks
        (work / f"f{i:04d}.txt").write_text(f"file {i}\n" * 20)
    _git(work, "add", "-A")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "files")
    try:
        daemon = GitDaemon(served)
    except RuntimeError as exc:
        pytest.skip(str(exc))
    try:
        before = daemon.cpu_seconds()
        _git(work, "push", "-q", daemon.url(served / "remote.git"), "main")
        spent = daemon.cpu_seconds() - before
    finally:
        daemon.stop()
    assert _git(served / "remote.git", "rev-parse", "main") == _git(work, "rev-parse", "HEAD")
    assert spent > 0
    assert daemon.url(served / "remote.git").startswith("git://127.0.0.1:")

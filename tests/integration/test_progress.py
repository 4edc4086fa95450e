"""Progress on a terminal: `render` and `plan` draw their stages with rich on stderr when it is
a terminal (a pseudo-terminal here), and stay silent with `--quiet` or when stderr is a pipe.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.fleet_helpers import NOW, QUICKSTART, ROOT, commit_fleet, run_cli


def on_terminal(cwd: Path, *args: str | Path) -> tuple[int, str]:
    """Run the CLI with stderr on a pseudo-terminal; (exit code, what the terminal showed)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "TERM": "xterm"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gitfleet", *map(str, args)],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=follower,
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    return proc.wait(timeout=120), shown.decode("utf-8", "replace")


def test_render_shows_its_stages_on_a_terminal(tmp_path: Path) -> None:
    code, shown = on_terminal(tmp_path, "render", QUICKSTART, "--out", "out", "--now", NOW)
    assert code == 0
    for stage in ("load", "schedule and render", "write out"):
        assert stage in shown, shown
    assert "Traceback" not in shown


@pytest.mark.parametrize("where", ["group", "command"])
def test_quiet_silences_the_terminal(tmp_path: Path, where: str) -> None:
    args = ["render", QUICKSTART, "--out", "out", "--now", NOW]
    args = ["--quiet", *args] if where == "group" else [*args, "--quiet"]
    code, shown = on_terminal(tmp_path, *args)
    assert code == 0
    assert shown == ""


def test_plan_shows_base_and_head_on_a_terminal(tmp_path: Path) -> None:
    repo = tmp_path / "fleet"
    commit_fleet(QUICKSTART, repo)
    code, shown = on_terminal(repo, "plan", "--base", "HEAD", "--head", "HEAD", "--now", NOW)
    assert code == 0
    assert "render the base (HEAD)" in shown and "render the head (HEAD)" in shown


def test_nothing_on_stderr_when_it_is_not_a_terminal(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "render", QUICKSTART, "--out", "out", "--now", NOW)
    assert result.code == 0 and result.stderr == ""

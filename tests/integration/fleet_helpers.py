"""Shared helpers for the end-to-end tests: run the `gitfleet` CLI as a real subprocess, write
small fleets into tmp dirs, read output trees back, and make real git repositories.

Used by `tests/integration/test_cli.py`, `test_bad_input.py` and `test_git_vs_workdir.py`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart"
GOLDEN = ROOT / "tests" / "golden"
NOW = "2026-11-21T10:00:00Z"
TRACEBACK = "Traceback (most recent call last)"
GIT_IDENTITY = ("-c", "user.name=gitfleet-test", "-c", "user.email=test@example.invalid")
HAS_KUBECTL = shutil.which("kubectl") is not None


@dataclass(frozen=True)
class Result:
    """One finished CLI run."""

    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_cli(cwd: Path, *args: str | Path, timeout: float = 60) -> Result:
    """Run `python -m gitfleet ARGS` in `cwd`; asserts that no Python traceback was printed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "gitfleet", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=timeout,
    )
    result = Result(
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )
    assert TRACEBACK not in result.output, result.output
    return result


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    """Write `files` (repository-relative path -> text or bytes) under `root`."""
    for rel, data in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            target.write_bytes(data)
        else:
            target.write_text(data, encoding="utf-8")


def read_tree(root: Path) -> dict[str, bytes]:
    """Every regular file under `root` (the marker included), by relative POSIX path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def changed_paths(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    """Paths added, removed or with different bytes."""
    return {p for p in set(before) | set(after) if before.get(p) != after.get(p)}


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` (identity given with -c), return stdout."""
    done = subprocess.run(
        ["git", *GIT_IDENTITY, "-C", str(repo), *args],
        check=True,
        capture_output=True,
    )
    return done.stdout.decode().strip()


def commit_fleet(source: Path, repo: Path) -> str:
    """Copy the fleet folder `source` into a fresh git repository `repo`, commit, return HEAD."""
    shutil.copytree(source, repo, symlinks=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, capture_output=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fleet")
    return git(repo, "rev-parse", "HEAD")

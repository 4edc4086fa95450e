"""Shared helpers for the end-to-end tests: run the `gitfleet` CLI as a real subprocess, write
small fleets into tmp dirs, read output trees back, and make real git repositories.

Used by most of `tests/integration` (`test_cli.py`, `test_bad_input.py`, `test_first_hour.py`...).
The real-Git fixtures of the hub and agent tests are in `tests/helpers` (see its docstring).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

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


def run_cli(
    cwd: Path, *args: str | Path, timeout: float = 60, traceback_ok: bool = False
) -> Result:
    """Run `python -m gitfleet ARGS` in `cwd`; asserts that no Python traceback was printed
    (unless `traceback_ok`, for tests that check something else about a known-buggy run)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
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
    if not traceback_ok:
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


def without_commits(files: dict[str, bytes]) -> dict[str, object]:
    """An output tree with state/ files parsed and their recorded source commits removed (a pass
    over Git objects records the commit, a pass over a working tree has none)."""
    out: dict[str, object] = {}
    for path, data in files.items():
        if not path.startswith("state/"):
            out[path] = data
            continue
        doc = yaml.safe_load(data)
        for key in ("resourceSnapshots", "policySnapshots"):
            for snap in doc.get(key) or []:
                snap.pop("commit", None)
        out[path] = doc
    return out


def recorded_commits(files: dict[str, bytes]) -> set[str]:
    """Source commits recorded in the resource snapshots of state/ files."""
    found: set[str] = set()
    for path, data in files.items():
        if path.startswith("state/"):
            doc = yaml.safe_load(data)
            found |= {s["commit"] for s in doc.get("resourceSnapshots") or [] if "commit" in s}
    return found


def snapshot_indexes(out: Path, placement: str) -> dict[str, object]:
    """Where a placement's latest resource snapshot index shows: state, status and cluster index."""
    state = yaml.safe_load((out / f"state/placements/{placement}.yaml").read_text())
    status = yaml.safe_load((out / f"status/placements/{placement}.yaml").read_text())
    shown: dict[str, object] = {
        "state": state["resourceSnapshots"][-1]["index"],
        "status": status["status"]["observedResourceIndex"],
    }
    for index_file in sorted(out.glob("clusters/*/index.yaml")):
        doc = yaml.safe_load(index_file.read_text())
        for entry in doc["placements"]:
            if entry["key"] == placement:
                shown[index_file.parent.name] = entry["resourceSnapshotIndex"]
    return shown

"""Builders shared by the renderer tests: real fleet repositories in temporary directories.

`make_tree` writes files into a directory and returns a `WorkdirTree`; `make_git_tree` commits
the same files into a real Git repository and opens the commit as a `GitTree`.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from gitfleet.api.errors import FleetError
from gitfleet.repo import GitTree, WorkdirTree

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


def write_files(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write `files` (repository path -> content) under `root`."""
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return root


def make_tree(tmp_path: Path, files: Mapping[str, str | bytes]) -> WorkdirTree:
    """A working-directory tree holding `files`."""
    return WorkdirTree(write_files(tmp_path / "fleet", files))


def make_git_tree(tmp_path: Path, files: Mapping[str, str | bytes]) -> GitTree:
    """A Git commit holding `files`, opened as a tree (the caller closes it)."""
    repo = write_files(tmp_path / "gitfleet-repo", files)
    env_args = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), *env_args, "commit", "-qm", "fleet"], check=True)
    return GitTree.open(repo, "main")


def messages(errors: list[FleetError] | tuple[FleetError, ...]) -> list[str]:
    """The errors as the CLI prints them."""
    return [str(e) for e in errors]


def one_error(errors: list[FleetError] | tuple[FleetError, ...], file: str) -> FleetError:
    """The single error reported for `file` (fails the test otherwise)."""
    found = [e for e in errors if e.file == file]
    assert len(found) == 1, messages(errors)
    return found[0]

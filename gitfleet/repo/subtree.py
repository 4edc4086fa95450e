"""A fleet kept in a subfolder of a Git repository, read at one commit: `open_fleet_at` finds
the repository from the fleet's directory and reads the subfolder through `SubTree` (paths
relative to it). Split out of `gitfleet.repo.gitread`; called by the CLI (`--ref`).
"""

from __future__ import annotations

from pathlib import Path

from gitfleet.api.errors import FleetError
from gitfleet.repo.gitcmd import run_git
from gitfleet.repo.gitread import GitTree


class SubTree:
    """The files of `tree` under `prefix/`, addressed relative to it (a fleet kept in a
    subfolder of a repository, read at a commit)."""

    def __init__(self, tree: GitTree, prefix: str) -> None:
        self._tree = tree
        self._prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self._files = [p[len(self._prefix) :] for p in tree.files() if p.startswith(self._prefix)]

    @property
    def commit(self) -> str | None:
        return self._tree.commit

    @property
    def errors(self) -> list[FleetError]:
        return [
            FleetError(e.file[len(self._prefix) :], e.line, e.field, e.message, e.doc)
            for e in self._tree.errors
            if e.file.startswith(self._prefix)
        ]

    def files(self) -> list[str]:
        return list(self._files)

    def size(self, path: str) -> int:
        return self._tree.size(self._prefix + path)

    def oid(self, path: str) -> str:
        return self._tree.oid(self._prefix + path)

    def read(self, path: str) -> bytes:
        return self._tree.read(self._prefix + path)

    def close(self) -> None:
        self._tree.close()


def open_fleet_at(fleet_dir: Path, ref: str) -> GitTree | SubTree:
    """The fleet in directory `fleet_dir` (anywhere inside a Git working tree) as committed at
    `ref`: the repository is found from the directory, and a subfolder is read as the fleet."""
    top = run_git(fleet_dir, ["rev-parse", "--show-toplevel"]).stdout.decode().strip()
    prefix = fleet_dir.resolve().relative_to(Path(top).resolve()).as_posix()
    tree = GitTree.open(Path(top), ref)
    return tree if prefix in ("", ".") else SubTree(tree, prefix)

"""Partial reads of an output tree: `GitOutputView` (one commit of the output branch) and
`DirOutputView` (a `gitfleet render --out` directory) read only the files a reader names, so
showing one document of a large output costs that document's files, not the whole tree.

Both offer `read_many(paths)` (the ones that exist), `list_files(folder)` (recursive) and
`list_dirs(folder)` (the folders directly inside). What they see is what a full read sees: the
Git view lists like `GitTree` (hidden paths, links and submodules left out), the directory view
like `rglob("*.yaml")` (YAML files only, links to folders not followed). Called by
`gitfleet.service` for `gitfleet status`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from gitfleet.repo.gitread import GitTree, list_dirs, list_paths
from gitfleet.repo.tree import relpath_problem


class OutputView(Protocol):
    """Named files of one output tree."""

    def read_many(self, paths: Sequence[str]) -> dict[str, bytes]: ...

    def list_files(self, folder: str) -> list[str]: ...

    def list_dirs(self, folder: str) -> list[str]: ...


class GitOutputView:
    """The output tree at `commit` in the repository `repo_dir` (a mirror)."""

    def __init__(self, repo_dir: Path, commit: str) -> None:
        self._repo_dir = repo_dir
        self._commit = commit

    def read_many(self, paths: Sequence[str]) -> dict[str, bytes]:
        listable = [p for p in paths if relpath_problem(p) is None]  # the only ones listed
        listing = list_paths(self._repo_dir, self._commit, listable)
        if not listing:
            return {}
        with GitTree.listed(self._repo_dir, self._commit, listing) as tree:
            return {path: tree.read(path) for path in sorted(listing)}

    def list_files(self, folder: str) -> list[str]:
        if relpath_problem(folder.rstrip("/")) is not None:
            return []
        return sorted(list_paths(self._repo_dir, self._commit, [folder]))

    def list_dirs(self, folder: str) -> list[str]:
        if relpath_problem(folder.rstrip("/")) is not None:
            return []
        return list_dirs(self._repo_dir, self._commit, folder)


class DirOutputView:
    """The YAML files of a render directory, by path relative to it."""

    def __init__(self, root: Path) -> None:
        self._root = root

    def _folder(self, parts: Sequence[str]) -> Path | None:
        """The folder at `parts` when every step is a real folder (no link, no '..')."""
        here = self._root
        for part in parts:
            if part in ("", ".", ".."):
                return None
            here = here / part
            if here.is_symlink() or not here.is_dir():
                return None
        return here

    def _file(self, path: str) -> Path | None:
        if "\0" in path:
            return None
        parts = path.split("/")
        folder = self._folder(parts[:-1])
        if folder is None or not path.endswith(".yaml") or parts[-1] in ("", ".", ".."):
            return None
        file = folder / parts[-1]
        return file if file.is_file() else None

    def read_many(self, paths: Sequence[str]) -> dict[str, bytes]:
        found = {path: self._file(path) for path in paths}
        return {path: file.read_bytes() for path, file in sorted(found.items()) if file}

    def list_files(self, folder: str) -> list[str]:
        here = self._folder(folder.strip("/").split("/"))
        if here is None:
            return []
        return sorted(
            p.relative_to(self._root).as_posix() for p in here.rglob("*.yaml") if p.is_file()
        )

    def list_dirs(self, folder: str) -> list[str]:
        here = self._folder(folder.strip("/").split("/"))
        if here is None:
            return []
        return sorted(p.name for p in here.iterdir() if p.is_dir() and not p.is_symlink())

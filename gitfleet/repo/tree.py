"""Read-only views of a fleet repository: a working directory or a Git commit.

`Tree` is the one abstraction the loader and renderers read through; `WorkdirTree`
(`gitfleet.repo.workdir`) walks a directory, `GitTree` (`gitfleet.repo.gitread`) reads blobs of a
commit with git plumbing (no checkout). The path helpers below (`relpath_problem`, `is_hidden`,
`is_contained`) are shared by the trees, the output writer and the renderers.
Called by `renderers` and the CLI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from gitfleet.api.errors import FleetError


class Tree(Protocol):
    """A snapshot of repository files, addressed by repository-relative POSIX paths."""

    @property
    def commit(self) -> str | None:
        """The commit id for a Git tree; None for a working directory."""

    def files(self) -> list[str]:
        """Sorted paths of regular files. Hidden path components (`.git`, `.github`, ...) are
        skipped; symlinks and other non-regular entries are not listed (see `errors`)."""

    def read(self, path: str) -> bytes:
        """The bytes of a listed file. Raises KeyError for a path that `files()` did not list."""

    def size(self, path: str) -> int:
        """The size in bytes of a listed file, without reading it."""

    @property
    def errors(self) -> list[FleetError]:
        """Entries refused while listing (symlinks, submodules, unreadable files)."""


@runtime_checkable
class BlobIds(Protocol):
    """A tree that names each listed file's git blob id without reading it (a Git commit):
    readers cache what they make of a file by it."""

    def oid(self, path: str) -> str:
        """The blob id of a listed file (KeyError for an unlisted path)."""


def relpath_problem(path: str) -> str | None:
    """Why `path` is not an acceptable repository-relative POSIX path, or None when it is.

    Accepted: non-empty, relative, '/'-separated components that are neither empty, '.', '..',
    nor hidden (leading '.'); no NUL bytes or backslashes.
    """
    if not path:
        return "path is empty"
    if "\0" in path or "\\" in path:
        return "path contains a NUL byte or a backslash"
    if path.startswith("/"):
        return "path is absolute"
    for part in path.split("/"):
        if part in ("", ".", ".."):
            return "path has an empty, '.' or '..' component"
        if part.startswith("."):
            return "path has a hidden component"
    return None


def is_hidden(path: str) -> bool:
    """True when any '/'-separated component of `path` starts with '.'."""
    return any(part.startswith(".") for part in path.split("/"))


def is_contained(root: Path, path: Path) -> bool:
    """True when `path`, fully resolved, lies inside the resolved `root` (or is `root`).

    Compares resolved path components, never string prefixes, so `/srv/fleet-evil` is not
    inside `/srv/fleet`.
    """
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False

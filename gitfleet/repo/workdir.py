"""`WorkdirTree`: a fleet repository read from a directory on disk (`gitfleet render`, watch mode).

The directory is walked once with `os.scandir`, never following symbolic links: links (also
dangling ones and loops) and other non-regular entries are refused as `FleetError`s, hidden
components (`.git`, `.github`, ...) are skipped. The walk and every read go through directory
file descriptors: each directory on a path is opened relative to its parent's with `O_NOFOLLOW`
(as `gitfleet.repo.dirfiles` writes output), so nothing reached lies outside the root and a link
planted after the walk, in place of a file or of a directory on its path, is refused
(`OSError`) instead of followed, without resolving the path (about 17 `lstat`s a file, twice:
~0.3 s of a fleet-1k load). Called by the CLI and by `renderers.load_fleet` through the
`Tree` protocol.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from gitfleet.api.errors import FleetError
from gitfleet.repo.outdir import MARKER

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)

SYMLINK_MESSAGE = (
    "symbolic links are not allowed in a fleet repository; commit the file itself instead"
)


class WorkdirTree:
    """Regular files of a directory, by repository-relative POSIX path."""

    def __init__(self, root: Path) -> None:
        self._root = Path(root).resolve(strict=True)
        if not self._root.is_dir():
            raise NotADirectoryError(f"{root} is not a directory")
        self._sizes: dict[str, int] = {}
        self._errors: list[FleetError] = []
        self._walk()

    @property
    def root(self) -> Path:
        return self._root

    @property
    def commit(self) -> str | None:
        return None

    @property
    def errors(self) -> list[FleetError]:
        return sorted(self._errors, key=lambda error: error.file)

    def files(self) -> list[str]:
        return sorted(self._sizes)

    def size(self, path: str) -> int:
        return self._sizes[path]

    def read(self, path: str) -> bytes:
        """The file's bytes. KeyError for a path the walk did not list; OSError when a
        component of it is no longer a directory, or the file no longer a file (a symbolic
        link put there after the walk is never followed)."""
        if path not in self._sizes:
            raise KeyError(path)
        *directories, name = path.split("/")
        parent = self._open_directory(directories)
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=parent)
        finally:
            os.close(parent)
        with os.fdopen(fd, "rb") as handle:
            return handle.read()

    def _open_directory(self, parts: list[str]) -> int:
        """A descriptor of the directory `parts` below the root, each component opened
        relative to the one before with O_NOFOLLOW. The caller closes it."""
        fd = os.open(self._root, _DIR_FLAGS)
        try:
            for part in parts:
                inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _walk(self) -> None:
        pending = [""]
        while pending:
            prefix = pending.pop()
            try:
                fd = self._open_directory(prefix.split("/") if prefix else [])
            except OSError as exc:
                self._refuse(prefix, f"cannot read directory: {exc.strerror}")
                continue
            try:
                self._list(fd, prefix, pending)
            finally:
                os.close(fd)

    def _list(self, fd: int, prefix: str, pending: list[str]) -> None:
        """Visit the entries of the directory `prefix` (open as `fd`) in name order."""
        try:
            with os.scandir(fd) as entries:
                listed = sorted(entries, key=lambda entry: entry.name)
        except OSError as exc:
            self._refuse(prefix, f"cannot read directory: {exc.strerror}")
            return
        for entry in listed:
            rel = f"{prefix}/{entry.name}" if prefix else entry.name
            self._visit(entry, rel, pending, fd)

    def _visit(self, entry: os.DirEntry[str], rel: str, pending: list[str], parent: int) -> None:
        if entry.name.startswith("."):
            return
        try:
            found = entry.stat(follow_symlinks=False)
        except OSError as exc:
            self._refuse(rel, f"cannot stat file: {exc.strerror}")
            return
        mode = found.st_mode
        if stat.S_ISLNK(mode):
            self._refuse(rel, SYMLINK_MESSAGE)
        elif stat.S_ISDIR(mode):
            if not _has_marker(parent, entry.name):
                pending.append(rel)  # a `gitfleet render --out` folder is output, never input
        elif not stat.S_ISREG(mode):
            self._refuse(rel, "not a regular file (device, socket or pipe)")
        else:
            self._sizes[rel] = found.st_size

    def _refuse(self, rel: str, message: str) -> None:
        self._errors.append(FleetError(rel, None, "", message))


def _has_marker(parent: int, name: str) -> bool:
    """Whether the directory `name` (in the directory open as `parent`) holds the marker file
    of a `gitfleet render --out` folder (as any entry: a link counts, and is not followed)."""
    try:
        os.stat(f"{name}/{MARKER}", dir_fd=parent, follow_symlinks=False)
    except OSError:
        return False
    return True

"""`WorkdirTree`: a fleet repository read from a directory on disk (`gitfleet render`, watch mode).

The directory is walked once with `os.scandir`, never following symbolic links: links (also
dangling ones and loops) and other non-regular entries are refused as `FleetError`s, hidden
components (`.git`, `.github`, ...) are skipped. Reads re-check containment with resolved paths
and open files with O_NOFOLLOW, so a link planted after the walk is not followed either.
Called by the CLI and by `renderers.load_fleet` through the `Tree` protocol.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from gitfleet.api.errors import FleetError
from gitfleet.repo.outdir import MARKER
from gitfleet.repo.tree import is_contained

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
        if path not in self._sizes:
            raise KeyError(path)
        full = self._root / path
        if not is_contained(self._root, full):
            raise KeyError(path)
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            return handle.read()

    def _walk(self) -> None:
        pending = [""]
        while pending:
            prefix = pending.pop()
            directory = self._root / prefix if prefix else self._root
            try:
                with os.scandir(directory) as entries:
                    listed = sorted(entries, key=lambda entry: entry.name)
            except OSError as exc:
                self._refuse(prefix, f"cannot read directory: {exc.strerror}")
                continue
            for entry in listed:
                self._visit(entry, f"{prefix}/{entry.name}" if prefix else entry.name, pending)

    def _visit(self, entry: os.DirEntry[str], rel: str, pending: list[str]) -> None:
        if entry.name.startswith("."):
            return
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError as exc:
            self._refuse(rel, f"cannot stat file: {exc.strerror}")
            return
        if stat.S_ISLNK(mode):
            self._refuse(rel, SYMLINK_MESSAGE)
        elif stat.S_ISDIR(mode):
            if not os.path.lexists(os.path.join(entry.path, MARKER)):
                pending.append(rel)  # a `gitfleet render --out` folder is output, never input
        elif not stat.S_ISREG(mode):
            self._refuse(rel, "not a regular file (device, socket or pipe)")
        elif not is_contained(self._root, self._root / rel):
            self._refuse(rel, "path resolves outside the fleet repository")
        else:
            self._sizes[rel] = entry.stat(follow_symlinks=False).st_size

    def _refuse(self, rel: str, message: str) -> None:
        self._errors.append(FleetError(rel, None, "", message))

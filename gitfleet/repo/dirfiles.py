"""Write and read many files under one directory through directory file descriptors, never by
path.

`write_files(root, files, refuse)` writes each changed file of `files` (relative path -> bytes,
paths already validated and sorted) under `root`: every directory on the way is opened relative
to its parent's descriptor with `O_NOFOLLOW` (made when missing), so no symbolic link is ever
followed and nothing can land outside `root`, without resolving a path per file. A file is
replaced atomically (a temporary file in the same directory, then `rename`), only when its bytes
changed, so unchanged files keep their mtime. Sorted paths visit each directory in one run, so
a file costs a `stat` (and a read when the size matches) plus the write; the open descriptors
are the current path's (a handful). `refuse(message)` builds the exception raised for a
directory component that is a symbolic link or not a directory, and for a target that is not a
regular file. `read_files(base, prefix)` reads every regular, non-hidden file under `base`
the same way (symbolic links neither followed nor returned; `os.scandir` types, no `stat` a
file). Called by `gitfleet.repo.outdir`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
TEMP_PREFIX = ".gitfleet-tmp-"

Refuse = Callable[[str], Exception]


class _Dirs:
    """The open descriptors of the directories from `root` down to the current one."""

    def __init__(self, root: Path, refuse: Refuse) -> None:
        self.refuse = refuse
        self.names: list[str] = []
        self.fds = [os.open(root, _DIR_FLAGS)]
        self.token = f"{os.getpid()}-{secrets.token_hex(4)}"
        self.count = 0

    def enter(self, rel: str, parts: list[str]) -> int:
        """The descriptor of the directory `parts` (a prefix of `rel`'s components)."""
        keep = 0
        while keep < min(len(parts), len(self.names)) and parts[keep] == self.names[keep]:
            keep += 1
        while len(self.names) > keep:
            self.names.pop()
            os.close(self.fds.pop())
        for part in parts[keep:]:
            self.fds.append(self._open(self.fds[-1], part, rel))
            self.names.append(part)
        return self.fds[-1]

    def _open(self, parent: int, name: str, rel: str) -> int:
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            os.mkdir(name, 0o777, dir_fd=parent)
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as exc:
            mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode):
                raise self.refuse(
                    f"refusing to write {rel!r}: {name!r} is a symbolic link"
                ) from None
            if exc.errno in (errno.ENOTDIR, errno.ELOOP) or not stat.S_ISDIR(mode):
                raise self.refuse(
                    f"refusing to write {rel!r}: {name!r} is not a directory"
                ) from None
            raise

    def close(self) -> None:
        while self.fds:
            os.close(self.fds.pop())

    def temp_name(self) -> str:
        self.count += 1
        return f"{TEMP_PREFIX}{self.token}-{self.count}"


def write_files(
    root: Path, files: Mapping[str, bytes], paths: Iterable[str], refuse: Refuse
) -> tuple[list[str], list[str]]:
    """(written, unchanged) paths, in the order of `paths` (sorted keys of `files`)."""
    dirs = _Dirs(root, refuse)
    written: list[str] = []
    unchanged: list[str] = []
    try:
        for rel in paths:
            *parents, name = rel.split("/")
            fd = dirs.enter(rel, parents)
            if _write_if_changed(dirs, fd, name, rel, files[rel]):
                written.append(rel)
            else:
                unchanged.append(rel)
    finally:
        dirs.close()
    return written, unchanged


def _write_if_changed(dirs: _Dirs, fd: int, name: str, rel: str, data: bytes) -> bool:
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    if info is not None:
        if not stat.S_ISREG(info.st_mode):
            raise dirs.refuse(f"refusing to overwrite {rel!r}: not a regular file")
        if info.st_size == len(data) and _read(fd, name) == data:
            return False
    _replace(dirs, fd, name, data)
    return True


def _read(fd: int, name: str) -> bytes:
    handle = os.open(name, _READ_FLAGS, dir_fd=fd)
    with os.fdopen(handle, "rb") as stream:
        return stream.read()


def _replace(dirs: _Dirs, fd: int, name: str, data: bytes) -> None:
    tmp = dirs.temp_name()
    handle = os.open(tmp, _TEMP_FLAGS, 0o644, dir_fd=fd)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            os.fchmod(stream.fileno(), 0o644)
        os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=fd)
        raise


def read_files(base: Path, prefix: str) -> dict[str, bytes]:
    """Regular files under `base` whose names and directories are not hidden, keyed by
    `prefix` + their path below `base`."""
    found: dict[str, bytes] = {}
    fd = os.open(base, _DIR_FLAGS)
    try:
        _read_dir(fd, prefix, found)
    finally:
        os.close(fd)
    return found


def _read_dir(fd: int, prefix: str, found: dict[str, bytes]) -> None:
    with os.scandir(fd) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            sub = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
            try:
                _read_dir(sub, f"{prefix}{entry.name}/", found)
            finally:
                os.close(sub)
        elif entry.is_file(follow_symlinks=False):
            found[prefix + entry.name] = _read(fd, entry.name)

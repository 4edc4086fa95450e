"""Write a rendered output tree into a directory, and read a previous one back.

`write_output(out_dir, files)` makes `out_dir` hold exactly `files`: it validates every path
(relative, no '..', no empty or hidden components, contained by resolved path), writes only the
files whose bytes changed (atomically, so unchanged files keep their mtime), removes the files it
wrote before that are no longer produced, and prunes directories left empty. It only manages a
directory that carries its marker file `.gitfleet-output` (which also lists the files it wrote);
a non-empty directory without the marker is refused. `read_output(out_dir, prefix)` reads a
previous output (e.g. `state/`) back. Called by the CLI (`gitfleet render --out`) and the
reconciler loop.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gitfleet.repo.tree import is_contained, relpath_problem

MARKER = ".gitfleet-output"
_MARKER_HEADER = "# Files written by gitfleet into this directory. Do not edit.\n"


class OutputError(Exception):
    """The output tree cannot be written safely; nothing unsafe was done."""


@dataclass(frozen=True)
class WriteResult:
    """Repository-relative paths, sorted, by what `write_output` did with them."""

    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]


def write_output(out_dir: Path, files: Mapping[str, bytes]) -> WriteResult:
    """Make `out_dir` hold exactly `files` (path -> bytes). Raises OutputError when unsafe."""
    _check_paths(files)
    root = _prepare_root(Path(out_dir))
    previous = _read_marker(root)
    _write_marker(root, previous | set(files))
    written, unchanged = [], []
    for rel in sorted(files):
        if _write_if_changed(root, rel, files[rel]):
            written.append(rel)
        else:
            unchanged.append(rel)
    removed = [rel for rel in sorted(previous - set(files)) if _remove_file(root, rel)]
    _prune_dirs(root, removed)
    _write_marker(root, set(files))
    return WriteResult(tuple(written), tuple(unchanged), tuple(removed))


def read_output(out_dir: Path, prefix: str = "") -> dict[str, bytes]:
    """Regular, non-hidden files under `out_dir/prefix`, keyed by path relative to `out_dir`.

    Symbolic links are neither followed nor returned. A missing directory reads as empty.
    """
    root = Path(out_dir)
    if prefix and relpath_problem(prefix.rstrip("/")) is not None:
        raise OutputError(f"invalid output prefix {prefix!r}")
    base = root / prefix.rstrip("/") if prefix else root
    if not base.is_dir() or base.is_symlink() or not is_contained(root, base):
        return {}
    found: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            full = Path(dirpath) / name
            if name.startswith(".") or not stat.S_ISREG(full.lstat().st_mode):
                continue
            found[full.relative_to(root).as_posix()] = full.read_bytes()
    return dict(sorted(found.items()))


def _check_paths(files: Mapping[str, bytes]) -> None:
    problems = [f"{rel!r}: {p}" for rel in sorted(files) if (p := relpath_problem(rel))]
    names = set(files)
    for rel in sorted(files):
        parts = rel.split("/")
        for i in range(1, len(parts)):
            if "/".join(parts[:i]) in names:
                problems.append(f"{rel!r}: its parent {'/'.join(parts[:i])!r} is also a file")
    if problems:
        raise OutputError("refusing to write output paths: " + "; ".join(problems))


def _prepare_root(out_dir: Path) -> Path:
    if out_dir.is_symlink():
        raise OutputError(f"output directory {out_dir} is a symbolic link")
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"output path {out_dir} exists and is not a directory")
    if out_dir.is_dir() and not _is_regular(out_dir / MARKER) and any(out_dir.iterdir()):
        raise OutputError(
            f"refusing to write into {out_dir}: the directory is not empty and has no "
            f"{MARKER} marker (it was not created by gitfleet)"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    return out_dir.resolve()


def _read_marker(root: Path) -> set[str]:
    marker = root / MARKER
    if not _is_regular(marker):
        return set()
    lines = marker.read_text(encoding="utf-8", errors="replace").splitlines()
    return {ln for ln in lines if ln and not ln.startswith("#") and relpath_problem(ln) is None}


def _write_marker(root: Path, paths: set[str]) -> None:
    body = _MARKER_HEADER + "".join(f"{rel}\n" for rel in sorted(paths))
    _atomic_write(root / MARKER, body.encode("utf-8"))


def _write_if_changed(root: Path, rel: str, data: bytes) -> bool:
    target = root / rel
    _make_parents(root, rel)
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise OutputError(f"refusing to overwrite {rel!r}: not a regular file")
    if not is_contained(root, target):
        raise OutputError(f"refusing to write {rel!r}: it resolves outside {root}")
    if target.is_file() and target.read_bytes() == data:
        return False
    _atomic_write(target, data)
    return True


def _make_parents(root: Path, rel: str) -> None:
    current = root
    for part in rel.split("/")[:-1]:
        current = current / part
        if current.is_symlink():
            raise OutputError(f"refusing to write {rel!r}: {part!r} is a symbolic link")
        if current.exists() and not current.is_dir():
            raise OutputError(f"refusing to write {rel!r}: {part!r} is not a directory")
        current.mkdir(exist_ok=True)


def _atomic_write(target: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".gitfleet-tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _remove_file(root: Path, rel: str) -> bool:
    target = root / rel
    try:
        mode = target.lstat().st_mode
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(mode) or not is_contained(root, target.parent):
        return False
    target.unlink()
    return True


def _prune_dirs(root: Path, removed: list[str]) -> None:
    candidates = {
        root.joinpath(*rel.split("/")[:i]) for rel in removed for i in range(1, rel.count("/") + 1)
    }
    for directory in sorted(candidates, key=lambda d: len(d.parts), reverse=True):
        if directory.is_dir() and not directory.is_symlink() and not any(directory.iterdir()):
            directory.rmdir()


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False

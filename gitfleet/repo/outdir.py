"""Write a rendered output tree into a directory, and read a previous one back.

`write_output(out_dir, files)` makes `out_dir` hold exactly `files`: it validates every path
(relative, no '..', no empty or hidden components), writes only the files whose bytes changed
(atomically, so unchanged files keep their mtime; through directory descriptors that never follow
a symbolic link, `gitfleet.repo.dirfiles`, so nothing lands outside), removes the files it
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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gitfleet.repo.dirfiles import read_files, write_files
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
    written, unchanged = write_files(root, files, sorted(files), OutputError)
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
    rel = prefix.rstrip("/")
    found = read_files(base, f"{rel}/" if rel else "")
    return dict(sorted(found.items()))


def _check_paths(files: Mapping[str, bytes]) -> None:
    problems = [f"{rel!r}: {p}" for rel in sorted(files) if (p := relpath_problem(rel))]
    clashes = _directories(files) & set(files)
    for rel in sorted(files) if clashes else ():
        parts = rel.split("/")
        for i in range(1, len(parts)):
            if "/".join(parts[:i]) in clashes:
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


def _directories(files: Iterable[str]) -> set[str]:
    """Every parent directory of the paths (each path's parents walked up only until one is
    known, so this costs about one set lookup a path)."""
    found: set[str] = set()
    for rel in files:
        cut = rel.rfind("/")
        while cut > 0 and rel[:cut] not in found:
            found.add(rel[:cut])
            cut = rel.rfind("/", 0, cut)
    return found


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

"""`GitTree`: a fleet repository read at one commit with git plumbing, without a checkout.

`GitTree.open(repo_dir, ref)` resolves a revision as people type it (`main`, `HEAD~1`, a short
id) to a commit with `resolve_revision` (`rev-parse --verify --end-of-options <rev>^{commit}`),
lists the tree once (`ls-tree -r -z -l --full-tree`; without `-l` when sizes are not needed: a
large output tree) and reads blobs through one persistent `git cat-file --batch` process,
started on the first read and stopped by `close()` (or the context manager); or through a shared
`ObjectReader` handed in (the hub mirror's), which `close()` leaves running. Symbolic links
(mode 120000) and submodules (160000, never initialised) are refused as `FleetError`s; hidden
components are skipped. `GitTree.open_since(repo_dir, ref, base)` lists only the paths changed
since an earlier tree (the hub's source tip, pass to pass). `list_paths` and `list_dirs` list
only part of a commit's tree, filtered the same way (a reader that needs a few files of a large
tree); a fleet in a subfolder is read through `gitfleet.repo.subtree`. Called by the CLI and
the reconciler loop.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import repeat
from pathlib import Path
from types import TracebackType
from typing import Self

from gitfleet.api.errors import FleetError
from gitfleet.repo import treediff
from gitfleet.repo.gitcmd import (
    GitError,
    resolve_revision,
    run_git,
)
from gitfleet.repo.objects import ObjectReader
from gitfleet.repo.tree import is_hidden, relpath_problem
from gitfleet.repo.workdir import SYMLINK_MESSAGE

SUBMODULE_MESSAGE = "submodules are not supported in a fleet repository (never initialised)"


_Blob = tuple[str, int]
"""(blob id, size in bytes; `UNKNOWN_SIZE` when the tree was listed without sizes)."""
UNKNOWN_SIZE = -1


class GitTree:
    """Regular files of one commit, by repository-relative POSIX path."""

    def __init__(
        self,
        repo_dir: Path,
        commit: str,
        blobs: Mapping[str, tuple[str, int]],
        errors: list[FleetError],
        objects: ObjectReader | None = None,
    ) -> None:
        self._repo_dir = repo_dir
        self._commit = commit
        self._blobs = blobs
        self._errors = errors
        self._objects = objects or ObjectReader(repo_dir)
        self._shared = objects is not None
        """A reader handed in (the hub mirror's) is shared: `close` leaves it running."""
        self._sorted: list[str] | None = None

    @classmethod
    def open(
        cls, repo_dir: Path, ref: str, *, sizes: bool = True, objects: ObjectReader | None = None
    ) -> GitTree:
        """Resolve `ref` in `repo_dir` and list its tree. Raises GitError for a bad ref.
        `sizes=False` lists without blob sizes (`ls-tree` without `-l` does not look up every
        blob: ~7x less git CPU on a large output tree); `size()` then asks git per path.
        Blobs are read through `objects` when given (a shared reader, left running)."""
        commit = resolve_revision(repo_dir, ref)
        return cls._listed_whole(repo_dir, commit, sizes=sizes, objects=objects)

    @classmethod
    def open_since(
        cls, repo_dir: Path, ref: str, base: GitTree | None, objects: ObjectReader | None = None
    ) -> GitTree:
        """`open(repo_dir, ref)`, listing only what changed since `base`, an earlier tree of
        the same repository: `diff-tree` names the changed paths and `ls-tree` lists just those,
        so a long-running reader pays for what changed rather than for the whole tree. Lists
        the whole tree when there is no base, its commit is gone, or many paths changed.
        Blobs are read through `objects` when given (shared: left running)."""
        commit = resolve_revision(repo_dir, ref)
        if base is None or base.commit is None:
            return cls._listed_whole(repo_dir, commit, objects=objects)
        if commit == base.commit:
            return cls(repo_dir, commit, base._blobs, base._errors, objects)
        walked = _walked(objects, base.commit, commit)
        if walked is not None:
            changed, records = walked
        else:
            changed, records = _asked(repo_dir, base.commit, commit)
        if changed is None or len(changed) > _PATCH_LIMIT:
            return cls._listed_whole(repo_dir, commit, objects=objects)
        blobs = dict(base._blobs)
        list(map(blobs.pop, changed, repeat(None)))
        errors = [e for e in base._errors if e.file not in changed]
        for record in records:
            parsed = _parse_record(record)
            if isinstance(parsed, FleetError):
                errors.append(parsed)
            elif parsed is not None:
                blobs[parsed[0]] = parsed[1]
        return cls(repo_dir, commit, blobs, sorted(errors, key=lambda e: e.file), objects)

    @classmethod
    def _listed_whole(
        cls,
        repo_dir: Path,
        commit: str,
        *,
        sizes: bool = True,
        objects: ObjectReader | None = None,
    ) -> GitTree:
        long = ["-l"] if sizes else []
        listing = run_git(repo_dir, ["ls-tree", "-r", "-z", *long, "--full-tree", commit])
        blobs, errors = _parse_listing(listing.stdout)
        return cls(repo_dir, commit, blobs, errors, objects)

    @classmethod
    def listed(
        cls,
        repo_dir: Path,
        commit: str,
        blobs: Mapping[str, tuple[str, int]],
        objects: ObjectReader | None = None,
    ) -> GitTree:
        """A tree whose listing (path -> (blob id, size)) the caller already knows, because it
        wrote the commit itself: no `ls-tree`. The listing is used as it is (not copied: leave it
        unchanged while the tree is open). Blobs are still read from the repository (through
        `objects` when given)."""
        return cls(repo_dir, commit, blobs, [], objects)

    @property
    def commit(self) -> str | None:
        return self._commit

    @property
    def errors(self) -> list[FleetError]:
        return list(self._errors)

    def files(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(self._blobs)
        return list(self._sorted)

    def oid(self, path: str) -> str:
        """The blob id of a listed file (KeyError for an unlisted path), without reading it."""
        return self._blobs[path][0]

    def size(self, path: str) -> int:
        """The size of a listed file in bytes (KeyError for an unlisted path); asked of git
        when the tree was listed without sizes (of the shared reader's `cat-file
        --batch-check` when there is one)."""
        oid, size = self._blobs[path]
        if size != UNKNOWN_SIZE:
            return size
        known = self._objects.info(oid) if self._shared else None
        if known is not None:
            return known[1]
        found = run_git(self._repo_dir, ["cat-file", "-s", oid]).stdout
        return int(found.decode("ascii").strip())

    def listing(self) -> Mapping[str, tuple[str, int]]:
        """path -> (blob id, size) of every listed file (read-only)."""
        return self._blobs

    def read(self, path: str) -> bytes:
        oid = self._blobs[path][0]
        objects = self._objects  # shared: long-running, so a pack may have gone under it
        got = objects.read_known(oid) if self._shared else objects.read(oid)
        if got is None or got[0] != b"blob":
            self.close()
            kind = "missing" if got is None else got[0].decode("ascii", "replace")
            raise GitError(f"git cat-file could not read {path!r} ({kind})")
        return got[1]

    def close(self) -> None:
        """Stop the cat-file process (idempotent; a shared reader is left running)."""
        if not self._shared:
            self._objects.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _parse_listing(raw: bytes) -> tuple[dict[str, _Blob], list[FleetError]]:
    """Turn `ls-tree -r -z -l` output into listed blobs and refused entries. A record (mode,
    type, id, size and path) of the last listing parsed is not parsed again: a long-running
    hub lists a source tree of thousands of files each pass, and few of them change. A listing
    whose every record is a plain regular file is read in bulk (`_parse_plain`)."""
    plain = _parse_plain(raw)
    if plain is not None:
        return plain, []
    blobs: dict[str, _Blob] = {}
    errors: list[FleetError] = []
    last, seen = _RECORDS[0], {}
    for record in raw.split(b"\0"):
        if not record:
            continue
        parsed = last.get(record)
        if parsed is None:
            parsed = _parse_record(record)
        seen[record] = parsed
        if isinstance(parsed, FleetError):
            errors.append(parsed)
        elif parsed is not None:
            blobs[parsed[0]] = parsed[1]
    _RECORDS[0] = seen
    return blobs, sorted(errors, key=lambda error: error.file)


_REGULAR_MODES = ("100644", "100755", "100664")
"""Tree entry modes of a regular file (git writes 100644 and 100755; old trees hold 100664)."""
_PLAIN = re.compile(
    rf"(?<![^\0])(?:{'|'.join(_REGULAR_MODES)}) blob "
    r"([0-9a-f]{40}|[0-9a-f]{64})(?: +([0-9]+))?\t([^\0]+)\0"
)
"""One record of a regular file, starting where a record starts (text start or after NUL)."""
_NOT_PLAIN = ("\n.", "/.", "//", "/\n", "\n/")
"""Joined by newlines, paths with an empty or hidden component contain one of these."""


def _parse_plain(raw: bytes) -> dict[str, _Blob] | None:
    """The listing when every record is a regular file at an ASCII path without hidden or
    empty components (what `_parse_record` accepts as it is), parsed by one regular
    expression over the whole text; None when any record is anything else (a link, a
    submodule, a hidden, non-ASCII or refused path): `_parse_listing` then reads each one.
    Records match only at record starts, so all matched means each record matched whole."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return None
    if "\n" in text or "\\" in text:
        return None
    found = _PLAIN.findall(text)
    if len(found) != text.count("\0"):
        return None
    blobs = {path: (oid, int(size) if size else UNKNOWN_SIZE) for oid, size, path in found}
    joined = "\n".join(blobs)
    if len(blobs) != len(found) or joined.startswith((".", "/")) or joined.endswith("/"):
        return None
    return None if any(part in joined for part in _NOT_PLAIN) else blobs


_Parsed = tuple[str, _Blob] | FleetError | None
"""A listed file, a refused entry, or nothing (a hidden path)."""
_RECORDS: list[dict[bytes, _Parsed]] = [{}]
"""The records of the last listing parsed and what each gave (replaced whole each time)."""


def _parse_record(record: bytes) -> _Parsed:
    meta, _, raw_path = record.partition(b"\t")
    mode, kind, oid, *size = meta.decode("ascii").split()
    try:
        path = raw_path.decode("utf-8")
    except UnicodeDecodeError:
        return FleetError(
            raw_path.decode("utf-8", "replace"), None, "", "file name is not valid UTF-8"
        )
    if is_hidden(path):
        return None
    problem = relpath_problem(path)
    if problem is not None:
        return FleetError(path, None, "", f"refused: {problem}")
    if mode == "120000":
        return FleetError(path, None, "", SYMLINK_MESSAGE)
    if mode == "160000" or kind == "commit":
        return FleetError(path, None, "", SUBMODULE_MESSAGE)
    if kind == "blob" and mode in _REGULAR_MODES:
        return path, (oid, int(size[0]) if size else UNKNOWN_SIZE)
    return FleetError(path, None, "", f"unsupported tree entry (mode {mode})")


_LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}
_PATHS_PER_CALL = 2000
_PATCH_LIMIT = 4000
"""Changed paths above which `GitTree.open_since` lists the whole tree instead."""


def _walked(
    objects: ObjectReader | None, old: str, new: str
) -> tuple[set[str] | None, list[bytes]] | None:
    """The changed paths and the new tree's records of them, compared through a shared
    reader (`treediff`); None when there is none, or it cannot (then git is asked)."""
    if objects is None:
        return None
    try:
        found = treediff.changed_records(objects, old, new, _PATCH_LIMIT)
    except GitError:
        return None
    if found is None:
        return None
    try:
        return {p.decode("utf-8") for p in found[0]}, found[1]
    except UnicodeDecodeError:
        return None, []  # git's listing of the whole tree reports the name


def _asked(repo_dir: Path, old: str, new: str) -> tuple[set[str] | None, list[bytes]]:
    """The changed paths (`diff-tree`) and the new tree's records of them (`ls-tree`)."""
    try:
        args = ["diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", old, new]
        changed = _changed_paths(run_git(repo_dir, args).stdout)
    except GitError:
        changed = None
    if changed is None or len(changed) > _PATCH_LIMIT:
        return changed, []
    ordered, records = sorted(changed), []
    for start in range(0, len(ordered), _PATHS_PER_CALL):
        chunk = ordered[start : start + _PATHS_PER_CALL]
        args = ["ls-tree", "-r", "-z", "-l", "--full-tree", new, "--", *chunk]
        records += [r for r in run_git(repo_dir, args, env=_LITERAL).stdout.split(b"\0") if r]
    return changed, records


def _changed_paths(raw: bytes) -> set[str] | None:
    """The paths `diff-tree -r -z --no-renames` names (":<modes> <ids> <status>\\0<path>\\0"
    records); None when one is not valid UTF-8 (the whole listing reports it)."""
    fields = raw.split(b"\0")
    try:
        return {fields[i].decode("utf-8") for i in range(1, len(fields), 2) if fields[i - 1]}
    except UnicodeDecodeError:
        return None


def list_paths(repo_dir: Path, commit: str, paths: Sequence[str]) -> dict[str, tuple[str, int]]:
    """path -> (blob id, size) of the files of `commit` at `paths` (a path ending in '/' is a
    folder, listed recursively), filtered as `GitTree.open` filters its listing (hidden, links,
    submodules left out); a path that is not there is simply not listed. One `ls-tree` limited
    to the paths (per 2,000 of them), instead of listing the whole tree."""
    wanted = {p for p in paths if not p.endswith("/")}
    folders = tuple(p for p in paths if p.endswith("/"))
    out: dict[str, tuple[str, int]] = {}
    unique = sorted(set(paths))
    for start in range(0, len(unique), _PATHS_PER_CALL):
        chunk = unique[start : start + _PATHS_PER_CALL]
        args = ["ls-tree", "-r", "-z", "-l", "--full-tree", commit, "--", *chunk]
        blobs, _errors = _parse_listing(run_git(repo_dir, args, env=_LITERAL).stdout)
        for path, blob in blobs.items():
            if path in wanted or path.startswith(folders):
                out[path] = blob
    return out


def list_dirs(repo_dir: Path, commit: str, folder: str) -> list[str]:
    """Names of the (not hidden) folders directly inside `folder` (ending in '/') at `commit`,
    sorted; none when it is not there."""
    args = ["ls-tree", "-z", "--full-tree", commit, "--", folder]
    names = []
    for record in run_git(repo_dir, args, env=_LITERAL).stdout.split(b"\0"):
        meta, _, raw_path = record.partition(b"\t")
        if not record or meta.split()[1] != b"tree":
            continue
        path = raw_path.decode("utf-8", "replace")
        name = path.removeprefix(folder)
        if path.startswith(folder) and "/" not in name and not is_hidden(name):
            names.append(name)
    return sorted(names)

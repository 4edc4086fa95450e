"""Write trees and commits with `git fast-import`, never through a working tree or an index.

`commit_files` applies path -> bytes (None deletes) changes on top of a parent commit;
`replace_tree` makes the parent's tree equal to a complete file mapping, sending only the blobs
whose `git hash-object` id differs from the parent's listing. Both first drop changes that
would not alter the tree, so a pass with unchanged content writes no object and returns the
parent (`changed=False`); otherwise one `git fast-import` process (its input: `faststream`)
writes the blobs, the trees (unchanged subtrees are reused by git) and the commit, without
touching any ref, and an optional `ref` is then moved with a compare-and-swap `git update-ref`.
Called by the reconciler loop (output branch) and the agent (status branch), usually inside a
`Mirror`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from gitfleet.repo.fastimport import run_fast_import
from gitfleet.repo.faststream import FILE_MODE, ZERO_OID, commit_and_tree, stream_parts
from gitfleet.repo.gitcmd import remember_written, run_git, validate_ref
from gitfleet.repo.signatures import sign_commit
from gitfleet.repo.tree import relpath_problem

_PART = r"[^/.\\\0\n\r][^/\\\0\n\r]*"
_GOOD_PATH = re.compile(f"{_PART}(?:/{_PART})*")
"""Fast accept: non-empty components, none starting with '.', no backslash, NUL or line break."""
_BAD_IN_PATHS = ("\\", "\0", "\r", "\n", "//", "/.")
"""What good paths (`_GOOD_PATH`) joined by '/' never hold (`_all_good`)."""


class PathError(ValueError):
    """A path given to the writer is not an acceptable repository-relative path."""


@dataclass(frozen=True)
class Identity:
    """Author/committer of a commit: a display name and an e-mail address."""

    name: str
    email: str

    def __post_init__(self) -> None:
        for value in (self.name, self.email):
            if any(ch in value for ch in "<>\n\r\0"):
                raise ValueError(f"identity field {value!r} contains '<', '>' or a line break")
        if not self.name.strip() or not self.email.strip():
            raise ValueError("identity name and email must not be empty")


@dataclass(frozen=True)
class CommitResult:
    """The commit a write produced (or the parent, unchanged), its tree, and whether it is new."""

    commit: str
    tree: str
    changed: bool


def blob_id(data: bytes) -> str:
    """The object id `git hash-object` gives `data` (SHA-1 repositories)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def check_path(path: str) -> None:
    """Raise PathError unless `path` is relative, '/'-separated, without '..', empty or hidden
    components, backslashes, NUL bytes or line breaks."""
    if _GOOD_PATH.fullmatch(path):
        return
    problem = relpath_problem(path)
    if problem is None and any(ch in path for ch in "\n\r"):
        problem = "path contains a line break"
    if problem is not None:
        raise PathError(f"refused path {path!r}: {problem}")


def check_paths(paths: Iterable[str]) -> None:
    """`check_path` of every path: one match over all of them (`_all_good`), each path
    checked alone only when that fails."""
    listed = list(paths)
    if _all_good(listed):
        return
    for path in listed:
        check_path(path)


def _all_good(paths: list[str]) -> bool:
    """True when every path matches `_GOOD_PATH`. Joined by '/', their components are the
    components of the joined text, so a few scans of that text tell: no empty path or
    component, none starting with '.', no backslash, NUL or line break."""
    joined = "/".join(paths)
    if not joined or joined[0] in "/." or joined[-1] == "/":
        return False
    return not any(bad in joined for bad in _BAD_IN_PATHS)


def commit_files(
    repo: Path,
    parent: str | None,
    changes: Mapping[str, bytes | None],
    message: str,
    author: Identity,
    *,
    ref: str | None = None,
    date: datetime | None = None,
    sign_key: Path | None = None,
    known: Mapping[str, tuple[str, int]] | None = None,
    keep_pack: bool = False,
) -> CommitResult:
    """Commit `changes` (path -> new bytes, or None to delete the file or directory) on top of
    `parent` (None: a root commit). No commit is made when the tree would not change.

    `ref`, when given, is moved to the new commit only if it still points at `parent` (or does
    not exist when `parent` is None); otherwise GitError. `date` defaults to the current time.
    `sign_key`: an SSH private key file; the commit is signed with it (`gpg.format=ssh`).
    `known`: every file of `parent` as path -> (blob id, size), when the caller holds it (the
    hub's record of the commit it wrote); then only deletions of paths it lacks (a directory,
    or nothing) are looked up in git. `keep_pack`: see `fastimport.run_fast_import`.
    """
    check_paths(changes)
    _refuse_nesting(path for path, data in changes.items() if data is not None)
    parent_commit, parent_tree = _resolve_parent(repo, parent)
    current = _current(repo, parent_commit, changes, known) if parent_commit else {}
    effective = _effective(changes, current)
    args = (repo, parent_commit, parent_tree, effective, message, author, ref, date, sign_key)
    return _write(*args, keep_pack=keep_pack)


def _effective(
    changes: Mapping[str, bytes | None], current: Mapping[str, str]
) -> Mapping[str, bytes | None]:
    """The changes that alter the tree: deletions of paths the parent has, and contents the
    parent lacks or holds with another blob id (hashed only for paths the parent has)."""
    if not current:  # a root commit, or nothing of the parent at these paths
        if None not in changes.values():
            return changes  # every change writes a file the parent lacks
        return {path: data for path, data in changes.items() if data is not None}
    out: dict[str, bytes | None] = {}
    for path, data in changes.items():
        if data is None:
            if path in current:
                out[path] = None
            continue
        old = current.get(path)
        if old is None or old != blob_id(data):
            out[path] = data
    return out


def replace_tree(
    repo: Path,
    parent: str | None,
    files: Mapping[str, bytes],
    message: str,
    author: Identity,
    *,
    ref: str | None = None,
    date: datetime | None = None,
) -> CommitResult:
    """Commit a tree holding exactly `files` (all mode 100644) on top of `parent`.

    Compares against the parent's full listing: unchanged blobs are not sent, files absent from
    `files` are deleted. Same `ref`/`date` rules as `commit_files`.
    """
    check_paths(files)
    _refuse_nesting(files)
    parent_commit, parent_tree = _resolve_parent(repo, parent)
    listing = _list_tree(repo, parent_commit) if parent_commit else {}
    changes: dict[str, bytes | None] = {path: None for path in listing if path not in files}
    for path, data in files.items():
        if listing.get(path) != (FILE_MODE, blob_id(data)):
            changes[path] = data
    return _write(repo, parent_commit, parent_tree, changes, message, author, ref, date)


def _write(
    repo: Path,
    parent: str | None,
    parent_tree: str | None,
    changes: Mapping[str, bytes | None],
    message: str,
    author: Identity,
    ref: str | None,
    date: datetime | None,
    sign_key: Path | None = None,
    *,
    keep_pack: bool = False,
) -> CommitResult:
    """Run fast-import for non-empty `changes` (or a root commit), sign the commit when a key
    is given, and move `ref` if asked."""
    if ref is not None:
        validate_ref(repo, ref)
    if parent is not None and parent_tree is not None and not changes:
        return CommitResult(parent, parent_tree, changed=False)
    stream = stream_parts(parent, changes, message, author, date or datetime.now(UTC))
    commit, tree = commit_and_tree(run_fast_import(repo, stream, keep_pack=keep_pack))
    if parent is not None and tree == parent_tree:
        return CommitResult(parent, tree, changed=False)
    if sign_key is not None:
        commit = sign_commit(repo, commit, sign_key)
    remember_written(repo, commit, tree, parent)
    if ref is not None:
        run_git(
            repo, ["update-ref", "-m", "gitfleet commit", "--", ref, commit, parent or ZERO_OID]
        )
    return CommitResult(commit, tree, changed=True)


def _resolve_parent(repo: Path, parent: str | None) -> tuple[str | None, str | None]:
    """(commit id, tree id) of `parent`, or (None, None) for a root commit."""
    if parent is None:
        return None, None
    validate_ref(repo, parent)
    commit = _rev_parse(repo, f"{parent}^{{commit}}")
    return commit, _rev_parse(repo, f"{commit}^{{tree}}")


def _rev_parse(repo: Path, spec: str) -> str:
    out = run_git(repo, ["rev-parse", "--verify", "--end-of-options", spec])
    return out.stdout.decode("ascii", "replace").strip()


def _current(
    repo: Path,
    commit: str,
    changes: Mapping[str, bytes | None],
    known: Mapping[str, tuple[str, int]] | None,
) -> dict[str, str]:
    """What `commit` holds at the changed paths, as `_lookup` gives it. With `known` (its
    files), a path it lists is that blob; a written path it lacks is absent or a directory,
    and is written either way; a deleted path it lacks is looked up (a directory is deleted)."""
    if known is None:
        return _lookup(repo, commit, changes)
    current = {path: known[path][0] for path in changes if path in known}
    unknown = [path for path, data in changes.items() if data is None and path not in known]
    if unknown:
        current.update(_lookup(repo, commit, unknown))
    return current


def _lookup(repo: Path, commit: str, paths: Iterable[str]) -> dict[str, str]:
    """Object ids of `paths` in `commit` (non-blobs prefixed by their type, so they never equal
    a blob id); missing paths are absent. Content only: a same-content entry keeps its mode."""
    ordered = sorted(paths)
    query = "".join(f"{commit}:{path}\n" for path in ordered).encode("utf-8", "surrogateescape")
    out = run_git(
        repo, ["cat-file", "--batch-check=%(objectname) %(objecttype)"], stdin=query
    ).stdout.decode("utf-8", "replace")
    found: dict[str, str] = {}
    for path, line in zip(ordered, out.splitlines(), strict=True):
        fields = line.split()
        if fields[-1] == "missing":
            continue
        # A tree at the path still counts as present (deleting it is a change), never equal.
        found[path] = fields[0] if fields[1] == "blob" else f"{fields[1]}:{fields[0]}"
    return found


def _list_tree(repo: Path, commit: str) -> dict[str, tuple[str, str]]:
    """Every non-tree entry of `commit`: path -> (mode, object id)."""
    raw = run_git(repo, ["ls-tree", "-r", "-z", "--full-tree", commit]).stdout
    listing: dict[str, tuple[str, str]] = {}
    for record in raw.split(b"\0"):
        if record:  # "<mode> <type> <40-hex oid>\t<path>"; slices avoid a split per entry
            meta, _, path = record.partition(b"\t")
            mode = meta[: meta.index(b" ")].decode("ascii")
            listing[path.decode("utf-8", "surrogateescape")] = (mode, meta[-40:].decode("ascii"))
    return listing


def _refuse_nesting(paths: Iterable[str]) -> None:
    """Raise PathError when a written file is also a directory of another written file."""
    listed = list(paths)  # walked in the caller's order: a set's order is slower to walk
    files = set(listed)
    dirs: set[str] = set()
    for parent in {path[: path.rfind("/")] for path in listed if "/" in path}:
        cut = len(parent)
        while cut > 0 and parent[:cut] not in dirs:  # a known prefix has known ancestors
            dirs.add(parent[:cut])
            cut = parent.rfind("/", 0, cut)
    clash = sorted(files & dirs)
    if clash:
        raise PathError(f"refused path {clash[0]!r}: it is a file and a directory at once")

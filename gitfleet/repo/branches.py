"""Small Git operations for approvals: who last changed a file, the user's identity, the first
existing ref of a list, and creating a branch that holds one new commit.

`last_change` gives the commit that last changed a path on the first-parent history of a ref
(for a pull request merged into main: the merge commit, whose author is who merged it) with its
author and committer. `commit_on_new_branch` writes one commit on top of a base without touching
the work tree or the index and creates `refs/heads/<branch>` (never an existing one).
Called by the hub loop (who approved) and `gitfleet approve`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitfleet.repo.commitwalk import first_parents
from gitfleet.repo.gitcmd import GitError, run_git, validate_ref
from gitfleet.repo.gitwrite import Identity, check_path, commit_files
from gitfleet.repo.trailers import parse_trailers

_COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class Change:
    """A commit with its author and committer as `Name <email>`."""

    commit: str
    author: str
    committer: str


def last_change(repo: Path, ref: str, path: str) -> Change | None:
    """The first-parent commit of `ref` that last changed `path` (None: never)."""
    validate_ref(repo, ref)
    check_path(path)
    fmt = "--format=%H%x00%an <%ae>%x00%cn <%ce>"
    out = run_git(repo, ["log", "-1", "--first-parent", fmt, "--end-of-options", ref, "--", path])
    text = out.stdout.decode("utf-8", "replace").strip()
    if not text:
        return None
    commit, author, committer = text.split("\0", 2)
    return Change(commit, author, committer)


def last_changes(repo: Path, ref: str, paths: Sequence[str]) -> dict[str, Change]:
    """`last_change` of several paths (those never changed are left out)."""
    out: dict[str, Change] = {}
    for path in sorted(set(paths)):
        found = last_change(repo, ref, path)
        if found is not None:
            out[path] = found
    return out


MAX_NEW_COMMITS = 1000
"""Commits `new_commits` reads at most (newest first)."""


@dataclass(frozen=True)
class NewCommit:
    """A commit after the last reconciled one: its id, author (`Name <email>`) and message."""

    commit: str
    author: str
    message: str


def new_commits(repo: Path, since: str | None, head: str) -> list[NewCommit]:
    """The commits reachable from `head` but not from `since` (newest first, `head` first, at
    most MAX_NEW_COMMITS); only `head` when `since` is None or not a commit of the repository.
    One `git log` gives what the hub asks of them: messages (approvals) and the tip's author;
    none when `commitwalk.learn_history` walked from `head` to `since` over commits of one
    parent each (then the walk is that list)."""
    validate_ref(repo, head)
    walked = first_parents(head, since) if since is not None else None
    if walked is not None and all(len(c.parents) == 1 and c.plain for c in walked):
        return [NewCommit(c.commit, c.author or "", c.message) for c in walked]
    fmt = "--format=%H %an <%ae>%n%B"
    args = ["log", "-z", fmt, f"--max-count={MAX_NEW_COMMITS}", "--end-of-options", head]
    if since is not None and _is_commit(repo, since):
        args.append(f"^{since}")
    else:
        args[3] = "--max-count=1"
    found: list[NewCommit] = []
    for record in run_git(repo, args).stdout.decode("utf-8", "replace").split("\0"):
        header, _, message = record.partition("\n")
        commit, _, author = header.partition(" ")
        if _COMMIT_ID.fullmatch(commit):  # git ends a message at a NUL byte it holds
            found.append(NewCommit(commit, author, message))
    return found


def changed_paths(repo: Path, since: str | None, head: str, paths: Sequence[str]) -> set[str]:
    """Those of `paths` that differ between `since` and `head` (all of them when `since` is
    None or not a commit: everything is new then)."""
    if not paths:
        return set()
    if since is None or not _is_commit(repo, since):
        return set(paths)
    validate_ref(repo, head)
    for path in paths:
        check_path(path)
    args = ["diff", "--name-only", "-z", "--no-renames", "--end-of-options", since, head, "--"]
    out = run_git(repo, [*args, *sorted(set(paths))])
    return {p for p in out.stdout.decode("utf-8", "replace").split("\0") if p}


ALLOW_DELETION_TRAILER = "Gitfleet-Allow-Deletion"
"""The commit trailer that approves a held deletion (`reconciler.govern.deletion`)."""


def approved_deletions(
    repo: Path,
    since: str | None,
    head: str,
    approvals: Sequence[tuple[str, Sequence[str]]],
    trailer: str = ALLOW_DELETION_TRAILER,
    commits: Sequence[NewCommit] | None = None,
) -> frozenset[str]:
    """What the commits after `since` up to `head` approve: the values of their `trailer`
    trailers, and the placements of the `approvals` ((file, placement keys)) whose file they
    add or change. An approval therefore never carries over to a later change. `commits`:
    `new_commits(repo, since, head)` when the caller has them already."""
    found = new_commits(repo, since, head) if commits is None else commits
    keys = {
        value.strip()
        for commit in found
        for value in parse_trailers(commit.message).get(trailer, [])
    }
    fresh = changed_paths(repo, since, head, sorted({f for f, _ in approvals}))
    keys.update(k for file, placements in approvals if file in fresh for k in placements)
    return frozenset(keys)


def _is_commit(repo: Path, ref: str) -> bool:
    validate_ref(repo, ref)
    out = run_git(repo, ["cat-file", "-e", "--end-of-options", f"{ref}^{{commit}}"], check=False)
    return out.returncode == 0


def user_identity(repo: Path) -> Identity:
    """The user's `user.name` / `user.email` as Git would use them; GitError when unset."""
    values = []
    for key in ("user.name", "user.email"):
        out = run_git(repo, ["config", "--get", key], check=False)
        value = out.stdout.decode("utf-8", "replace").strip()
        if out.returncode != 0 or not value:
            raise GitError(f"git {key} is not set; run: git config {key} ...")
        values.append(value)
    return Identity(values[0], values[1])


def resolve_first(repo: Path, refs: Sequence[str]) -> tuple[str, str] | None:
    """(ref, commit) of the first ref that exists."""
    for ref in refs:
        validate_ref(repo, ref)
        out = run_git(
            repo,
            ["rev-parse", "--verify", "-q", "--end-of-options", f"{ref}^{{commit}}"],
            check=False,
        )
        if out.returncode == 0:
            return ref, out.stdout.decode("ascii").strip()
    return None


def commit_on_new_branch(
    repo: Path,
    base: str,
    branch: str,
    files: Mapping[str, bytes],
    message: str,
    author: Identity,
) -> str:
    """Commit `files` on top of commit `base` as the new branch `branch`; its commit id."""
    ref = f"refs/heads/{branch}"
    validate_ref(repo, ref)
    if resolve_first(repo, [ref]) is not None:
        raise GitError(f"branch {branch} already exists")
    written = commit_files(repo, base, dict(files), message, author)
    if not written.changed:
        raise GitError(f"{', '.join(files)} already exist with this content on the base")
    run_git(repo, ["update-ref", "--end-of-options", ref, written.commit, "0" * 40])
    return written.commit

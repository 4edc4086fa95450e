"""The commits between the last reconciled source commit and the new tip, read without `git log`.

Each pass with a new source commit asks the same history questions: is the last reconciled
commit still an ancestor of the tip (`merge-base --is-ancestor`, after `rev-parse`), which
first-parent commits does signature verification judge (`rev-list --first-parent`), and which
commits are new (`git log`: approvals and the tip's author). Most often the tip is one or a few
commits on top of the last one. `learn_history` walks the tip's first parents through the
mirror's long-running `cat-file` (`ObjectReader`; one object per new commit, no process) and,
when it reaches the base within `WALK_LIMIT` commits, remembers:
- for the pass (`gitcmd.remembered_peels`): both commits exist and the base is an ancestor, so
  `Mirror.resolve` / `is_ancestor` and `cat-file -e` need no git;
- for the process: the walk itself (`first_parents`), keyed by (tip, base): commit ids name
  their content and parents forever, so a walk is a fact, whatever happens to the repository.
`signatures.first_parent_chain` and `branches.new_commits` take the walk when it is known
(`new_commits` only when every commit on it has one parent and no `encoding` header: the walk
is then exactly what `git log tip ^base` lists, in its order); otherwise they ask git, as
before. Called by `reconciler.loop` (learn), `signatures` and `branches` (use).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from gitfleet.repo.gitcmd import GitError, is_object_id, remember_ancestor, remember_commit
from gitfleet.repo.objects import ObjectReader

WALK_LIMIT = 64
"""First-parent commits walked at most from the tip; further away, git answers as before."""
_KEPT_WALKS = 64
_IDENT = re.compile(r"([^<>\n]*) <([^<>\n]*)> [0-9]+ [+-][0-9]{4}")
"""`author Name <email> 1700000000 +0000`: what `%an <%ae>` prints, when nothing is odd."""


@dataclass(frozen=True)
class WalkedCommit:
    """A commit read from its object: id, parents, `Name <email>` of its author (None when the
    line is not plain), message (up to a NUL byte, as `git log` prints it), and whether git
    would print it as it is (UTF-8, no `encoding` header)."""

    commit: str
    parents: tuple[str, ...]
    author: str | None
    message: str
    plain: bool


_WALKS: OrderedDict[tuple[str, str], tuple[WalkedCommit, ...]] = OrderedDict()
"""(tip, base) -> the first-parent commits from tip down to base (excluded), newest first."""


def parse_commit(commit: str, raw: bytes) -> WalkedCommit:
    """A commit object's fields (`raw`: the object's content)."""
    header, _, body = raw.partition(b"\n\n")
    parents: list[str] = []
    author: str | None = None
    plain = True
    for line in header.split(b"\n"):
        name, _, value = line.partition(b" ")
        if name == b"parent":
            parents.append(value.decode("ascii", "replace"))
        elif name == b"author":
            author = _ident(value)
        elif name == b"encoding":
            plain = False
    message = body.split(b"\0", 1)[0]
    try:
        text = message.decode("utf-8")
    except UnicodeDecodeError:
        text, plain = message.decode("utf-8", "replace"), False
    return WalkedCommit(commit, tuple(parents), author, text, plain and author is not None)


def _ident(value: bytes) -> str | None:
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return None
    found = _IDENT.fullmatch(text)
    if found is None or found[1] != found[1].strip():
        return None
    return f"{found[1]} <{found[2]}>"


def walk_first_parents(
    reader: ObjectReader, tip: str, base: str, limit: int = WALK_LIMIT
) -> tuple[WalkedCommit, ...] | None:
    """The first-parent commits from `tip` down to `base` (excluded), newest first; None when
    `base` is not on that path within `limit` commits, or a commit cannot be read."""
    if tip == base:
        return ()
    found: list[WalkedCommit] = []
    current = tip
    while len(found) < limit:
        if not is_object_id(current):
            return None
        read = _read_commit(reader, current)
        if read is None:
            return None
        found.append(read)
        if not read.parents:
            return None
        current = read.parents[0]
        if current == base:
            return tuple(found)
    return None


def _read_commit(reader: ObjectReader, commit: str) -> WalkedCommit | None:
    got = reader.read_known(commit)
    if got is None or got[0] != b"commit":
        return None
    return parse_commit(commit, got[1])


def learn_history(repo: Path, reader: ObjectReader, tip: str, base: str) -> bool:
    """Walk from `tip` to `base` and remember what the walk shows (module docstring). False
    when the walk did not reach `base`, or `tip` is `base` (nothing is remembered: callers
    ask git)."""
    if tip == base:
        return False
    walk = first_parents(tip, base)
    if walk is None:
        try:
            walk = walk_first_parents(reader, tip, base)
        except GitError:  # the process failed: git answers the questions as before
            return False
        if walk is None:
            return False
        _WALKS[(tip, base)] = walk
        while len(_WALKS) > _KEPT_WALKS:
            _WALKS.popitem(last=False)
    remember_commit(repo, base)
    for commit in walk:
        remember_commit(repo, commit.commit)
    remember_ancestor(repo, base, tip)
    return True


def first_parents(tip: str, base: str) -> tuple[WalkedCommit, ...] | None:
    """The walk from `tip` to `base` when this process has made it, else None."""
    return () if tip == base else _WALKS.get((tip, base))

"""`gitfleet.repo.commitwalk` and `objects.ObjectReader` on real repositories: a walk through
the long-running `cat-file` gives exactly what git gives (`rev-list --first-parent`, `git log`
via `new_commits`, `merge-base --is-ancestor`) on random histories with merges, odd authors and
messages, a NUL byte and a non-UTF-8 `encoding` header; where it cannot, it says so and git
answers. The reader finds objects written after it started, also after a repack removed the
packs it knew, and starts again after its process died."""

from __future__ import annotations

import os
import random
import signal
import subprocess
from pathlib import Path

import pytest

from gitfleet.repo import commitwalk
from gitfleet.repo.branches import new_commits
from gitfleet.repo.commitwalk import learn_history, parse_commit, walk_first_parents
from gitfleet.repo.gitcmd import GitError, known_ancestor, remembered_peels
from gitfleet.repo.objects import ObjectReader
from gitfleet.repo.signatures import first_parent_chain
from tests.helpers.gitrepo import git, init_work

AUTHORS = ["Ann", "Bob Lee", "Zoë Ünicode", "O'Brien"]
MESSAGES = ["one", "two\n\nbody line\n\nGitfleet-Allow-Deletion: web", "ünï  ", "x\n\n\n"]


def _raw_commit(work: Path, raw: bytes) -> str:
    done = subprocess.run(
        ["git", "-C", str(work), "hash-object", "-t", "commit", "-w", "--literally", "--stdin"],
        input=raw,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode().strip()


def _odd_commit(work: Path, parent: str, kind: int) -> str:
    """A commit git itself would not write: a NUL in the message, an `encoding` header with
    Latin-1 bytes, or an empty message."""
    tree = git(work, "rev-parse", f"{parent}^{{tree}}")
    head = f"tree {tree}\nparent {parent}\nauthor Eve <eve@example.com> 1 +0000\n"
    head += "committer Eve <eve@example.com> 1 +0000\n"
    tails = [b"\nodd\0after nul\n", b"\ncaf\xe9\n", b"\n"]
    if kind == 1:
        head += "encoding ISO-8859-1\n"
    return _raw_commit(work, head.encode() + tails[kind])


def _history(work: Path, rng: random.Random) -> list[str]:
    """~30 commits on main: plain ones, merges of short side branches, odd raw ones."""
    made = [_commit(work, "root", "Ann")]
    for step in range(30):
        roll = rng.random()
        if roll < 0.15:
            git(work, "checkout", "-q", "-b", f"side{step}", made[rng.randrange(len(made))])
            _commit(work, rng.choice(MESSAGES), rng.choice(AUTHORS))
            git(work, "checkout", "-q", "main")
            git(work, "merge", "-q", "--no-ff", "-m", f"merge {step}", f"side{step}", user="Cy")
            made.append(git(work, "rev-parse", "HEAD"))
        elif roll < 0.25:
            odd = _odd_commit(work, made[-1], rng.randrange(3))
            git(work, "update-ref", "refs/heads/main", odd)
            git(work, "reset", "-q", "--hard", odd)
            made.append(odd)
        else:
            made.append(_commit(work, rng.choice(MESSAGES), rng.choice(AUTHORS)))
    return made


def _commit(work: Path, message: str, user: str) -> str:
    git(work, "commit", "-q", "--allow-empty", "-m", message, user=user)
    return git(work, "rev-parse", "HEAD")


def _git_lines(repo: Path, *args: str) -> list[str]:
    return git(repo, *args).split()


@pytest.mark.parametrize("seed", range(3))
def test_walks_give_what_git_gives(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    work = init_work(tmp_path / "w")
    made = _history(work, rng)
    repo = work / ".git"
    everything = sorted(set(made) | set(_git_lines(work, "rev-list", "--all")))
    reader = ObjectReader(repo)
    pairs = [(rng.choice(everything), rng.choice(everything)) for _ in range(60)]
    pairs += list(zip(made[1:], made[:-1], strict=True))
    for tip, base in pairs:
        commitwalk._WALKS.clear()
        on_path = base in _git_lines(work, "rev-list", "--first-parent", tip)
        walk = walk_first_parents(reader, tip, base)
        if not on_path or tip == base:
            assert walk == (() if tip == base else None), (tip, base)
            continue
        assert walk is not None
        chain = _git_lines(work, "rev-list", "--first-parent", tip, f"^{base}")
        assert [c.commit for c in walk] == chain
        asked = new_commits(repo, base, tip)  # nothing learned: `git log`
        with remembered_peels():
            assert learn_history(repo, reader, tip, base)
            assert known_ancestor(repo, base, tip)
        assert first_parent_chain(repo, tip, base) == chain[::-1]
        assert new_commits(repo, base, tip) == asked  # the walk when it may, else git again
    reader.close()


def test_a_plain_walk_is_used_and_an_odd_one_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`new_commits` takes the walk over single-parent UTF-8 commits (no `git log`), and
    asks git when the walk holds a merge or an `encoding` header."""
    work = init_work(tmp_path / "w")
    repo = work / ".git"
    base = _commit(work, "base", "Ann")
    plain = _commit(work, "two\n\nGitfleet-Allow-Deletion: web", "Zoë Ünicode")
    odd = _odd_commit(work, plain, 1)
    reader = ObjectReader(repo)
    logs: list[list[str]] = []
    real = subprocess.run

    def counting(argv: list[str], *args: object, **kwargs: object) -> object:
        logs.append(argv)
        return real(argv, *args, **kwargs)  # type: ignore[call-overload]

    for tip, asks in ((plain, False), (odd, True)):
        want = new_commits(repo, base, tip)
        commitwalk._WALKS.clear()
        assert learn_history(repo, reader, tip, base)
        logs.clear()
        monkeypatch.setattr(subprocess, "run", counting)
        got = new_commits(repo, base, tip)
        monkeypatch.undo()
        assert got == want
        assert any("log" in argv for argv in logs) is asks, logs
    raw = subprocess.run(["git", "-C", str(work), "cat-file", "commit", odd], capture_output=True)
    assert parse_commit(odd, raw.stdout).plain is False
    reader.close()


def test_a_walk_that_cannot_reach_the_base_learns_nothing(tmp_path: Path) -> None:
    work = init_work(tmp_path / "w")
    repo = work / ".git"
    first = _commit(work, "one", "Ann")
    second = _commit(work, "two", "Ann")
    reader = ObjectReader(repo)
    commitwalk._WALKS.clear()
    with remembered_peels():
        assert not learn_history(repo, reader, first, second)  # the base is the descendant
        assert not known_ancestor(repo, second, first)
        assert not learn_history(repo, reader, second, "0" * 40)  # no such commit
        assert not learn_history(repo, reader, second, second)
    walked = walk_first_parents(reader, second, first, limit=1)
    assert walked is not None and [c.commit for c in walked] == [second]
    _commit(work, "three", "Ann")
    assert walk_first_parents(reader, git(work, "rev-parse", "HEAD"), first, limit=1) is None
    reader.close()


def test_the_reader_finds_new_objects_after_repacks_and_restarts(tmp_path: Path) -> None:
    work = init_work(tmp_path / "w")
    repo = work / ".git"
    first = _commit(work, "one", "Ann")
    reader = ObjectReader(repo)
    assert reader.read(first) is not None and len(reader.pids) == 1
    later = _commit(work, "two", "Ann")  # written after the process started: loose
    got = reader.read(later)
    assert got is not None and got[0] == b"commit"
    git(work, "repack", "-a", "-d", "-q")  # the loose objects go into a new pack
    git(work, "prune-packed")
    third = _commit(work, "three", "Ann")
    git(work, "repack", "-a", "-d", "-q")  # ...and that pack is replaced by another
    for commit in (first, later, third):
        got = reader.read(commit)
        if got is None:  # allowed: a pack gone under it; a new process finds it
            reader.restart()
            got = reader.read(commit)
        assert got is not None and got[0] == b"commit", commit
    assert reader.read("0" * 40) is None
    content = reader.read(first)
    assert content is not None and reader.info(first) == (b"commit", len(content[1]))
    assert reader.info("0" * 40) is None
    pid = reader.pids[0]
    os.kill(pid, signal.SIGKILL)
    for _ in range(2):  # the read in flight may fail; then the next one starts a new process
        try:
            got = reader.read(first)
            break
        except GitError:
            got = None
    assert got is not None and pid not in reader.pids
    reader.close()
    reader.close()
    assert not reader.pids

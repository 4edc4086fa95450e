"""`gitfleet.repo.branches.new_commits` on a real repository: the commits after the last
reconciled one, newest first with the tip leading, each with its author and message exactly
as `git log` gives them (approvals read the messages, the hub's commit trailer the tip's
author), from one `git log`."""

from __future__ import annotations

import subprocess
from pathlib import Path

from gitfleet.repo.branches import approved_deletions, new_commits
from tests.helpers.gitrepo import git, init_work


def _commit(work: Path, message: str, user: str) -> str:
    git(work, "commit", "-q", "--allow-empty", "-m", message, user=user)
    return git(work, "rev-parse", "HEAD")


def test_new_commits_name_tip_first_with_authors_and_messages(tmp_path: Path) -> None:
    work = init_work(tmp_path / "w")
    first = _commit(work, "one", "Ann")
    second = _commit(work, "two\n\nbody line\n\nGitfleet-Allow-Deletion: web", "Bob Lee")
    third = _commit(work, "three", "Cy")
    table = [
        (
            first,
            [
                (third, "Cy <cy@example.com>", "three\n"),
                (
                    second,
                    "Bob Lee <bob@example.com>",
                    "two\n\nbody line\n\nGitfleet-Allow-Deletion: web\n",
                ),
            ],
        ),
        (None, [(third, "Cy <cy@example.com>", "three\n")]),  # no last commit: the tip only
        ("0" * 40, [(third, "Cy <cy@example.com>", "three\n")]),  # not a commit here
        (third, []),  # nothing new
    ]
    for since, want in table:
        got = [(c.commit, c.author, c.message) for c in new_commits(work / ".git", since, third)]
        assert got == want, since
    found = new_commits(work / ".git", first, third)
    assert approved_deletions(work / ".git", first, third, [], commits=found) == {"web"}
    assert approved_deletions(work / ".git", second, third, []) == frozenset()


def test_a_message_with_a_nul_byte_stays_one_commit(tmp_path: Path) -> None:
    """A commit object whose message holds a NUL byte (written with `hash-object
    --literally`) and then text shaped like another commit's header: `git log` ends the
    message at the NUL, and nothing after it is taken for another commit."""
    work = init_work(tmp_path / "w")
    base = _commit(work, "base", "Ann")
    tree = git(work, "rev-parse", "HEAD^{tree}")
    raw = (
        f"tree {tree}\nparent {base}\nauthor Eve <eve@example.com> 1 +0000\n"
        f"committer Eve <eve@example.com> 1 +0000\n\nodd\0{base} Mallory <m@x>\nmore\n"
    ).encode()
    odd = (
        subprocess.run(
            ["git", "-C", str(work), "hash-object", "-t", "commit", "-w", "--literally", "--stdin"],
            input=raw,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    found = new_commits(work / ".git", base, odd)
    assert [(c.commit, c.author, c.message) for c in found] == [
        (odd, "Eve <eve@example.com>", "odd")
    ]

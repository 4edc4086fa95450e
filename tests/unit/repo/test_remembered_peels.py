"""`remembered_peels`: within one pass, a command that only peels an object id is answered
from memory after it once succeeded (by a real git in a temporary repository); failures, other
commands and calls outside the scope always run git, and `gc` forgets what was remembered."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from gitfleet.repo import gitcmd
from gitfleet.repo.gitcmd import known_ancestor, remembered_peels, run_git
from gitfleet.repo.gitwrite import Identity, commit_files

MISSING = "0" * 39 + "1"
BOT = Identity("gitfleet-bot", "bot@gitfleet.invalid")


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    run_git(tmp_path, ["init", "--quiet"])
    (tmp_path / "a").write_text("a\n")
    run_git(tmp_path, ["add", "a"])
    run_git(tmp_path, ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"])
    head = run_git(tmp_path, ["rev-parse", "HEAD"]).stdout.decode().strip()
    return tmp_path, head


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    calls: list[list[str]] = []
    real = subprocess.run

    def counting(argv: list[str], *args: Any, **kwargs: Any) -> Any:
        calls.append(argv)
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(gitcmd.subprocess, "run", counting)
    return calls


def _peel(repo: Path, spec: str, *options: str) -> gitcmd.GitResult:
    return run_git(repo, ["rev-parse", *options, "--end-of-options", spec], check=False)


def test_a_peel_is_asked_once_per_pass(repo: tuple[Path, str], started: list[Any]) -> None:
    path, head = repo
    fresh = _peel(path, f"{head}^{{tree}}", "--verify")
    with remembered_peels():
        first = _peel(path, f"{head}^{{tree}}", "--verify", "--quiet")
        again = _peel(path, f"{head}^{{tree}}", "--verify")
        exists = run_git(path, ["cat-file", "-e", "--end-of-options", f"{head}^{{tree}}"])
        assert len(started) == 2  # the one outside and the first inside
        assert first.stdout == again.stdout == fresh.stdout
        assert exists.returncode == 0 and exists.stdout == b""
        with remembered_peels():  # a nested scope shares the pass's memory
            _peel(path, f"{head}^{{tree}}", "--verify")
        assert _peel(path, f"{MISSING}^{{commit}}", "--verify", "--quiet").returncode != 0
        assert _peel(path, f"{MISSING}^{{commit}}", "--verify", "--quiet").returncode != 0
        assert len(started) == 4  # failures are asked again
        run_git(path, ["rev-parse", "--verify", "--end-of-options", "HEAD^{commit}"])
        run_git(path, ["rev-parse", "--verify", "--end-of-options", "HEAD^{commit}"])
        assert len(started) == 6  # a ref may move: never remembered
        run_git(path, ["gc", "--auto", "--quiet"])
        _peel(path, f"{head}^{{tree}}", "--verify")
        assert len(started) == 8  # gc forgot it
    _peel(path, f"{head}^{{tree}}", "--verify")
    assert len(started) == 9  # outside the pass: git again


def test_existence_alone_does_not_answer_a_rev_parse(
    repo: tuple[Path, str], started: list[Any]
) -> None:
    path, head = repo
    with remembered_peels():
        run_git(path, ["cat-file", "-e", "--end-of-options", f"{head}^{{commit}}"])
        assert _peel(path, f"{head}^{{commit}}", "--verify").stdout.decode().strip() == head
        assert len(started) == 2
        run_git(path, ["cat-file", "-e", "--end-of-options", f"{head}^{{commit}}"])
        assert len(started) == 2


def test_a_commit_a_ref_peeled_to_is_remembered_by_its_id(
    repo: tuple[Path, str], started: list[Any]
) -> None:
    path, head = repo
    with remembered_peels():
        _peel(path, "HEAD^{commit}", "--verify", "--quiet")
        assert _peel(path, f"{head}^{{commit}}", "--verify").stdout.decode().strip() == head
        run_git(path, ["cat-file", "-e", "--end-of-options", f"{head}^{{commit}}"])
        assert len(started) == 1
        _peel(path, "HEAD^{commit}", "--verify", "--quiet")
        assert len(started) == 2  # the ref itself is still asked


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    path = tmp_path / "b.git"
    run_git(tmp_path, ["init", "--bare", "--quiet", str(path)])
    return path


def test_git_dir_naming_the_repository_is_the_same_repository(
    tmp_path: Path, bare: Path, started: list[Any]
) -> None:
    written = commit_files(bare, None, {"a": b"1\n"}, "one", BOT)
    before = len(started)
    with remembered_peels():
        spec = f"{written.commit}^{{commit}}"
        env = {"GIT_DIR": str(bare)}
        run_git(bare, ["rev-parse", "--verify", "--end-of-options", spec], env=env)
        run_git(bare, ["cat-file", "-e", "--end-of-options", spec])
        assert len(started) == before + 1
        other = {"GIT_DIR": str(tmp_path / "elsewhere")}
        run_git(bare, ["cat-file", "-e", "--end-of-options", spec], env=other, check=False)
        assert len(started) == before + 2  # another GIT_DIR is another repository


def test_what_this_process_wrote_is_known_without_asking(
    tmp_path: Path, bare: Path, started: list[Any]
) -> None:
    first = commit_files(bare, None, {"a": b"1\n"}, "one", BOT)
    assert not known_ancestor(bare, first.commit, first.commit)  # outside a pass: ask git
    with remembered_peels():
        second = commit_files(bare, first.commit, {"a": b"2\n"}, "two", BOT)
        before = len(started)
        assert _peel(bare, f"{second.commit}^{{commit}}", "--verify").stdout.decode().strip() == (
            second.commit
        )
        assert _peel(bare, f"{second.commit}^{{tree}}", "--verify").stdout.decode().strip() == (
            second.tree
        )
        assert len(started) == before
        assert known_ancestor(bare, first.commit, second.commit)
        assert known_ancestor(bare, second.commit, second.commit)
        assert not known_ancestor(bare, second.commit, first.commit)
        assert not known_ancestor(tmp_path / "other.git", first.commit, second.commit)
    assert not known_ancestor(bare, first.commit, second.commit)


def test_a_commit_listed_as_one_is_known_within_the_pass_only(
    repo: tuple[Path, str], started: list[Any]
) -> None:
    """`remember_commit` (a `for-each-ref` listing said the id is a commit): its peel needs no
    git within the pass; outside one nothing is kept, and a ref name is still asked."""
    path, head = repo
    gitcmd.remember_commit(path, head)  # outside a pass: forgotten at once
    with remembered_peels():
        assert _peel(path, f"{head}^{{commit}}", "--verify").stdout.decode().strip() == head
        assert len(started) == 1
    with remembered_peels():
        gitcmd.remember_commit(path, "HEAD")
        gitcmd.remember_commit(path, head)
        assert _peel(path, f"{head}^{{commit}}", "--verify").stdout.decode().strip() == head
        assert _peel(path, "HEAD^{commit}", "--verify", "--quiet").returncode == 0
        assert len(started) == 2  # only the ref name was asked

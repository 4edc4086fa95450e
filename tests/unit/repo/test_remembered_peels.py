"""`remembered_peels`: within one pass, a command that only peels an object id is answered
from memory after it once succeeded (by a real git in a temporary repository); failures, other
commands and calls outside the scope always run git, and `gc` forgets what was remembered."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from gitfleet.repo import gitcmd
from gitfleet.repo.gitcmd import remembered_peels, run_git

MISSING = "0" * 39 + "1"


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

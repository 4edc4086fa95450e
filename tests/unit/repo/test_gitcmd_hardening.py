"""gitcmd: URL redaction, environment hardening, ref validation, redacted errors."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitfleet.repo import gitcmd
from gitfleet.repo.gitcmd import GitError, git_argv, git_env, redact_url, run_git, validate_ref
from gitfleet.repo.mirror import Mirror


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://user:pass@host/x.git", "https://***@host/x.git"),
        ("fatal: https://tok@github.com/o/r: 403", "fatal: https://***@github.com/o/r: 403"),
        ("ssh://git@host:22/r", "ssh://***@host:22/r"),
        ("HTTPS://a:b@h", "HTTPS://***@h"),
        ("https://host/no-credentials", "https://host/no-credentials"),
        ("git@github.com:o/r.git", "git@github.com:o/r.git"),
        ("a https://u:p@x and http://v:q@y", "a https://***@x and http://***@y"),
        ("https://h/r.git?sig=abc&se=2026", "https://h/r.git?sig=***&se=***"),
        ("'https://u:p@h/r?token=x#frag': 403", "'https://***@h/r?token=***#frag': 403"),
        ("https://h/r?opaque-token", "https://h/r?***"),
        (
            "see https://h/r?token=t1 and https://g/s?sig=s2.",
            "see https://h/r?token=*** and https://g/s?sig=***",
        ),
    ],
)
def test_redact_url(text: str, expected: str) -> None:
    assert redact_url(text) == expected


def test_git_env_is_hardened(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_DIR", "/elsewhere")
    monkeypatch.setenv("GIT_WORK_TREE", "/elsewhere")
    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -i key")
    env = git_env()
    assert env["GIT_ALLOW_PROTOCOL"] == "file:https:ssh"
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert "GIT_DIR" not in env and "GIT_WORK_TREE" not in env
    assert env["GIT_SSH_COMMAND"] == "ssh -i key"
    assert git_argv(Path("/r"), "status")[:3] == ["git", "-c", "protocol.ext.allow=never"]


@pytest.mark.parametrize(
    ("inherited", "expected"),
    [
        (None, "glibc.malloc.trim_threshold=67108864"),
        ("", "glibc.malloc.trim_threshold=67108864"),
        (
            "glibc.malloc.arena_max=2",
            "glibc.malloc.arena_max=2:glibc.malloc.trim_threshold=67108864",
        ),
        ("glibc.malloc.trim_threshold=0", "glibc.malloc.trim_threshold=0"),  # the user's stands
    ],
)
def test_git_env_keeps_freed_memory(
    monkeypatch: pytest.MonkeyPatch, inherited: str | None, expected: str
) -> None:
    """git processes keep freed heap for the next object (no page faults per zlib stream)."""
    if inherited is None:
        monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    else:
        monkeypatch.setenv("GLIBC_TUNABLES", inherited)
    assert git_env()["GLIBC_TUNABLES"] == expected


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


@pytest.mark.parametrize(
    ("ref", "ok"),
    [
        ("main", True),
        ("HEAD", True),
        ("refs/heads/feature/x", True),
        ("origin/main", True),
        ("a" * 40, True),
        ("-rf", False),
        ("--upload-pack=evil", False),
        ("a..b", False),
        ("main~1", False),
        ("with space", False),
        ("", False),
        ("x\nfoo", False),
        ("ext::sh -c evil", False),
    ],
)
def test_validate_ref(repo: Path, ref: str, ok: bool) -> None:
    if ok:
        validate_ref(repo, ref)
    else:
        with pytest.raises(GitError, match="invalid ref"):
            validate_ref(repo, ref)


def test_validate_ref_asks_git_once_per_accepted_name(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An accepted name is remembered (a loop checks the same refs every pass); a refused one
    is checked, and refused, every time."""
    calls: list[str] = []

    def counting(repo_dir: Path, args: list[str], **kwargs: object) -> object:
        calls.append(args[-1])
        return run_git(repo_dir, args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gitcmd, "_ACCEPTED_REFS", set())
    monkeypatch.setattr(gitcmd, "run_git", counting)
    for _ in range(3):
        validate_ref(repo, "refs/heads/once")
        with pytest.raises(GitError, match="invalid ref"):
            validate_ref(repo, "refs/heads/bad..name")
    assert calls == ["refs/heads/once"] + ["refs/heads/bad..name"] * 3


def test_mirror_checks_each_refspec_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    mirror = Mirror.open(tmp_path / "m", str(remote))
    spec = "+refs/heads/main:refs/remotes/origin/main"
    assert mirror._check_refspec(spec) == ("refs/heads/main", "refs/remotes/origin/main")
    monkeypatch.setattr(mirror, "_git", lambda *a, **k: pytest.fail("checked twice"))
    assert mirror._check_refspec(spec) == ("refs/heads/main", "refs/remotes/origin/main")
    with pytest.raises(GitError, match="invalid refspec"):
        mirror._check_refspec("+refs/heads/a:refs/remotes/b:c")


def test_ext_protocol_is_blocked(repo: Path) -> None:
    with pytest.raises(GitError) as info:
        run_git(repo, ["ls-remote", "ext::sh -c touch% /tmp/pwned"], timeout=30)
    assert "ext" in str(info.value)


def test_errors_are_redacted(repo: Path) -> None:
    with pytest.raises(GitError) as info:
        run_git(repo, ["ls-remote", "https://user:s3cret@127.0.0.1:1/r.git"], timeout=30)
    assert "s3cret" not in str(info.value)


def test_a_mirror_never_stores_url_credentials_in_clear(tmp_path: Path) -> None:
    url = "https://user:pw-secret@example.com/o/r.git?sig=sig-secret&token=tok-secret"
    mirror = Mirror.open(tmp_path / "cache", url)
    config = (tmp_path / "cache/config").read_text()
    for secret in ("pw-secret", "sig-secret", "tok-secret"):
        assert secret not in config and secret not in mirror.url
    assert Mirror.open(tmp_path / "cache", url).url == mirror.url  # reopens the same mirror

"""Mirror and URL admission against real remotes: bare repositories on disk (path and file://)
and a `git daemon` on 127.0.0.1 (git://). Fast-forward pushes, a writer that lost the race is
rejected (not raised) and succeeds after fetch + recompute, missing and pruned refs, ancestry,
log with trailers, reopen rules, refused URLs and redacted credentials."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from gitfleet.repo import gitcmd
from gitfleet.repo.gitcmd import GitError
from gitfleet.repo.gitwrite import CommitResult, Identity, commit_files
from gitfleet.repo.mirror import Mirror
from gitfleet.repo.remote import RemoteURL, check_url
from gitfleet.repo.trailers import compose_message

BOT = Identity("gitfleet-bot", "bot@gitfleet.invalid")
MAIN = "+refs/heads/main:refs/remotes/origin/main"
STATUS = "+refs/heads/gitfleet/status/*:refs/remotes/origin/gitfleet/status/*"
TRACKING = "refs/remotes/origin/main"


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    return out.stdout.decode().strip()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """A `git daemon` serving (and accepting pushes into) a temporary base directory."""
    exec_path = subprocess.run(["git", "--exec-path"], capture_output=True, text=True).stdout
    if shutil.which("git-daemon", path=exec_path.strip()) is None:
        pytest.skip("git daemon is not installed (package git-daemon-run or git-daemon-sysvinit)")
    base, port = tmp_path_factory.mktemp("daemon"), free_port()
    argv = ["git", "daemon", "--export-all", "--enable=receive-pack", f"--base-path={base}"]
    argv += ["--listen=127.0.0.1", f"--port={port}", "--reuseaddr", "--informative-errors"]
    proc = subprocess.Popen([*argv, str(base)], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.skip("git daemon did not start listening")
                time.sleep(0.05)
        yield base, port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(params=["path", "file", "git"])
def remote_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh empty bare remote, addressed as a plain path, a file:// URL or git://127.0.0.1."""
    if request.param == "git":
        base, port = request.getfixturevalue("daemon")
        name = f"{tmp_path.name}.git"
        subprocess.run(["git", "init", "-q", "--bare", str(base / name)], check=True)
        return f"git://127.0.0.1:{port}/{name}"
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    return str(bare) if request.param == "path" else f"file://{bare}"


def publish(mirror: Mirror, files: dict[str, bytes | None], message: str) -> CommitResult:
    """Fetch, commit `files` on top of origin/main and push fast-forward; assert success."""
    mirror.fetch([MAIN])
    old = mirror.resolve(TRACKING)
    result = commit_files(mirror.path, old, files, message, BOT)
    outcome = mirror.push_fast_forward(result.commit, "main", old)
    assert outcome.ok and not outcome.rejected, outcome
    return result


def test_push_race_rejects_then_recovers(remote_url: str, tmp_path: Path) -> None:
    one = Mirror.open(tmp_path / "one", remote_url)
    two = Mirror.open(tmp_path / "two", remote_url)
    first = publish(one, {"a.yaml": b"1\n"}, "first")
    two.fetch([MAIN])
    stale = two.resolve(TRACKING)
    assert stale == first.commit
    second = publish(one, {"b.yaml": b"2\n"}, "second")  # the other writer moves main
    mine = commit_files(two.path, stale, {"c.yaml": b"3\n"}, "mine", BOT)
    lost = two.push_fast_forward(mine.commit, "main", stale)
    assert lost.rejected and not lost.ok and "stale info" in lost.message
    two.fetch([MAIN])
    fresh = two.resolve(TRACKING)
    assert fresh == second.commit and two.is_ancestor(stale or "", fresh)
    # a commit built on the old tip is refused locally against the new expected value
    assert two.push_fast_forward(mine.commit, "main", fresh).rejected
    redo = commit_files(two.path, fresh, {"c.yaml": b"3\n"}, "mine, recomputed", BOT)
    assert two.push_fast_forward(redo.commit, "main", fresh).ok
    one.fetch([MAIN])
    assert one.resolve(TRACKING) == redo.commit
    assert [e.subject for e in one.log(TRACKING)] == ["mine, recomputed", "second", "first"]


def test_new_branch_lease_and_up_to_date(remote_url: str, tmp_path: Path) -> None:
    mirror = Mirror.open(tmp_path / "m", remote_url)
    assert mirror.fetch([MAIN]).missing == ("refs/heads/main",)
    root = commit_files(mirror.path, None, {"a.yaml": b"1"}, "root", BOT)
    assert mirror.push_fast_forward(root.commit, "main", None).ok
    assert mirror.push_fast_forward(root.commit, "main", None).ok  # already there
    other = commit_files(mirror.path, None, {"b.yaml": b"2"}, "unrelated root", BOT)
    assert mirror.push_fast_forward(other.commit, "main", None).rejected
    assert mirror.push_fast_forward(other.commit, "refs/heads/main", root.commit).rejected
    mirror.fetch([MAIN])
    assert mirror.resolve(TRACKING) == root.commit


def test_push_moves_the_tracking_ref_of_fetched_refspecs(remote_url: str, tmp_path: Path) -> None:
    """A successful push sets the local ref the fetch refspecs map the branch to (exact or glob),
    as `git push` to a configured remote does; a rejected push or an unfetched branch does not."""
    mirror = Mirror.open(tmp_path / "m", remote_url)
    root = commit_files(mirror.path, None, {"a.yaml": b"1"}, "root", BOT)
    assert mirror.push_fast_forward(root.commit, "main", None).ok  # nothing fetched yet
    assert mirror.resolve(TRACKING) is None
    mirror.fetch([MAIN, STATUS])
    nxt = commit_files(mirror.path, root.commit, {"a.yaml": b"2"}, "next", BOT)
    assert mirror.push_fast_forward(nxt.commit, "main", root.commit).ok
    assert mirror.resolve(TRACKING) == nxt.commit  # no fetch in between
    assert mirror.push_fast_forward(root.commit, "gitfleet/status/east", None).ok
    assert mirror.resolve("refs/remotes/origin/gitfleet/status/east") == root.commit
    assert mirror.push_fast_forward(root.commit, "other", None).ok  # not a fetched branch
    assert mirror.resolve("refs/remotes/origin/other") is None
    other = commit_files(mirror.path, None, {"b.yaml": b"3"}, "unrelated", BOT)
    assert mirror.push_fast_forward(other.commit, "main", nxt.commit).rejected
    assert mirror.resolve(TRACKING) == nxt.commit
    reader = Mirror.open(tmp_path / "r", remote_url)
    reader.fetch([MAIN])
    assert reader.resolve(TRACKING) == nxt.commit
    assert mirror.fetch([MAIN, STATUS]).missing == () and mirror.resolve(TRACKING) == nxt.commit


@pytest.mark.parametrize(
    ("remote_ref", "want"),
    [
        ("refs/heads/main", "refs/remotes/origin/main"),
        ("refs/heads/gitfleet/status/east", "refs/remotes/origin/gitfleet/status/east"),
        ("refs/heads/gitfleet/status/", None),
        ("refs/heads/gitfleet/rendered", None),
        ("refs/heads/x/y-tail", "refs/t/y"),
    ],
)
def test_tracking_ref_mapping(tmp_path: Path, remote_ref: str, want: str | None) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    mirror = Mirror.open(tmp_path / "m", str(remote))
    mirror.fetch([MAIN, STATUS, "+refs/heads/x/*-tail:refs/t/*"])
    assert mirror.tracking_ref(remote_ref) == want


def test_missing_and_pruned_refs(remote_url: str, tmp_path: Path) -> None:
    writer = Mirror.open(tmp_path / "w", remote_url)
    reader = Mirror.open(tmp_path / "r", remote_url)
    root = commit_files(writer.path, None, {"a.yaml": b"1"}, "root", BOT)
    for branch in ("main", "gitfleet/status/east", "gitfleet/status/west"):
        assert writer.push_fast_forward(root.commit, branch, None).ok
    assert reader.fetch([MAIN, STATUS]).missing == ()
    prefix = "refs/remotes/origin/gitfleet/status/"
    assert list(reader.list_refs(prefix)) == [f"{prefix}east", f"{prefix}west"]
    assert set(reader.list_refs(prefix).values()) == {root.commit}
    subprocess.run(
        [
            "git",
            "-C",
            str(writer.path),
            "push",
            "-q",
            "--",
            remote_url,
            ":refs/heads/gitfleet/status/west",
            ":refs/heads/main",
        ],
        check=True,
    )
    assert reader.fetch([MAIN, STATUS]).missing == ("refs/heads/main",)
    assert list(reader.list_refs("refs/remotes/")) == [f"{prefix}east"]
    assert reader.resolve(TRACKING) is None


def test_tips_name_each_refs_commit_and_peel_only_other_objects(
    remote_url: str, tmp_path: Path
) -> None:
    """One listing gives every tracking ref's object and type; `tip_commit` takes a commit as
    listed, peels an annotated tag to its commit, and gives None for a tree or a missing ref."""
    writer = Mirror.open(tmp_path / "w", remote_url)
    root = commit_files(writer.path, None, {"a.yaml": b"1"}, "root", BOT)
    assert writer.push_fast_forward(root.commit, "main", None).ok
    reader = Mirror.open(tmp_path / "r", remote_url)
    reader.fetch(["+refs/heads/*:refs/remotes/origin/*"])
    env = {**os.environ, "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    run = partial(subprocess.run, check=True, env=env, capture_output=True)
    git = ["git", "--git-dir", str(reader.path)]
    run([*git, "tag", "-a", "-m", "t", "v1", root.commit])  # a remote refuses these on a branch
    for src, branch in (("refs/tags/v1", "tagged"), (f"{root.commit}^{{tree}}", "tree")):
        oid = run([*git, "rev-parse", src], text=True).stdout.strip()
        run([*git, "update-ref", f"refs/remotes/origin/{branch}", oid])
    tips = reader.list_tips("refs/remotes/origin/")
    assert list(tips) == [f"refs/remotes/origin/{b}" for b in ("main", "tagged", "tree")]
    assert [kind for _, kind in tips.values()] == ["commit", "tag", "tree"]
    assert tips["refs/remotes/origin/main"][0] == root.commit
    assert reader.list_refs("refs/remotes/origin/") == {n: oid for n, (oid, _) in tips.items()}
    commit_of = partial(reader.tip_commit, tips)
    assert commit_of("refs/remotes/origin/main") == root.commit
    assert commit_of("refs/remotes/origin/tagged") == root.commit
    assert commit_of("refs/remotes/origin/tree") is None
    assert commit_of("refs/remotes/origin/none") is None


@pytest.fixture
def local_remote(tmp_path: Path) -> str:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    return str(bare)


def test_is_ancestor_and_resolve(local_remote: str, tmp_path: Path) -> None:
    mirror = Mirror.open(tmp_path / "m", local_remote)
    a = commit_files(mirror.path, None, {"a": b"1"}, "a", BOT).commit
    b = commit_files(mirror.path, a, {"b": b"2"}, "b", BOT).commit
    c = commit_files(mirror.path, a, {"c": b"3"}, "c", BOT).commit
    table = [(a, b, True), (b, a, False), (a, a, True), (b, c, False), (c, b, False)]
    assert [mirror.is_ancestor(x, y) for x, y, _ in table] == [want for *_, want in table]
    assert mirror.resolve("refs/heads/nope") is None
    with pytest.raises(GitError):
        mirror.is_ancestor(a, "refs/heads/nope")
    with pytest.raises(GitError):
        mirror.resolve("--upload-pack=touch x")


def test_log_filters_paths_and_parses_trailers(local_remote: str, tmp_path: Path) -> None:
    mirror = Mirror.open(tmp_path / "m", local_remote)
    msg = compose_message(
        "east changed", "", {"Gitfleet-Source": "abc", "Gitfleet-Placement": ["web", "db"]}
    )
    first = commit_files(mirror.path, None, {"clusters/east/x.yaml": b"1"}, msg, BOT)
    second = commit_files(mirror.path, first.commit, {"clusters/west/x.yaml": b"1"}, "west", BOT)
    mirror.update_ref("refs/heads/out", second.commit, None)
    entries = mirror.log("refs/heads/out", paths=["clusters/east"])
    assert [e.commit for e in entries] == [first.commit]
    assert entries[0].trailers == {"Gitfleet-Source": ["abc"], "Gitfleet-Placement": ["web", "db"]}
    assert entries[0].author_email == BOT.email and entries[0].parents == ()
    assert [e.subject for e in mirror.log("refs/heads/out", max_count=1)] == ["west"]
    with pytest.raises(ValueError):
        mirror.log("refs/heads/out", paths=["../etc"])


def test_update_ref_is_compare_and_swap(local_remote: str, tmp_path: Path) -> None:
    mirror = Mirror.open(tmp_path / "m", local_remote)
    a = commit_files(mirror.path, None, {"a": b"1"}, "a", BOT).commit
    b = commit_files(mirror.path, a, {"b": b"2"}, "b", BOT).commit
    mirror.update_ref("refs/heads/x", a, None)
    with pytest.raises(GitError):
        mirror.update_ref("refs/heads/x", b, b)
    mirror.update_ref("refs/heads/x", b, a)
    mirror.update_ref("refs/heads/x", None, b)
    assert mirror.resolve("refs/heads/x") is None
    with pytest.raises(GitError):
        mirror.update_ref("x", a, None)


def test_maintain_folds_packs_and_keeps_history(local_remote: str, tmp_path: Path) -> None:
    mirror = Mirror.open(tmp_path / "m", local_remote)
    subprocess.run(["git", "-C", str(mirror.path), "config", "gc.autoPackLimit", "2"], check=True)
    parent = None
    for n in range(4):  # > fastimport.unpackLimit objects each, so every commit makes a pack
        files = {f"c{n}/f{i:03d}.yaml": f"{n}-{i}".encode() for i in range(120)}
        parent = commit_files(mirror.path, parent, files, f"c{n}", BOT).commit
    packs = lambda: len(list((mirror.path / "objects" / "pack").glob("*.pack")))  # noqa: E731
    assert packs() == 4
    mirror.update_ref("refs/heads/out", parent, None)
    mirror.maintain()
    assert packs() == 1
    assert [e.subject for e in mirror.log("refs/heads/out")] == ["c3", "c2", "c1", "c0"]


def test_maintain_starts_no_git_below_gc_thresholds(
    local_remote: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gc --auto` would do nothing below both of its thresholds, so it is not started; at
    the pack threshold plus one it is, and folds the packs."""
    mirror = Mirror.open(tmp_path / "m", local_remote)
    subprocess.run(["git", "-C", str(mirror.path), "config", "gc.auto", "1k"], check=True)
    subprocess.run(["git", "-C", str(mirror.path), "config", "gc.autoPackLimit", "3"], check=True)
    parent = None
    for n in range(3):  # > fastimport.unpackLimit objects each, so every commit makes a pack
        files = {f"c{n}/f{i:03d}.yaml": f"{n}-{i}".encode() for i in range(120)}
        parent = commit_files(mirror.path, parent, files, f"c{n}", BOT).commit
    mirror.update_ref("refs/heads/out", parent, None)
    packs = lambda: len(list((mirror.path / "objects" / "pack").glob("*.pack")))  # noqa: E731
    started: list[list[str]] = []
    real = gitcmd.subprocess.run

    def counting(argv: list[str], *args: Any, **kwargs: Any) -> Any:
        started.append(argv)
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(gitcmd.subprocess, "run", counting)
    mirror.maintain()  # reads the settings once
    mirror.maintain()
    assert packs() == 3 and not [argv for argv in started if "gc" in argv]
    assert len(started) == 1  # `git config`, once
    assert mirror._gc_limits == (1024, 3)  # as git reads "1k"
    files = {f"c4/f{i:03d}.yaml": f"4-{i}".encode() for i in range(120)}
    commit_files(mirror.path, parent, files, "c4", BOT)
    assert packs() == 4
    mirror.maintain()
    assert [argv for argv in started if "gc" in argv] and packs() == 1


def test_fetch_leaves_maintenance_to_the_caller_when_asked(
    local_remote: str, tmp_path: Path
) -> None:
    """`git fetch` starts `maintenance run --auto` (here: `gc.autoPackLimit=1` makes it repack
    the fetched packs into one); `maintenance=False` does not (the hub runs `Mirror.maintain`
    after each pass)."""
    mirror = Mirror.open(tmp_path / "m", local_remote)
    settings = (("fetch.unpackLimit", "1"), ("gc.autoPackLimit", "1"), ("gc.autoDetach", "false"))
    for key, value in settings:
        subprocess.run(["git", "-C", str(mirror.path), "config", key, value], check=True)
    remote, parent = Path(local_remote), None

    def packs_after_fetch(n: int, maintenance: bool) -> int:
        nonlocal parent
        files = {f"c{n}/f{i}.yaml": f"{n}-{i}".encode() for i in range(5)}
        parent = commit_files(remote, parent, files, f"c{n}", BOT).commit
        git(remote, "update-ref", "refs/heads/main", parent)
        mirror.fetch([MAIN], maintenance=maintenance)
        assert mirror.resolve(TRACKING) == parent
        return len(list((mirror.path / "objects" / "pack").glob("*.pack")))

    assert [packs_after_fetch(n, maintenance=False) for n in range(3)] == [1, 2, 3]
    assert packs_after_fetch(3, maintenance=True) == 1


def test_reopen_rules(local_remote: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    Mirror.open(cache, local_remote)
    assert Mirror.open(cache, local_remote).path == cache
    with pytest.raises(GitError, match="mirror of"):
        Mirror.open(cache, str(tmp_path / "other.git"))
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "file").write_text("x")
    with pytest.raises(GitError, match="not a gitfleet mirror"):
        Mirror.open(tmp_path / "junk", local_remote)


def test_mirror_inside_a_working_tree_stays_private(local_remote: str, tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    subprocess.run(["git", "init", "-q", str(outer)], check=True)
    mirror = Mirror.open(outer / "cache" / "m", local_remote)
    result = commit_files(mirror.path, None, {"a": b"1"}, "a", BOT, ref="refs/heads/out")
    assert mirror.resolve("refs/heads/out") == result.commit
    assert git(outer, "for-each-ref") == ""


def test_relative_local_path_is_made_absolute(local_remote: str, tmp_path: Path) -> None:
    mirror = Mirror.open(tmp_path / "m", "remote.git", base=tmp_path)
    assert mirror.url == str(tmp_path / "remote.git")
    assert mirror.fetch([MAIN]).missing == ("refs/heads/main",)


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://github.com/o/r.git", "https"),
        ("https://user:token@github.com/o/r.git", "https"),
        ("ssh://git@host:22/srv/r.git", "ssh"),
        ("git@github.com:o/r.git", "scp"),
        ("host.example:r.git", "scp"),
        ("git://127.0.0.1:9418/r.git", "git"),
        ("git://localhost/r.git", "git"),
        ("git://[::1]/r.git", "git"),
        ("file:///srv/r.git", "file"),
        ("/srv/r.git", "file"),
        ("./rel/r.git", "file"),
    ],
)
def test_accepted_urls(url: str, kind: str) -> None:
    assert check_url(url).kind == kind


@pytest.mark.parametrize(
    "url",
    [
        "ext::sh -c touch% /tmp/gitfleet-pwned",
        "fd::0",
        "fd::17/r",
        "foo::https://host/r",
        "-oProxyCommand=touch /tmp/gitfleet-pwned",
        "--upload-pack=touch /tmp/x",
        "ssh://-oProxyCommand=touch%20x/r",
        "ssh://-user@host/r",
        "-git@host:r",
        "host:-r",
        "http://host/r.git",
        "ftp://host/r.git",
        "git://example.com/r.git",
        "git://10.0.0.1/r.git",
        "https://host/r\nevil",
        "https://host/ r",
        "",
        " /srv/r",
    ],
)
def test_refused_urls(url: str, tmp_path: Path) -> None:
    with pytest.raises(GitError, match="refused remote"):
        check_url(url)
    with pytest.raises(GitError):
        Mirror.open(tmp_path / "m", url)
    assert not (tmp_path / "m").exists()


def test_allow_list_blocks_helpers_even_past_admission(tmp_path: Path) -> None:
    planted = tmp_path / "pwned"
    forged = RemoteURL(f"ext::sh -c touch% {planted}", "file")
    mirror = Mirror(tmp_path, forged)
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path)], check=True)
    with pytest.raises(GitError):
        mirror.fetch([MAIN])
    assert not planted.exists()


def test_credentials_are_redacted(tmp_path: Path) -> None:
    url = f"https://user:s3cr3t@127.0.0.1:{free_port()}/fleet.git"
    mirror = Mirror.open(tmp_path / "m", url, timeout=20)
    assert "s3cr3t" not in mirror.url
    with pytest.raises(GitError) as failure:
        mirror.fetch([MAIN])
    assert "s3cr3t" not in str(failure.value) and "***@127.0.0.1" in str(failure.value)
    with pytest.raises(GitError) as refused:
        check_url("ftp://user:s3cr3t@host/r")
    assert "s3cr3t" not in str(refused.value)
    assert "s3cr3t" not in git(tmp_path / "m", "config", "--list")

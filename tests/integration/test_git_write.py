"""gitwrite and trailers on real temporary repositories: fast-import commits without a working
tree, no-op detection (no commit, no object), deletes, path refusals, quoting, ref
compare-and-swap, blob ids, and trailer round trips checked against `git interpret-trailers`."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from gitfleet.repo.faststream import commit_and_tree
from gitfleet.repo.gitcmd import GitError
from gitfleet.repo.gitwrite import (
    CommitResult,
    Identity,
    PathError,
    blob_id,
    commit_files,
    replace_tree,
)
from gitfleet.repo.trailers import compose_message, format_trailers, parse_trailers

BOT = Identity("gitfleet-bot", "bot@gitfleet.invalid")
WHEN = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
BASE = {
    "clusters/east/app/cm.yaml": b"kind: ConfigMap\n",
    "clusters/east/app/deploy.yaml": b"kind: Deployment\n",
    "clusters/west/app/cm.yaml": b"kind: ConfigMap\n",
    "state/placements.yaml": b"snapshots: []\n",
}

BASE_LISTING = {path: (blob_id(data), len(data)) for path, data in BASE.items()}
"""The base commit's files as the hub records them (`commit_files(known=...)`)."""


def git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), *args], input=stdin, check=True, capture_output=True
    )
    return out.stdout.decode("utf-8", "surrogateescape").strip()


def files_of(repo: Path, commit: str) -> dict[str, str]:
    listing = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "-z", commit], check=True, capture_output=True
    ).stdout.decode()
    return {
        rec.split("\t", 1)[1]: git(repo, "cat-file", "blob", rec.split()[2])
        for rec in listing.split("\0")
        if rec
    }


def object_count(repo: Path) -> int:
    stats = dict(line.split(": ") for line in git(repo, "count-objects", "-v").splitlines())
    return int(stats["count"]) + int(stats["in-pack"])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "out.git"
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


@pytest.fixture
def base(repo: Path) -> CommitResult:
    return commit_files(repo, None, BASE, "base", BOT, ref="refs/heads/out", date=WHEN)


def test_root_commit_records_files_author_date_and_ref(repo: Path, base: CommitResult) -> None:
    assert base.changed
    assert files_of(repo, base.commit) == {k: v.decode().strip() for k, v in BASE.items()}
    assert git(repo, "rev-parse", "refs/heads/out") == base.commit
    assert git(repo, "rev-parse", f"{base.commit}^{{tree}}") == base.tree
    shown = git(repo, "log", "-1", "--format=%an|%ae|%cn|%at|%s", base.commit)
    assert shown == f"gitfleet-bot|bot@gitfleet.invalid|gitfleet-bot|{int(WHEN.timestamp())}|base"
    assert git(repo, "for-each-ref", "refs/gitfleet") == ""  # no scratch ref left behind


def test_same_changes_give_same_tree_and_commit(tmp_path: Path) -> None:
    results = []
    for name in ("one.git", "two.git"):
        subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / name)], check=True)
        results.append(commit_files(tmp_path / name, None, BASE, "base", BOT, date=WHEN))
    assert results[0] == results[1]


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"clusters/east/app/cm.yaml": b"kind: ConfigMap\n"},
        {"clusters/gone.yaml": None},
        {"clusters/east/app/cm.yaml": b"kind: ConfigMap\n", "nothing/here.yaml": None},
    ],
)
@pytest.mark.parametrize("listed", [False, True], ids=["looked-up", "known"])
def test_no_op_writes_no_commit_and_no_object(
    repo: Path, base: CommitResult, changes: dict[str, bytes | None], listed: bool
) -> None:
    before = object_count(repo)
    known = BASE_LISTING if listed else None
    result = commit_files(
        repo, base.commit, changes, "again", BOT, ref="refs/heads/out", known=known
    )
    assert result == CommitResult(base.commit, base.tree, changed=False)
    assert object_count(repo) == before
    assert git(repo, "rev-parse", "refs/heads/out") == base.commit


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (  # deleting the last file of a directory prunes the directory
            {"clusters/west/app/cm.yaml": None},
            {"clusters/east/app/cm.yaml", "clusters/east/app/deploy.yaml", "state/placements.yaml"},
        ),
        ({"clusters/east": None}, {"clusters/west/app/cm.yaml", "state/placements.yaml"}),
        (
            {"state/placements.yaml": b"v2\n", "state/new/one.yaml": b"1\n", "clusters": None},
            {"state/placements.yaml", "state/new/one.yaml"},
        ),
        (  # a file may replace a directory
            {"clusters/east/app": b"file now\n"},
            {
                "clusters/east/app",
                "clusters/west/app/cm.yaml",
                "state/placements.yaml",
            },
        ),
    ],
)
@pytest.mark.parametrize("listed", [False, True], ids=["looked-up", "known"])
def test_changes_and_deletes(
    repo: Path,
    base: CommitResult,
    changes: dict[str, bytes | None],
    expected: set[str],
    listed: bool,
) -> None:
    known = BASE_LISTING if listed else None
    result = commit_files(
        repo, base.commit, changes, "edit", BOT, ref="refs/heads/out", known=known
    )
    assert result.changed and result.commit != base.commit
    assert set(files_of(repo, result.commit)) == expected
    assert git(repo, "rev-parse", f"{result.commit}^") == base.commit
    assert git(repo, "rev-parse", "refs/heads/out") == result.commit


def test_unchanged_subtrees_are_reused(repo: Path, base: CommitResult) -> None:
    result = commit_files(repo, base.commit, {"state/placements.yaml": b"v2\n"}, "edit", BOT)
    assert git(repo, "rev-parse", f"{result.commit}:clusters") == git(
        repo, "rev-parse", f"{base.commit}:clusters"
    )


@pytest.mark.parametrize(
    "path",
    [
        "",
        "/etc/passwd",
        "../outside.yaml",
        "a/../b.yaml",
        "a//b.yaml",
        "./a.yaml",
        ".git/config",
        "clusters/.hidden/x.yaml",
        "a\nb.yaml",
        "a\rb.yaml",
        "a\0b.yaml",
        "a\\b.yaml",
        "trailing/",
    ],
)
def test_path_refusals(repo: Path, path: str) -> None:
    with pytest.raises(PathError):
        commit_files(repo, None, {path: b"x"}, "bad", BOT)
    with pytest.raises(PathError):
        replace_tree(repo, None, {path: b"x"}, "bad", BOT)


def test_file_and_directory_at_once_is_refused(repo: Path) -> None:
    with pytest.raises(PathError, match="a file and a directory"):
        commit_files(repo, None, {"a": b"1", "a/b.yaml": b"2"}, "bad", BOT)


@pytest.mark.parametrize(
    "name",
    [
        '"quoted".yaml',
        "with space.yaml",
        "café/ünï.yaml",
        "tab\there.yaml",
        "colon:name.yaml",
        "-dash",
    ],
)
def test_unusual_names_round_trip(repo: Path, name: str) -> None:
    result = commit_files(repo, None, {name: b"data\n"}, "names", BOT)
    assert files_of(repo, result.commit) == {name: "data"}


def test_replace_tree_sends_only_changed_blobs(repo: Path) -> None:
    files = {f"clusters/c{n:02d}/app/cm.yaml": f"n: {n}\n".encode() for n in range(40)}
    first = replace_tree(repo, None, files, "all", BOT, ref="refs/heads/out")
    before = object_count(repo)
    edited = {**files, "clusters/c07/app/cm.yaml": b"n: seven\n"}
    del edited["clusters/c09/app/cm.yaml"]
    second = replace_tree(repo, first.commit, edited, "one", BOT, ref="refs/heads/out")
    # 1 blob + trees c07/app, c07, clusters, root + 1 commit; c09 is gone without new objects
    assert object_count(repo) - before == 6
    assert files_of(repo, second.commit) == {k: v.decode().strip() for k, v in edited.items()}
    again = replace_tree(repo, second.commit, edited, "noop", BOT, ref="refs/heads/out")
    assert again == CommitResult(second.commit, second.tree, changed=False)


def test_replace_tree_removes_foreign_entries(tmp_path: Path) -> None:
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / ".gitattributes").write_text("* text\n")
    (work / "run.sh").write_text("#!/bin/sh\n")
    (work / "run.sh").chmod(0o755)
    git(work, "add", "-A")
    git(work, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x")
    result = replace_tree(work, "HEAD", {"run.sh": b"#!/bin/sh\n"}, "own it", BOT)
    assert result.changed
    assert git(work, "ls-tree", "-r", result.commit).split()[:1] == ["100644"]
    assert set(files_of(work, result.commit)) == {"run.sh"}
    assert (work / ".gitattributes").exists()  # the working tree is never touched


def test_ref_is_compare_and_swap(repo: Path, base: CommitResult) -> None:
    moved = commit_files(repo, base.commit, {"x.yaml": b"1"}, "other writer", BOT)
    git(repo, "update-ref", "refs/heads/out", moved.commit)
    with pytest.raises(GitError):
        commit_files(repo, base.commit, {"y.yaml": b"2"}, "stale", BOT, ref="refs/heads/out")
    with pytest.raises(GitError):
        commit_files(repo, None, {"y.yaml": b"2"}, "root", BOT, ref="refs/heads/out")
    assert git(repo, "rev-parse", "refs/heads/out") == moved.commit


@pytest.mark.parametrize("ref", ["-x", "refs/heads/a..b", "bad ref"])
def test_bad_refs_are_refused(repo: Path, base: CommitResult, ref: str) -> None:
    with pytest.raises(GitError):
        commit_files(repo, base.commit, {"y.yaml": b"2"}, "m", BOT, ref=ref)
    with pytest.raises(GitError):
        commit_files(repo, ref, {"y.yaml": b"2"}, "m", BOT)


@pytest.mark.parametrize(
    ("when", "raw"),
    [
        (WHEN, "+0000"),
        (WHEN.astimezone(timezone(timedelta(hours=5, minutes=30))), "+0530"),
        (WHEN.astimezone(timezone(timedelta(hours=-3))), "-0300"),
    ],
)
def test_dates_keep_their_offset(repo: Path, when: datetime, raw: str) -> None:
    result = commit_files(repo, None, {"a.yaml": b"1"}, "m", BOT, date=when)
    assert (
        git(repo, "cat-file", "-p", result.commit)
        .splitlines()[1]
        .endswith(f"{int(WHEN.timestamp())} {raw}")
    )


def test_naive_date_is_refused(repo: Path) -> None:
    with pytest.raises(ValueError, match="timezone"):
        commit_files(repo, None, {"a.yaml": b"1"}, "m", BOT, date=datetime(2026, 1, 1))


@pytest.mark.parametrize(
    ("name", "email"), [("a<b", "e@x"), ("n", "e>x"), ("line\nbreak", "e@x"), ("", "e@x")]
)
def test_identity_validation(name: str, email: str) -> None:
    with pytest.raises(ValueError):
        Identity(name, email)


@pytest.mark.parametrize("data", [b"", b"hello\n", bytes(range(256)) * 3])
def test_blob_id_matches_git_hash_object(repo: Path, data: bytes) -> None:
    assert blob_id(data) == git(repo, "hash-object", "--stdin", stdin=data)


TRAILER_CASES = [
    ({"Gitfleet-Source": "abc123"}, {"Gitfleet-Source": ["abc123"]}),
    (
        {"Gitfleet-Source": "abc", "Gitfleet-Placement": ["web", "db"], "Gitfleet-Clusters": "3"},
        {
            "Gitfleet-Source": ["abc"],
            "Gitfleet-Placement": ["web", "db"],
            "Gitfleet-Clusters": ["3"],
        },
    ),
    ({"Gitfleet-Note": "  padded  ", "Empty": []}, {"Gitfleet-Note": ["padded"]}),
]


@pytest.mark.parametrize(("trailers", "expected"), TRAILER_CASES)
def test_trailers_round_trip_and_match_git(
    repo: Path, trailers: dict[str, str | list[str]], expected: dict[str, list[str]]
) -> None:
    message = compose_message("reconcile: 2 clusters changed", "Body line.\n", trailers)
    assert parse_trailers(message) == expected
    parsed = git(repo, "interpret-trailers", "--parse", stdin=message.encode())
    assert parsed == format_trailers(trailers).strip()


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Subject: looks like a trailer\n", {}),
        ("subject\n\nbody text\n", {}),
        ("subject\n\nKey: v\nnot a trailer\n", {}),
        (
            "subject\n\nbody\n\nKey: v\n  continued\n# comment\nOther:x\n",
            {"Key": ["v continued"], "Other": ["x"]},
        ),
        ("subject\n\nKey: one\n\nbody after\n", {}),
        ("subject\n\nA: 1\nA: 2\n\n\n", {"A": ["1", "2"]}),
    ],
)
def test_parse_trailers(message: str, expected: dict[str, list[str]]) -> None:
    assert parse_trailers(message) == expected


@pytest.mark.parametrize(
    "trailers", [{"Bad Key": "v"}, {"-Lead": "v"}, {"Key": "two\nlines"}, {"": "v"}]
)
def test_format_trailers_refuses(trailers: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        format_trailers(trailers)


def test_compose_message_layout() -> None:
    message = compose_message("  two   words ", "", {"K": "v"})
    assert message == "two words\n\nK: v\n"
    with pytest.raises(ValueError):
        compose_message("   ")


def test_a_known_listing_is_trusted_without_asking_git(repo: Path, base: CommitResult) -> None:
    """The hub hands over its record of the commit it wrote; git is asked only for deletions
    of paths the record lacks."""
    data = b"changed\n"
    claimed = {**BASE_LISTING, "state/placements.yaml": (blob_id(data), len(data))}
    changes: dict[str, bytes | None] = {"state/placements.yaml": data}
    trusted = commit_files(repo, base.commit, changes, "edit", BOT, known=claimed)
    assert not trusted.changed
    assert commit_files(repo, base.commit, changes, "edit", BOT).changed


@pytest.mark.parametrize(
    "out",
    [b"", b"a" * 40 + b"\n", b"a" * 40 + b"\n100644 blob " + b"b" * 40 + b"\t\n", b"x\ny\nz\n"],
)
def test_unexpected_fast_import_output_is_an_error(out: bytes) -> None:
    with pytest.raises(GitError, match="unexpected fast-import output"):
        commit_and_tree(out)


def test_the_tree_comes_from_fast_import_itself(repo: Path, base: CommitResult) -> None:
    oid, tree = "a" * 40, "b" * 40
    assert commit_and_tree(f"{oid}\n040000 tree {tree}\t\n".encode()) == (oid, tree)
    assert base.tree == git(repo, "rev-parse", f"{base.commit}^{{tree}}")

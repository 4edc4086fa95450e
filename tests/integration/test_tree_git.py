"""GitTree on real temporary git repositories: listing, reading, refusals, parity with
WorkdirTree, ref validation and process cleanup."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gitfleet.repo import gitcmd, gitread
from gitfleet.repo.gitcmd import GitError
from gitfleet.repo.gitread import GitTree
from gitfleet.repo.workdir import WorkdirTree

FILES = {
    "fleet.yaml": b"apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\n",
    "clusters/east.yaml": b"east\n",
    "resources/app/cm.yaml": b"\xef\xbb\xbfbom and caf\xc3\xa9\n",
    "resources/bin.dat": bytes(range(256)) * 40,
    "resources/empty.yaml": b"",
    "scripts/run.sh": b"#!/bin/sh\n",
    ".github/workflows/ci.yaml": b"hidden\n",
}


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    out = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)
    return out.stdout.decode().strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "fleet"
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for rel, data in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    os.chmod(root / "scripts/run.sh", 0o755)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def test_git_and_workdir_trees_agree(repo: Path) -> None:
    with GitTree.open(repo, "main") as tree:
        work = WorkdirTree(repo)
        assert tree.files() == work.files() == sorted(p for p in FILES if not p.startswith("."))
        for path in tree.files():
            assert tree.read(path) == work.read(path) == FILES[path]
            assert tree.size(path) == work.size(path) == len(FILES[path])
        assert tree.errors == work.errors == []
        assert tree.commit == git(repo, "rev-parse", "HEAD")
        assert work.commit is None


def test_reads_a_commit_not_the_checkout(repo: Path) -> None:
    first = git(repo, "rev-parse", "HEAD")
    (repo / "clusters/east.yaml").write_bytes(b"changed\n")
    git(repo, "commit", "-qam", "second")
    (repo / "clusters/east.yaml").write_bytes(b"uncommitted\n")
    with GitTree.open(repo, first) as old, GitTree.open(repo, "main") as new:
        assert old.read("clusters/east.yaml") == b"east\n"
        assert new.read("clusters/east.yaml") == b"changed\n"
        assert old.commit == first


def test_symlink_and_submodule_are_refused(repo: Path) -> None:
    (repo / "resources/link.yaml").symlink_to("../fleet.yaml")
    git(repo, "add", "resources/link.yaml")
    blob = git(repo, "rev-parse", "HEAD")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{blob},vendor/sub")
    git(repo, "commit", "-q", "-m", "link and submodule")
    with GitTree.open(repo, "HEAD") as tree:
        assert "resources/link.yaml" not in tree.files()
        assert "vendor/sub" not in tree.files()
        messages = {e.file: e.message for e in tree.errors}
        assert "symbolic links are not allowed" in messages["resources/link.yaml"]
        assert "submodules are not supported" in messages["vendor/sub"]
        assert tree.read("fleet.yaml") == FILES["fleet.yaml"]
    assert not (repo / "vendor/sub").exists()


@pytest.mark.parametrize(
    ("ref", "fragment"),
    [
        ("--output=/tmp/x", "invalid revision '--output=/tmp/x': option-like"),
        ("-n", "invalid revision '-n'"),
        ("main..other", "invalid revision 'main..other': a range"),
        ("no-such-branch", "unknown revision 'no-such-branch'"),
        ("0" * 40, "unknown revision '0{40}'"),
    ],
)
def test_bad_refs(repo: Path, ref: str, fragment: str) -> None:
    with pytest.raises(GitError, match=fragment):
        GitTree.open(repo, ref)


def test_unlisted_paths_and_close(repo: Path) -> None:
    tree = GitTree.open(repo, "main")
    with pytest.raises(KeyError):
        tree.read(".github/workflows/ci.yaml")
    with pytest.raises(KeyError):
        tree.read("../outside")
    assert tree.read("fleet.yaml") == FILES["fleet.yaml"]
    proc = tree._objects._contents.proc
    assert proc is not None and proc.poll() is None
    tree.close()
    assert proc.poll() is not None
    tree.close()
    assert tree.read("clusters/east.yaml") == b"east\n"  # restarts on demand
    tree.close()


def test_bare_repository(repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    with GitTree.open(bare, "main") as tree:
        assert tree.read("clusters/east.yaml") == b"east\n"


def _record(mode: str, kind: str, oid: str, size: str, path: bytes) -> bytes:
    return f"{mode} {kind} {oid} {size:>7}\t".encode() + path


def test_a_listing_parsed_again_reuses_unchanged_records_and_equals_a_fresh_parse() -> None:
    """A hub lists its source tree every pass: records of the last listing are not parsed
    again, and the result is what parsing from nothing gives."""
    a, b, c = "a" * 40, "b" * 40, "c" * 40
    first = [
        _record("100644", "blob", a, "10", b"resources/a.yaml"),
        _record("120000", "blob", b, "4", b"resources/link"),
        _record("100644", "blob", c, "7", b".hidden/x.yaml"),
        _record("100644", "blob", b, "5", b"\xffbad.yaml"),
    ]
    second = [
        first[0],
        _record("100644", "blob", c, "11", b"resources/b.yaml"),  # added
        _record("100755", "blob", b, "4", b"resources/link"),  # a link became a file
        first[3],
    ]
    gitread._parse_listing(b"\0".join(first) + b"\0")
    kept = gitread._parse_listing(b"\0".join(second) + b"\0")
    assert set(gitread._RECORDS[0]) == set(second)  # only the last listing is kept
    gitread._RECORDS[0] = {}
    assert kept == gitread._parse_listing(b"\0".join(second) + b"\0")
    assert sorted(kept[0]) == ["resources/a.yaml", "resources/b.yaml", "resources/link"]
    assert [e.message for e in kept[1]] == ["file name is not valid UTF-8"]


A, B = "a" * 40, "b" * 64
PLAIN = [
    ("100644", "blob", A, "10", b"resources/a.yaml"),
    ("100755", "blob", B, "0", b"scripts/run-1.sh"),
    ("100664", "blob", A, "3", b"x.y/z_w+v=u@t,s~r:q"),
    ("100644", "blob", A, "1", b"a tab\tand spaces"),
]
NOT_PLAIN = {
    "a link": ("120000", "blob", A, "4", b"resources/link"),
    "a submodule": ("160000", "commit", A, "-", b"vendor/sub"),
    "a hidden file": ("100644", "blob", A, "1", b".hidden.yaml"),
    "a hidden folder": ("100644", "blob", A, "1", b"a/.git/config"),
    "a dot-dot component": ("100644", "blob", A, "1", b"a/../b"),
    "an empty component": ("100644", "blob", A, "1", b"a//b"),
    "a trailing slash": ("100644", "blob", A, "1", b"a/"),
    "an absolute path": ("100644", "blob", A, "1", b"/etc/passwd"),
    "a backslash": ("100644", "blob", A, "1", b"a\\b"),
    "a newline": ("100644", "blob", A, "1", b"a\nb"),
    "non-ASCII": ("100644", "blob", A, "1", "café.yaml".encode()),
    "not UTF-8": ("100644", "blob", A, "1", b"\xffbad.yaml"),
    "a duplicate": PLAIN[0],
    "a record inside a link's name": (
        "120000",
        "blob",
        A,
        "4",
        b"x100644 blob " + A.encode() + b"\ty",
    ),
}


def _listing(records: list[tuple[str, str, str, str, bytes]], sized: bool) -> bytes:
    """`ls-tree -r -z` output of `records`, with the size column (`-l`) or without."""
    out = [
        (f"{m} {k} {o} {s:>7}\t" if sized else f"{m} {k} {o}\t").encode() + path
        for m, k, o, s, path in records
    ]
    return b"\0".join(out) + b"\0"


def _record_by_record(raw: bytes, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as patch:
        patch.setattr(gitread, "_parse_plain", lambda raw: None)
        gitread._RECORDS[0] = {}
        return gitread._parse_listing(raw)


@pytest.mark.parametrize("case", [None, *NOT_PLAIN])
@pytest.mark.parametrize("sized", [True, False])
def test_a_plain_listing_parsed_in_bulk_equals_the_record_by_record_parse(
    case: str | None, sized: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listing of plain regular files is parsed by one expression over the whole text;
    anything else in it (links, submodules, refused or unusual paths, a record hidden in a
    name) makes the whole listing go record by record. Both give the same result."""
    raw = _listing([*PLAIN, *([NOT_PLAIN[case]] if case else [])], sized)
    bulk = gitread._parse_plain(raw)
    assert (bulk is None) == (case is not None)
    assert gitread._parse_listing(raw) == _record_by_record(raw, monkeypatch)
    if bulk is not None:
        assert bulk == {p.decode(): (o, int(s) if sized else -1) for _, _, o, s, p in PLAIN}
    assert gitread._parse_plain(b"") == {}


def test_a_tree_listed_without_sizes_reads_and_sizes_files_as_a_sized_one(repo: Path) -> None:
    """`sizes=False` (the hub's previous output after a restart) lists the same files and
    blob ids; a size is asked of git when wanted."""
    with GitTree.open(repo, "main") as sized, GitTree.open(repo, "main", sizes=False) as bare:
        assert bare.files() == sized.files()
        assert {p: bare.oid(p) for p in bare.files()} == {p: sized.oid(p) for p in sized.files()}
        assert {entry[1] for entry in bare.listing().values()} == {-1}
        for path in sized.files():
            assert bare.size(path) == sized.size(path) == len(FILES[path])
            assert bare.read(path) == FILES[path]


def _change(repo: Path, step: int) -> None:
    """One commit of a series: edits, additions, deletions, a file that becomes a folder, a
    symbolic link, a hidden file, a mode change."""
    root = repo
    if step == 0:
        (root / "clusters/east.yaml").write_bytes(b"east 2\n")
        (root / "clusters/west.yaml").write_bytes(b"west\n")
        (root / ".hidden.yaml").write_bytes(b"h\n")
        os.symlink("east.yaml", root / "clusters/link.yaml")
    elif step == 1:
        (root / "resources/empty.yaml").unlink()
        (root / "resources/empty.yaml").mkdir()
        (root / "resources/empty.yaml/inside.yaml").write_bytes(b"in\n")
        (root / "clusters/link.yaml").unlink()
        os.chmod(root / "scripts/run.sh", 0o644)
    else:
        (root / "resources/bin.dat").unlink()
        (root / "clusters/link.yaml").write_bytes(b"a file now\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"step {step}")


def test_open_since_lists_what_open_lists(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Listed from the tree before (only the changed paths), each commit's tree has the very
    listing, sizes, reads and refusals of a whole listing; the same commit shares the base's."""
    base = GitTree.open(repo, "main")
    refused = [["clusters/link.yaml"], [], []]  # the symbolic link, while there is one
    calls: list[list[str]] = []
    real = gitcmd.run_git

    def counted(repo_dir: Path, args: list[str], **kwargs: Any) -> Any:
        calls.append(args)
        return real(repo_dir, args, **kwargs)

    for step in range(3):
        _change(repo, step)
        calls.clear()
        monkeypatch.setattr(gitread, "run_git", counted)
        since = GitTree.open_since(repo, "main", base)
        monkeypatch.setattr(gitread, "run_git", real)
        whole = GitTree.open(repo, "main")
        assert dict(since.listing()) == dict(whole.listing()) and since.commit == whole.commit
        assert since.errors == whole.errors and since.files() == whole.files()
        assert [error.file for error in since.errors] == refused[step]
        assert [since.read(p) for p in since.files()] == [whole.read(p) for p in whole.files()]
        listed = [a for a in calls if a[0] == "ls-tree"]
        assert listed and all("--" in a for a in listed)  # never the whole tree
        for tree in (base, since, whole):
            tree.close()
        base = since
    again = GitTree.open_since(repo, "main", base)
    assert again.listing() is base.listing()


def test_open_since_falls_back_to_a_whole_listing(repo: Path) -> None:
    base = GitTree.open(repo, "main")
    gone = GitTree(repo, "0" * 40, {}, [])  # a base whose commit the repository lacks
    _change(repo, 0)
    for start in (None, gone, base):
        with GitTree.open_since(repo, "main", start) as tree, GitTree.open(repo, "main") as whole:
            assert dict(tree.listing()) == dict(whole.listing())
            assert tree.errors == whole.errors

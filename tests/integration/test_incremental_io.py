"""The incremental hub's I/O shortcuts on real repositories: the fast-import stream sends each
distinct content once, quoted paths stay exact, a listed GitTree reads like an ls-tree one, and
the plain renderer hands back the same documents for an unchanged blob and re-parses a changed
one."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from gitfleet.api.limits import DEFAULT_LIMITS
from gitfleet.repo.faststream import _stream, quote_path
from gitfleet.repo.gitread import GitTree
from gitfleet.repo.gitwrite import Identity, blob_id, commit_files
from renderers.base import RenderContext, Unit
from renderers.plain import PlainRenderer

WHO = Identity("t", "t@example.com")


def _repo(tmp: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", str(tmp / "r.git")], check=True)
    return tmp / "r.git"


def test_duplicate_contents_are_streamed_once_and_land_at_every_path(tmp_path: Path) -> None:
    files: dict[str, bytes | None] = {f"c{i}/same.yaml": b"a: 1\n" for i in range(5)}
    files["c0/other.yaml"] = b"b: 2\n"
    stream = _stream(None, files, "m", WHO, datetime(2026, 1, 1, tzinfo=UTC))
    assert stream.count(b"blob\nmark ") == 2
    repo = _repo(tmp_path)
    done = commit_files(repo, None, files, "m", WHO)
    with GitTree.open(repo, done.commit) as tree:
        assert tree.files() == sorted(files)
        assert {tree.oid(p) for p in files} == {blob_id(b"a: 1\n"), blob_id(b"b: 2\n")}


def test_quote_path_fast_path_matches_the_escaping_rules() -> None:
    assert quote_path("clusters/a-b/x.yaml") == b'"clusters/a-b/x.yaml"'
    assert quote_path('a"b\\c') == b'"a\\"b\\\\c"'
    assert quote_path("a\tb") == b'"a\\011b"'
    assert quote_path("ü") == b'"' + "ü".encode() + b'"'


def test_listed_tree_reads_like_an_opened_one(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    files = {"x.yaml": b"x: 1\n", "d/y.yaml": b"y: 2\n"}
    done = commit_files(repo, None, dict(files), "m", WHO)
    listing = {p: (blob_id(d), len(d)) for p, d in files.items()}
    with (
        GitTree.listed(repo, done.commit, listing) as listed,
        GitTree.open(repo, done.commit) as opened,
    ):
        assert listed.files() == opened.files()
        assert all(listed.read(p) == opened.read(p) == files[p] for p in files)
        assert all(listed.oid(p) == opened.oid(p) for p in files)


def test_plain_renderer_reuses_documents_of_an_unchanged_blob(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    first = commit_files(repo, None, {"a.yaml": b"kind: A\n", "b.yaml": b"kind: B\n"}, "m", WHO)
    second = commit_files(repo, first.commit, {"b.yaml": b"kind: C\n"}, "m", WHO)
    renderer, units = PlainRenderer(), [Unit("plain", "a.yaml"), Unit("plain", "b.yaml")]
    with GitTree.open(repo, first.commit) as one, GitTree.open(repo, second.commit) as two:
        docs1, _ = renderer.render(units, RenderContext(one, DEFAULT_LIMITS))
        docs2, _ = renderer.render(units, RenderContext(two, DEFAULT_LIMITS))
    assert docs2[0] is docs1[0]  # a.yaml unchanged: the very same document
    assert docs1[1].body == {"kind": "B"} and docs2[1].body == {"kind": "C"}

"""`GitOutputView` and `DirOutputView` on real trees: named reads, folder listings, and the same
refusals as a whole-tree read (links, hidden paths, '..', files that are not YAML)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gitfleet.repo.gitread import GitTree, list_paths
from gitfleet.repo.outputview import DirOutputView, GitOutputView

FILES = {
    "status/placements/web.yaml": b"web\n",
    "status/placements/web.yaml.orig": b"not yaml\n",
    "status/approvals/run-before-a.yaml": b"a\n",
    "status/approvals/ns/run-before-b.yaml": b"b\n",
    "clusters/c1/index.yaml": b"c1\n",
    "clusters/c1/web/index.yaml": b"c1 web\n",
    "clusters/c2/index.yaml": b"c2\n",
    "clusters/.hidden/index.yaml": b"hidden\n",
    "clusters/readme.txt": b"a file, not a folder\n",
}


def _tree(root: Path) -> Path:
    for path, data in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    (root / "status/clusters").mkdir(parents=True)
    os.symlink(root / "clusters/c1/index.yaml", root / "status/clusters/link.yaml")
    os.symlink(root / "clusters/c1", root / "clusters/c3")
    return root


@pytest.fixture
def git_view(tmp_path: Path) -> GitOutputView:
    repo = _tree(tmp_path / "repo")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)
    with GitTree.open(repo, "HEAD") as tree:
        commit = tree.commit
    assert commit is not None
    return GitOutputView(repo, commit)


def test_git_view_reads_named_files_as_a_whole_tree_read_sees_them(
    git_view: GitOutputView,
) -> None:
    wanted = [
        "status/placements/web.yaml",
        "clusters/c1/web/index.yaml",
        "status/clusters/link.yaml",  # a link: refused by GitTree, so never shown
        "clusters/.hidden/index.yaml",  # hidden: skipped by GitTree
        "clusters/c1/../c2/index.yaml",
        "status/placements/absent.yaml",
        "status/placements/web",  # a prefix of a file name is not the file
    ]
    assert git_view.read_many(wanted) == {
        "clusters/c1/web/index.yaml": b"c1 web\n",
        "status/placements/web.yaml": b"web\n",
    }
    assert git_view.list_files("status/approvals/") == [
        "status/approvals/ns/run-before-b.yaml",
        "status/approvals/run-before-a.yaml",
    ]
    assert git_view.list_dirs("clusters/") == ["c1", "c2"]  # not hidden, not the link
    assert git_view.list_dirs("nowhere/") == []
    assert git_view.list_files("../") == []


def test_list_paths_lists_many_paths_in_chunks(
    git_view: GitOutputView, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("gitfleet.repo.gitread._PATHS_PER_CALL", 2)
    repo, commit = git_view._repo_dir, git_view._commit
    paths = [f"clusters/{c}/index.yaml" for c in ("c1", "c2", "c3", "c4", "c5")]
    assert sorted(list_paths(repo, commit, paths)) == paths[:2]


def test_dir_view_reads_what_rglob_yaml_would(tmp_path: Path) -> None:
    view = DirOutputView(_tree(tmp_path / "out"))
    wanted = [
        "status/placements/web.yaml",
        "status/placements/web.yaml.orig",  # not YAML
        "status/clusters/link.yaml",  # a linked file: rglob lists it
        "clusters/c3/index.yaml",  # inside a linked folder: rglob does not go there
        "clusters/c1/../c2/index.yaml",
        "clusters/c1/index.yaml\0",
        "status/placements/absent.yaml",
    ]
    assert view.read_many(wanted) == {
        "status/clusters/link.yaml": b"c1\n",
        "status/placements/web.yaml": b"web\n",
    }
    assert view.list_files("status/approvals/") == [
        "status/approvals/ns/run-before-b.yaml",
        "status/approvals/run-before-a.yaml",
    ]
    assert view.list_dirs("clusters/") == [".hidden", "c1", "c2"]
    assert view.list_files("clusters/c3/") == []
    assert view.list_dirs("../") == []

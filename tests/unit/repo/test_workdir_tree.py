"""WorkdirTree: listing, hidden entries, symlink refusal (file, dir, loop, dangling), reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitfleet.repo.outdir import MARKER
from gitfleet.repo.tree import is_contained, relpath_problem
from gitfleet.repo.workdir import WorkdirTree


def make_repo(root: Path) -> Path:
    files = {
        "fleet.yaml": b"kind: Fleet\n",
        "clusters/a.yaml": b"a\n",
        "resources/app/cm.yaml": b"cm\n",
        ".git/config": b"x",
        ".github/workflows/ci.yaml": b"x",
        "resources/.hidden.yaml": b"x",
    }
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def add_file_link(root: Path) -> None:
    (root / "clusters/link.yaml").symlink_to(root / "clusters/a.yaml")


def add_dir_link(root: Path) -> None:
    (root / "resources/linked").symlink_to(root / "clusters", target_is_directory=True)


def add_loop(root: Path) -> None:
    (root / "resources/loop").symlink_to(root / "resources/loop")


def add_dangling(root: Path) -> None:
    (root / "resources/dangling.yaml").symlink_to(root / "nowhere.yaml")


def add_escape(root: Path) -> None:
    (root / "resources/passwd.yaml").symlink_to("../../../../../../etc/passwd")


def add_fifo(root: Path) -> None:
    os.mkfifo(root / "resources/pipe.yaml")


def add_hidden_link(root: Path) -> None:
    (root / ".link").symlink_to(root / "fleet.yaml")


@pytest.mark.parametrize(
    ("mutate", "refused", "message"),
    [
        (add_file_link, "clusters/link.yaml", "symbolic links are not allowed"),
        (add_dir_link, "resources/linked", "symbolic links are not allowed"),
        (add_loop, "resources/loop", "symbolic links are not allowed"),
        (add_dangling, "resources/dangling.yaml", "symbolic links are not allowed"),
        (add_escape, "resources/passwd.yaml", "symbolic links are not allowed"),
        (add_fifo, "resources/pipe.yaml", "not a regular file"),
        (add_hidden_link, None, None),
    ],
)
def test_refused_entries(tmp_path: Path, mutate, refused: str | None, message: str | None) -> None:
    root = make_repo(tmp_path)
    mutate(root)
    tree = WorkdirTree(root)
    assert tree.files() == ["clusters/a.yaml", "fleet.yaml", "resources/app/cm.yaml"]
    if refused is None:
        assert tree.errors == []
    else:
        [error] = tree.errors
        assert (error.file, error.line, error.field) == (refused, None, "")
        assert message in error.message and refused in str(error)
    assert tree.commit is None


def test_read_and_size(tmp_path: Path) -> None:
    tree = WorkdirTree(make_repo(tmp_path))
    assert tree.read("clusters/a.yaml") == b"a\n"
    assert tree.size("resources/app/cm.yaml") == 3
    for unlisted in (".git/config", "../x", "/etc/passwd", "clusters"):
        with pytest.raises(KeyError):
            tree.read(unlisted)


def test_link_planted_after_walk_is_not_followed(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    tree = WorkdirTree(root)
    (root / "clusters/a.yaml").unlink()
    (root / "clusters/a.yaml").symlink_to("/etc/hostname")
    with pytest.raises(OSError):  # O_NOFOLLOW refuses the link, wherever it points
        tree.read("clusters/a.yaml")
    (root / "clusters/a.yaml").unlink()
    (root / "clusters/a.yaml").symlink_to(root / "fleet.yaml")
    with pytest.raises(OSError):  # inside too
        tree.read("clusters/a.yaml")


def test_directory_link_planted_after_walk_is_not_followed(tmp_path: Path) -> None:
    """A directory on a listed file's path swapped for a link to a copy of itself (outside,
    then inside the root): the read refuses it rather than reading the copy's file."""
    root = make_repo(tmp_path / "fleet")
    tree = WorkdirTree(root)
    for target in (tmp_path / "outside", root / "elsewhere"):
        target.mkdir()
        (target / "cm.yaml").write_bytes(b"not the fleet's\n")
        app = root / "resources/app"
        if app.is_symlink():
            app.unlink()
        else:
            (app / "cm.yaml").unlink()
            app.rmdir()
        app.symlink_to(target, target_is_directory=True)
        with pytest.raises(OSError):
            tree.read("resources/app/cm.yaml")
    assert tree.read("clusters/a.yaml") == b"a\n"


def test_reads_hold_no_descriptor(tmp_path: Path) -> None:
    """Every descriptor a walk or a read opens is closed again, a failed read's too."""
    root = make_repo(tmp_path)
    before = len(os.listdir("/proc/self/fd"))
    tree = WorkdirTree(root)
    for _ in range(50):
        assert tree.read("resources/app/cm.yaml") == b"cm\n"
    (root / "clusters/a.yaml").unlink()
    for _ in range(50):
        with pytest.raises(OSError):
            tree.read("clusters/a.yaml")
    assert len(os.listdir("/proc/self/fd")) == before


def test_output_folder_is_skipped(tmp_path: Path) -> None:
    """A folder holding the marker of `gitfleet render --out` is output, never input (a marker
    that is a link counts too)."""
    root = make_repo(tmp_path)
    (root / "out/clusters").mkdir(parents=True)
    (root / "out" / MARKER).write_bytes(b"")
    (root / "out/clusters/x.yaml").write_bytes(b"x\n")
    (root / "linked/clusters").mkdir(parents=True)
    (root / "linked" / MARKER).symlink_to(root / "fleet.yaml")
    tree = WorkdirTree(root)
    assert tree.files() == ["clusters/a.yaml", "fleet.yaml", "resources/app/cm.yaml"]


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("a/b.yaml", None),
        ("", "empty"),
        ("/etc/passwd", "absolute"),
        ("../x", "'..'"),
        ("a/../../x", "'..'"),
        ("a//b", "empty"),
        ("./a", "'.'"),
        ("a/.git/x", "hidden"),
        ("a\\b", "backslash"),
        ("a\0b", "NUL"),
    ],
)
def test_relpath_problem(path: str, problem: str | None) -> None:
    found = relpath_problem(path)
    assert (found is None) if problem is None else (problem in (found or ""))


def test_containment_uses_resolved_paths(tmp_path: Path) -> None:
    fleet, evil = tmp_path / "fleet", tmp_path / "fleet-evil"
    fleet.mkdir()
    evil.mkdir()
    assert is_contained(fleet, fleet / "a" / "b")
    assert not is_contained(fleet, evil / "x")
    assert not is_contained(fleet, fleet / ".." / "fleet-evil")
    (fleet / "out").symlink_to(evil)
    assert not is_contained(fleet, fleet / "out" / "x")

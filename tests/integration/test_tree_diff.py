"""`GitTree.open_since` through a shared `ObjectReader` (`gitfleet.repo.treediff`: trees
compared object by object, no `diff-tree` / `ls-tree`) lists exactly what it lists through git,
on random edits of a real repository: files added, changed, removed, made executable, folders
removed or replaced by a file (and back), symbolic links, submodule entries, hidden and
non-UTF-8 names; and above the patch limit both list the whole tree."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from gitfleet.repo import gitread
from gitfleet.repo.gitread import GitTree
from gitfleet.repo.objects import ObjectReader
from tests.helpers.gitrepo import git, init_work

FOLDERS = ["", "a/", "a/b/", "c/", ".hidden/", "d/e/f/"]


def _listing(tree: GitTree) -> dict[str, tuple[str, int]]:
    return {path: (tree.oid(path), tree.size(path)) for path in tree.files()}


def _edit(work: Path, rng: random.Random, step: int) -> None:
    """One random change to the working tree (then committed by the caller)."""
    files = [
        p for p in work.rglob("*") if ".git" not in p.parts and (p.is_file() or p.is_symlink())
    ]
    roll = rng.random()
    if roll < 0.35 or not files:
        target = work / f"{rng.choice(FOLDERS)}f{rng.randrange(6)}.yaml"
        for parent in reversed(target.relative_to(work).parents):
            if (work / parent).is_file():  # a file where a folder goes: it goes
                (work / parent).unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_dir():
            subprocess.run(["rm", "-rf", str(target)], check=True)
        target.write_text(f"step: {step}\n")
    elif roll < 0.5:
        rng.choice(files).unlink()
    elif roll < 0.6:
        victim = rng.choice(files)
        if not victim.is_symlink():
            victim.chmod(0o755)
    elif roll < 0.7:
        folder = work / rng.choice(["a", "c", "d/e"])
        subprocess.run(["rm", "-rf", str(folder)], check=True)
        if rng.random() < 0.5:
            folder.write_text("now a file\n")  # a folder replaced by a file
    elif roll < 0.8:
        link = work / f"link{rng.randrange(3)}.yaml"
        if not link.exists() and not link.is_symlink():
            link.symlink_to("f0.yaml")
    elif roll < 0.9:
        name = f"sub{rng.randrange(2)}"
        git(work, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},{name}")
    else:
        if not (work / "c").exists():
            (work / "c").mkdir()
        if (work / "c").is_dir():
            (work / "c" / b"caf\xe9.yaml".decode("utf-8", "surrogateescape")).write_text("x\n")


@pytest.mark.parametrize("seed", range(4))
def test_walked_listing_equals_gits(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    calls: list[str] = []
    real_run = gitread.run_git

    def run_git(repo: Path, args: list[str], **kwargs: object) -> object:
        calls.append(args[0])
        return real_run(repo, args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gitread, "run_git", run_git)
    work = init_work(tmp_path / "w")
    (work / "f0.yaml").write_text("start\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "start")
    repo = work / ".git"
    reader = ObjectReader(repo)
    walked = asked = GitTree.open(repo, "HEAD")
    walks = 0
    for step in range(40):
        _edit(work, rng, step)
        git(work, "add", "-A")
        git(work, "commit", "-q", "--allow-empty", "-m", f"step {step}")
        head = git(work, "rev-parse", "HEAD")
        calls.clear()
        walked = GitTree.open_since(repo, head, walked, reader)
        # compared through the reader: no git process (a non-UTF-8 name: the whole listing)
        assert calls in ([], ["ls-tree"]), calls
        walks += not calls
        asked = GitTree.open_since(repo, head, asked)
        whole = GitTree.open(repo, head)
        assert _listing(walked) == _listing(asked) == _listing(whole), step
        assert walked.errors == asked.errors == whole.errors, step
        for tree in (asked, whole):
            tree.close()
    assert walks > 30
    reader.close()


def test_many_changes_list_the_whole_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = init_work(tmp_path / "w")
    (work / "a").mkdir()
    (work / "a" / "one.yaml").write_text("1\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "one")
    repo = work / ".git"
    reader = ObjectReader(repo)
    base = GitTree.open(repo, "HEAD")
    for k in range(5):
        (work / "a" / f"n{k}.yaml").write_text(f"{k}\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "many")
    monkeypatch.setattr(gitread, "_PATCH_LIMIT", 3)
    wholes: list[str] = []
    real = GitTree._listed_whole.__func__  # type: ignore[attr-defined]

    def listed_whole(cls: type[GitTree], *args: object, **kwargs: object) -> GitTree:
        wholes.append("whole")
        return real(cls, *args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(GitTree, "_listed_whole", classmethod(listed_whole))
    tree = GitTree.open_since(repo, "HEAD", base, reader)
    assert wholes == ["whole"] and len(tree.files()) == 6
    reader.close()


def test_old_modes_compare_as_git_reads_them(tmp_path: Path) -> None:
    """A tree written by an old tool with a file mode git no longer writes (100664, 100600):
    git reads it as 100644, so a change of those bits alone is no change, and the listing is
    git's."""
    work = init_work(tmp_path / "w")
    (work / "f.yaml").write_text("x\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "one")
    repo = work / ".git"
    blob = git(work, "rev-parse", "HEAD:f.yaml")
    base = GitTree.open(repo, "HEAD")
    reader = ObjectReader(repo)
    for mode in (b"100664", b"100600", b"100644"):
        raw = mode + b" f.yaml\0" + bytes.fromhex(blob) + mode + b" g.yaml\0" + bytes.fromhex(blob)
        tree = (
            subprocess.run(
                [
                    "git",
                    "-C",
                    str(work),
                    "hash-object",
                    "-t",
                    "tree",
                    "-w",
                    "--literally",
                    "--stdin",
                ],
                input=raw,
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .strip()
        )
        commit = git(work, "commit-tree", tree, "-p", "HEAD", "-m", mode.decode())
        git(work, "update-ref", "HEAD", commit)
        walked = GitTree.open_since(repo, commit, base, reader)
        asked = GitTree.open_since(repo, commit, base)
        assert _listing(walked) == _listing(asked) == _listing(GitTree.open(repo, commit))
        assert walked.errors == asked.errors
        base = walked
    reader.close()

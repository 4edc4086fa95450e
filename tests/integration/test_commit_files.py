"""`signatures.CommitFiles` on a real repository: files at many commits through one
`cat-file --batch` process; a missing path or a folder is None; a process that stops is a
GitError (never "no file"), and the next read starts a new one."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from gitfleet.repo.gitcmd import GitError
from gitfleet.repo.signatures import CommitFiles, LinkedFile
from tests.helpers.gitrepo import git


@pytest.fixture
def commits(tmp_path: Path) -> tuple[Path, list[str]]:
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    made = []
    for n in range(3):
        (repo / "report.yaml").write_text(f"n: {n}\n")
        (repo / "dir").mkdir(exist_ok=True)
        (repo / "dir" / "f").write_text("x\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"c{n}")
        made.append(git(repo, "rev-parse", "HEAD"))
    return repo, made


def test_reads_at_many_commits(commits: tuple[Path, list[str]]) -> None:
    repo, made = commits
    with CommitFiles(repo) as files:
        assert [files.read(c, "report.yaml") for c in made] == [b"n: 0\n", b"n: 1\n", b"n: 2\n"]
        assert files.read(made[0], "absent.yaml") is None and files.read(made[0], "dir") is None


def test_a_stopped_process_is_replaced(commits: tuple[Path, list[str]]) -> None:
    """A process found ended before a read is replaced; one that ends during a read is an
    error (its pipe closes) and the next read starts another."""
    repo, made = commits
    with CommitFiles(repo) as files:
        assert files.read(made[0], "report.yaml") == b"n: 0\n"
        (pid,) = files._objects.pids
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        assert files.read(made[1], "report.yaml") == b"n: 1\n"  # a new process
        assert files._objects.pids != (pid,)
        proc = files._objects._contents.proc
        assert proc is not None and proc.stdout is not None
        proc.stdout.close()  # the answer can no longer be read: an error, then a new one
        with pytest.raises(GitError, match="stopped"):
            files.read(made[1], "report.yaml")
        assert files.read(made[2], "report.yaml") == b"n: 2\n"


def test_links_nested_files_and_submodules(commits: tuple[Path, list[str]]) -> None:
    """A nested file is read through its folder's tree; a symbolic link is LinkedFile (never
    followed, at the top or in a folder); a submodule or a path under a file is no file."""
    repo, made = commits
    (repo / "link.yaml").symlink_to("report.yaml")
    (repo / "dir" / "inner").symlink_to("f")
    (repo / "dir" / "exec.sh").write_text("run\n")
    (repo / "dir" / "exec.sh").chmod(0o755)
    git(repo, "add", "-A")
    sub = git(repo, "rev-parse", "HEAD")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sub},vendor")
    git(repo, "commit", "-qm", "links")
    head = git(repo, "rev-parse", "HEAD")
    with CommitFiles(repo) as files:
        assert files.read(head, "dir/f") == b"x\n" and files.read(head, "dir/exec.sh") == b"run\n"
        for path in ("link.yaml", "dir/inner"):
            with pytest.raises(LinkedFile, match=f"{path} at {head[:12]} is a symbolic link"):
                files.read(head, path)
        assert files.read(head, "vendor") is None and files.read(head, "dir/f/x") is None
        assert files.read(head, "dir/absent") is None and files.read(head, "nodir/f") is None
        assert files.read(made[0], "report.yaml") == b"n: 0\n"  # the process goes on

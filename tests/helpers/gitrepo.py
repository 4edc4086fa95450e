"""Real Git for test fixtures: a `git` runner with a fixed author, bare remotes, working
repositories that commit and push, and readers of the output branch on a bare remote.

Called by the integration tests' fixtures (see `tests/helpers/__init__.py`).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

OUTPUT = "gitfleet/rendered"


def git(cwd: Path, *args: str, user: str = "Dev", email: str | None = None) -> str:
    """Run git in `cwd` as `user` (email: the first word of `user`, lower case, at example.com);
    return stdout without surrounding white space. Raises on a non-zero exit."""
    email = email or f"{user.split()[0].lower()}@example.com"
    done = subprocess.run(
        ["git", "-c", f"user.name={user}", "-c", f"user.email={email}", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def init_bare(path: Path) -> Path:
    """Create the bare repository `path` (the remote of a test); return it."""
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


def init_work(path: Path, origin: Path | None = None) -> Path:
    """Create (if needed) and `git init` the working repository `path` on branch main, with
    `origin` as its remote `origin` when given; return it."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    if origin is not None:
        git(path, "remote", "add", "origin", str(origin))
    return path


def copy_work(source: Path, path: Path) -> Path:
    """Copy the fleet folder `source` (e.g. examples/quickstart) to `path` and `git init` it there
    on branch main (nothing committed yet); return `path`."""
    shutil.copytree(source, path)
    return init_work(path)


def commit_all(work: Path, message: str, push_to: Path | str | None = None) -> str:
    """Stage everything in `work`, commit it with `message`, push main to `push_to` (a path or a
    remote name) when given; return the new commit id."""
    git(work, "add", "-A")
    git(work, "commit", "-qm", message)
    if push_to is not None:
        git(work, "push", "-q", str(push_to), "main")
    return git(work, "rev-parse", "HEAD")


def show_output(remote: Path, path: str) -> str:
    """The text of `path` on the output branch of the bare `remote` (raises if it is missing)."""
    return subprocess.run(
        ["git", "--git-dir", str(remote), "show", f"{OUTPUT}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def find_output(remote: Path, path: str) -> bytes | None:
    """The bytes of `path` on the output branch of the bare `remote`, None where it is missing."""
    done = subprocess.run(
        ["git", "--git-dir", str(remote), "show", f"{OUTPUT}:{path}"], capture_output=True
    )
    return done.stdout if done.returncode == 0 else None


def list_output(remote: Path) -> set[str]:
    """Every file path on the output branch of the bare `remote`."""
    out = subprocess.run(
        ["git", "--git-dir", str(remote), "ls-tree", "-r", "--name-only", OUTPUT],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(out.splitlines())


def read_output_messages(remote: Path, count: int | None = None) -> str:
    """The messages of the output branch's commits on the bare `remote`, newest first (the last
    `count` only, when given)."""
    limit = [f"-{count}"] if count is not None else []
    return subprocess.run(
        ["git", "--git-dir", str(remote), "log", *limit, "--format=%B", OUTPUT],
        check=True,
        capture_output=True,
        text=True,
    ).stdout

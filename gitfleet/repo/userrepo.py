"""Questions about the user's own checkout, and `git init` for `gitfleet init --git`.

`is_repository` (is a folder inside a Git working tree or a bare repository), `origin_url`
(where `status --fetch` and `history --fetch` read from) and `init_repository`. Nothing here
writes to an existing repository. Called by `gitfleet.service` and the CLI.
"""

from __future__ import annotations

from pathlib import Path

from gitfleet.repo.gitcmd import GitError, run_git


def is_repository(path: Path) -> bool:
    """True when `path` is a Git repository (a working tree, inside one, or bare)."""
    if not path.is_dir():
        return False
    return run_git(path, ["rev-parse", "--git-dir"], check=False).returncode == 0


def origin_url(path: Path, remote: str = "origin") -> str | None:
    """The URL of `remote` in the repository at `path`, or None when it has no such remote."""
    result = run_git(path, ["config", "--get", f"remote.{remote}.url"], check=False)
    url = result.stdout.decode("utf-8", "replace").strip()
    return url or None


def init_repository(path: Path, branch: str = "main") -> None:
    """`git init` a new repository at `path` with `branch` as its first branch. GitError when
    `path` already is a repository (nothing is changed then)."""
    if is_repository(path) and _toplevel(path) == path.resolve():
        raise GitError(f"{path} already is a git repository")
    path.mkdir(parents=True, exist_ok=True)
    run_git(path, ["init", "--quiet", f"--initial-branch={branch}"])


def _toplevel(path: Path) -> Path | None:
    result = run_git(path, ["rev-parse", "--show-toplevel"], check=False)
    text = result.stdout.decode("utf-8", "replace").strip()
    return Path(text).resolve() if result.returncode == 0 and text else None

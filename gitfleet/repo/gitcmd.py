"""The one place that starts git: hardened environment, argv-only calls, redacted errors.

Every git process in gitfleet is started through `git_argv()`/`git_env()` (or `run_git()`, which
uses both): argv form, never a shell; a protocol allow-list (`file`, `https`, `ssh`) and
`protocol.ext.allow=never`; no terminal prompts; no system config; inherited `GIT_*` variables
that could redirect git to another repository are dropped. Error text is passed through
`redact_url()` so credentials inside URLs never reach logs or status. `start_cat_file` and
`stop_process` start and end the long-running `cat-file --batch` readers (`GitTree`,
`CommitFiles`, `ObjectReader`). Within `remembered_peels`, facts a pass learned without git
(`remember_written`, `remember_commit`, `remember_ancestor`) answer later peels and ancestry.
Called by `GitTree` and by the fetch/commit/push code of the reconciler and agent loops.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

ALLOWED_PROTOCOLS = "file:https:ssh"
"""Transports git may use (GIT_ALLOW_PROTOCOL); `ext::` and friends are never allowed."""

_KEPT_GIT_VARS = frozenset(
    {"GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_ASKPASS", "GIT_SSL_CAINFO"}
)
"""Operator-set GIT_* variables that are kept (authentication); every other one is dropped."""

_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s'\"<>]+@")
_URL_QUERY = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s?#'\"<>]*\?)([^\s#'\"<>]*)")
_HEX_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_MAX_REF_LENGTH = 1024
_ACCEPTED_REFS: set[str] = set()
"""Names `git check-ref-format` accepted (a pure syntax check): a loop validates the same few
refs every pass, and each check is a process start. Refused names are never remembered."""
_MAX_ACCEPTED_REFS = 4096


class GitError(Exception):
    """A git command failed, or a ref/argument was refused. The message is already redacted."""


@dataclass(frozen=True)
class GitResult:
    """What a finished git command returned."""

    returncode: int
    stdout: bytes
    stderr: str
    """Decoded, redacted standard error."""


def redact_url(text: str) -> str:
    """Replace credentials inside URLs: the userinfo (`https://user:pass@host` ->
    `https://***@host`) and every query value (`?sig=abc&token=def` -> `?sig=***&token=***`;
    signed URLs carry their tokens there)."""
    text = _URL_CREDENTIALS.sub(r"\1***@", text)
    return _URL_QUERY.sub(lambda m: m.group(1) + _redact_query(m.group(2)), text)


def _redact_query(query: str) -> str:
    parts = (
        p.split("=", 1)[0] + "=***" if "=" in p else "***" if p else "" for p in query.split("&")
    )
    return "&".join(parts)


_TRIM_TUNABLE = "glibc.malloc.trim_threshold"
_KEEP_FREED = f"{_TRIM_TUNABLE}={64 << 20}"
"""git's zlib streams take and free ~256 KiB an object (`deflateInit`/`deflateEnd`); glibc gives
the top of the heap back to the kernel whenever more than 128 KiB is free there, and the next
object takes it again, zero-filled page by page. Measured on the fast-import of a fleet-wide
edit at fleet-1k (488 blobs, 3 MB of input; 6 runs each): ~19,900 page faults -> ~840, CPU
145 -> 80 ms. Up to 64 MiB freed stays with the process (a git process lives one command, or
keeps its peak anyway). glibc reads it (`GLIBC_TUNABLES`); other C libraries ignore it."""


def _tunables(current: str | None) -> str:
    """`GLIBC_TUNABLES` with `_KEEP_FREED`, unless the caller's environment sets that tunable."""
    if not current:
        return _KEEP_FREED
    if _TRIM_TUNABLE + "=" in current:
        return current
    return f"{current}:{_KEEP_FREED}"


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for every git process: inherited, minus GIT_* redirections, hardened;
    glibc keeps freed memory for the next object (`_KEEP_FREED`)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GIT_") or key in _KEPT_GIT_VARS
    }
    env.update(
        {
            "GIT_ALLOW_PROTOCOL": ALLOWED_PROTOCOLS,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_CONFIG_NOSYSTEM": "1",
            "LC_ALL": "C",
            "GLIBC_TUNABLES": _tunables(os.environ.get("GLIBC_TUNABLES")),
        }
    )
    if extra:
        env.update(extra)
    return env


def git_argv(repo_dir: Path, *args: str, config: Mapping[str, str] | None = None) -> list[str]:
    """`git -c protocol.ext.allow=never [-c k=v...] -C <repo_dir> <args...>` in argv form.

    `config` adds per-call `-c key=value` options (fixed hardening chosen by gitfleet code,
    never values taken from repository data).
    """
    options = [item for key, value in (config or {}).items() for item in ("-c", f"{key}={value}")]
    return ["git", "-c", "protocol.ext.allow=never", *options, "-C", str(repo_dir), *args]


def start_cat_file(repo_dir: Path, mode: str = "--batch") -> subprocess.Popen[bytes]:
    """A `git cat-file --batch` process in `repo_dir` (objects asked on stdin, one a line), for
    a reader of many objects (`mode="--batch-check"`: type and size only); `stop_process` ends
    it."""
    return subprocess.Popen(
        git_argv(repo_dir, "cat-file", mode),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=git_env(),
    )


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """End a long-running git process: close its stdin, wait up to 10 s (then kill it), close
    its stdout."""
    if proc.stdin is not None:
        with suppress(OSError):
            proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def run_git(
    repo_dir: Path,
    args: Sequence[str],
    *,
    stdin: bytes | None = None,
    timeout: float = 120.0,
    check: bool = True,
    env: Mapping[str, str] | None = None,
    config: Mapping[str, str] | None = None,
) -> GitResult:
    """Run one git command to completion. Raises GitError (redacted) on failure when `check`.

    `env` adds/overrides variables of `git_env()`; `config` adds `-c key=value` options.
    """
    peels: dict[tuple[object, ...], bytes | None] | None = getattr(_scope, "peels", None)
    peel = _peel_key(repo_dir, args, stdin, env, config) if peels is not None else None
    if peels is not None and peel is not None and peel in peels:
        known = peels[peel]  # what rev-parse printed; None: only known to exist (`cat-file -e`)
        if args[0] == "cat-file":
            return GitResult(0, b"", "")
        if known is not None:
            return GitResult(0, known, "")
    if peels is not None and args and args[0] == "gc":
        peels.clear()  # unreachable objects may go: nothing remembered is trusted after
    argv = git_argv(repo_dir, *args, config=config)
    try:
        proc = subprocess.run(
            argv,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            env=git_env(env),
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {_describe(args)} timed out after {timeout:g}s") from exc
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror}") from exc
    stderr = redact_url(proc.stderr.decode("utf-8", "replace")).strip()
    if check and proc.returncode != 0:
        raise GitError(f"git {_describe(args)} failed: {last_lines(stderr)}")
    if peels is not None and proc.returncode == 0 and stdin is None and not config:
        _remember_peel(peels, repo_dir, args, env, peel, proc.stdout)
    return GitResult(proc.returncode, proc.stdout, stderr)


def _remember_peel(
    peels: dict[tuple[object, ...], bytes | None],
    repo_dir: Path,
    args: Sequence[str],
    env: Mapping[str, str] | None,
    peel: tuple[object, ...] | None,
    out: bytes,
) -> None:
    """After a command succeeded: remember its peel; and when it peeled a ref to a commit
    (`rev-parse --verify <ref>^{commit}`), that the commit id printed peels to itself."""
    if peel is not None:
        peels[peel] = out if args[0] == "rev-parse" else peels.get(peel)
    plain = len(args) >= 3 and args[-2] == "--end-of-options"
    if plain and args[0] == "rev-parse" and set(args[1:-2]) <= _PEEL_OPTIONS["rev-parse"]:
        found = out.decode("ascii", "replace").strip()
        if args[-1].endswith("^{commit}") and _HEX_ID.fullmatch(found):
            peels[_key_of(repo_dir, env, f"{found}^{{commit}}")] = out


_scope = threading.local()


@contextmanager
def remembered_peels() -> Iterator[None]:
    """Within it (in this thread), a command that only peels an object id and succeeded
    (`rev-parse --verify <id>^{commit}`, `cat-file -e <id>^{tree}`, ...) is answered again
    from memory: an object id names the same object forever, and one hub pass asks the same
    few several times. Scoped to one pass (a repository cannot be replaced meanwhile); `gc`
    may prune unreachable objects, so it forgets them; failures are never remembered. What
    this process wrote is known without asking (`remember_written`)."""
    outer = getattr(_scope, "peels", None)
    outer_ancestry = getattr(_scope, "ancestry", None)
    _scope.peels = outer if outer is not None else {}
    _scope.ancestry = outer_ancestry if outer_ancestry is not None else set()
    try:
        yield
    finally:
        _scope.peels, _scope.ancestry = outer, outer_ancestry


def remember_commit(repo_dir: Path, commit: str) -> None:
    """Within `remembered_peels`: `commit` is known to be a commit of `repo_dir` (git listed
    it as one, e.g. `for-each-ref`'s object type). Outside it, nothing is remembered."""
    peels: dict[tuple[object, ...], bytes | None] | None = getattr(_scope, "peels", None)
    if peels is not None:  # a name that is not an object id is never looked up (`_peel_key`)
        peels[_key_of(repo_dir, None, f"{commit}^{{commit}}")] = f"{commit}\n".encode()


def is_object_id(text: str) -> bool:
    """A full hexadecimal object id (SHA-1 or SHA-256)."""
    return _HEX_ID.fullmatch(text) is not None


def remember_written(repo_dir: Path, commit: str, tree: str, parent: str | None) -> None:
    """Within `remembered_peels`: `commit` (just written to `repo_dir`) is a commit with
    `tree`, and `parent` is its ancestor. Outside it, nothing is remembered."""
    peels: dict[tuple[object, ...], bytes | None] | None = getattr(_scope, "peels", None)
    if peels is None:
        return
    remember_commit(repo_dir, commit)
    peels[_key_of(repo_dir, None, f"{commit}^{{tree}}")] = f"{tree}\n".encode()
    if parent is not None:
        remember_ancestor(repo_dir, parent, commit)


def remember_ancestor(repo_dir: Path, ancestor: str, descendant: str) -> None:
    """Within `remembered_peels`: `ancestor` is reachable from `descendant` (both commits)."""
    ancestry: set[tuple[str, str, str]] | None = getattr(_scope, "ancestry", None)
    if ancestry is not None:
        ancestry.add((str(repo_dir), ancestor, descendant))


def known_ancestor(repo_dir: Path, ancestor: str, descendant: str) -> bool:
    """Within `remembered_peels`: `ancestor` is known to be reachable from `descendant` (the
    same commit, or the parent of one this process wrote). False: not known (ask git)."""
    ancestry: set[tuple[str, str, str]] | None = getattr(_scope, "ancestry", None)
    if ancestry is None:
        return False
    return ancestor == descendant or (str(repo_dir), ancestor, descendant) in ancestry


_PEEL = re.compile(r"(?:[0-9a-f]{40}|[0-9a-f]{64})\^\{(?:commit|tree)\}")
_PEEL_OPTIONS = {"rev-parse": {"--verify", "--quiet"}, "cat-file": {"-e"}}


def _peel_key(
    repo_dir: Path,
    args: Sequence[str],
    stdin: bytes | None,
    env: Mapping[str, str] | None,
    config: Mapping[str, str] | None,
) -> tuple[object, ...] | None:
    """The key of a command that only peels one object id (the repository, its environment
    and the peel: rev-parse prints the same with or without `--quiet`), else None."""
    if stdin is not None or config or len(args) < 3 or args[-2] != "--end-of-options":
        return None
    allowed = _PEEL_OPTIONS.get(args[0])
    if allowed is None or not set(args[1:-2]) <= allowed or not _PEEL.fullmatch(args[-1]):
        return None
    return _key_of(repo_dir, env, args[-1])


def _key_of(repo_dir: Path, env: Mapping[str, str] | None, spec: str) -> tuple[object, ...]:
    """A peel's key: `GIT_DIR` naming `repo_dir` itself is the same repository as none."""
    extra = {k: v for k, v in (env or {}).items() if not (k == "GIT_DIR" and v == str(repo_dir))}
    return (str(repo_dir), tuple(sorted(extra.items())), spec)


def validate_ref(repo_dir: Path, ref: str) -> None:
    """Refuse refs that are option-like, malformed, or not a well-formed name or object id.

    Accepted: a full hexadecimal object id, or any name `git check-ref-format --allow-onelevel`
    accepts (`main`, `HEAD`, `refs/heads/x`, `origin/main`; remembered, so a name is checked by
    git once per process). Raises GitError otherwise.
    """
    if not ref or len(ref) > _MAX_REF_LENGTH:
        raise GitError("invalid ref: empty or too long")
    if ref.startswith("-") or any(ch.isspace() or ord(ch) < 32 for ch in ref):
        raise GitError(f"invalid ref {redact_url(ref)!r}: option-like or contains whitespace")
    if _HEX_ID.fullmatch(ref) or ref in _ACCEPTED_REFS:
        return
    result = run_git(repo_dir, ["check-ref-format", "--allow-onelevel", ref], check=False)
    if result.returncode != 0:
        raise GitError(f"invalid ref {redact_url(ref)!r}: not a valid ref name")
    if len(_ACCEPTED_REFS) >= _MAX_ACCEPTED_REFS:
        _ACCEPTED_REFS.clear()
    _ACCEPTED_REFS.add(ref)


def resolve_revision(repo_dir: Path, rev: str) -> str:
    """The commit a revision people type names: a branch, tag, remote-tracking branch, full or
    short object id, or an expression like `HEAD~1`, `main~2`, `HEAD^`, `v1.2^{commit}`.

    Option-like text, whitespace, control characters and ranges (`a..b`) are refused before git
    runs; git then resolves it with `rev-parse --verify --end-of-options REV^{commit}`, so the
    text is never read as an option. Raises GitError naming the revision when it is refused or
    does not name a commit.
    """
    shown = redact_url(rev)
    if not rev or len(rev) > _MAX_REF_LENGTH:
        raise GitError("invalid revision: empty or too long")
    if rev.startswith("-") or any(ch.isspace() or ord(ch) < 32 or ch == "\x7f" for ch in rev):
        raise GitError(f"invalid revision {shown!r}: option-like or contains whitespace")
    if ".." in rev:
        raise GitError(f"invalid revision {shown!r}: a range, not a single revision")
    result = run_git(
        repo_dir,
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
        check=False,
    )
    commit = result.stdout.decode("ascii", "replace").strip()
    if result.returncode != 0 or not _HEX_ID.fullmatch(commit):
        raise GitError(
            f"unknown revision {shown!r}: not a branch, tag or commit in {repo_dir} "
            "(fetch it first, or use origin/<branch> for a branch you have not checked out)"
        )
    return commit


def _describe(args: Sequence[str]) -> str:
    return redact_url(args[0]) if args else ""


def last_lines(text: str, count: int = 5) -> str:
    """The last `count` non-blank lines of git's stderr, joined for one error message."""
    lines = [line for line in text.splitlines() if line.strip()]
    return " / ".join(lines[-count:]) or "(no message)"

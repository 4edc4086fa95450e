"""Run `git fast-import` on a stream handed over piece by piece, as it is produced.

`gitwrite` builds a commit's fast-import input as a sequence of byte strings (each blob's
header, its content, the commit's lines); a cold output commit is some 200 MB of them. Joining
them first would copy every content twice and keep git waiting until the last piece is ready;
here they are written to git's stdin as they come (through one large buffer, so small pieces
cost no system call each), and git works on the first blobs while the rest are produced.
stdout and stderr go to temporary files, so git can never block on a full pipe while this
process writes. Called by `gitfleet.repo.gitwrite` only.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from typing import IO

from gitfleet.repo.gitcmd import GitError, git_argv, git_env, last_lines, redact_url

FAST_IMPORT = ("fast-import", "--quiet", "--done", "--date-format=raw")
_KEEP_PACK = {"fastimport.unpackLimit": "0"}
_BUFFER = 1 << 20
"""Bytes collected before one write to git's stdin."""


def run_fast_import(
    repo: Path, parts: Iterable[bytes], timeout: float = 120.0, *, keep_pack: bool = False
) -> bytes:
    """Feed `parts` to `git fast-import` in `repo` and return what it printed on stdout.
    `keep_pack`: keep git's pack however few objects it holds (`fastimport.unpackLimit=0`, no
    `git unpack-objects`; for a repository whose `Mirror.maintain` folds small packs).
    GitError (stderr redacted) when git fails or does not finish within `timeout` seconds
    (it is killed then, whether it is reading or working); an exception while producing
    `parts` stops git before it propagates."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                git_argv(repo, *FAST_IMPORT, config=_KEEP_PACK if keep_pack else None),
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                env=git_env(),
                bufsize=_BUFFER,
            )
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror}") from exc
        expired = threading.Event()
        watchdog = threading.Timer(timeout, _expire, (proc, expired))
        watchdog.start()
        try:
            _feed(proc.stdin, parts)
            code = proc.wait()
        finally:
            watchdog.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if expired.is_set() and code != 0:
            raise GitError(f"git fast-import timed out after {timeout:g}s")
        if code != 0:
            raise GitError(f"git fast-import failed: {last_lines(_read(err))}")
        out.seek(0)
        return out.read()


def _expire(proc: subprocess.Popen[bytes], expired: threading.Event) -> None:
    """Stop a git that took too long (reading or working: a blocked write then fails)."""
    expired.set()
    proc.kill()


def _feed(stdin: IO[bytes] | None, parts: Iterable[bytes]) -> None:
    """Write every part, then close stdin; a git that stopped reading (it failed: its exit
    status and stderr say why) ends the writing quietly."""
    assert stdin is not None
    try:
        for part in parts:
            stdin.write(part)
        stdin.close()
    except BrokenPipeError:
        with suppress(OSError):
            stdin.close()  # drops what the buffer still holds


def _read(err: IO[bytes]) -> str:
    err.seek(0)
    return redact_url(err.read().decode("utf-8", "replace")).strip()

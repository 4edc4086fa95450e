"""`ObjectReader`: long-running `git cat-file` processes shared by a process's readers.

A reader (`GitTree`, `CommitFiles`) starts its own `cat-file` process and stops it when it is
closed: right for a command that reads once. The long-running hub reads a few objects of its
mirror every pass (a new source commit, the trees and files it changed, policy files, agent
reports); starting a process for each reader costs ~1.3 ms of CPU a time, so the hub's `Mirror`
keeps one `ObjectReader` and hands it to the readers it opens (they never close it). It runs
`cat-file --batch` for contents (`read`) and, once asked, `cat-file --batch-check` for a type
and size without the content (`info`: a file's size is checked before it is read).

Objects written after a process started are found: git looks for new packs when an object is
not in the ones it knows, and reads loose objects by path. An answer "missing" for an object
that should be there (a pack removed under the process by `gc`) is asked again of a new process
by `read_known`, which callers that know an object exists use. The processes stop with `close()`, or
when the reader is collected (a finalizer), or at interpreter exit. Called by `gitfleet.repo`
(`GitTree`, `CommitFiles`, `commitwalk`, `treediff`, `Mirror`).
"""

from __future__ import annotations

import subprocess
import weakref
from pathlib import Path
from typing import IO

from gitfleet.repo.gitcmd import GitError, start_cat_file, stop_process


class _Batch:
    """One `cat-file` process in `mode`, started on the first question."""

    def __init__(self, repo: Path, mode: str) -> None:
        self._repo, self._mode = repo, mode
        self.proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[[subprocess.Popen[bytes]], _Batch] | None = None

    def ask(self, name: str) -> tuple[list[bytes], IO[bytes]]:
        """The answer's header fields for `name`, and the stream its content follows on."""
        if "\n" in name or "\r" in name:
            raise GitError(f"refused object name {name!r}")
        stdin, stdout = self._pipes()
        try:
            stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            stdin.flush()
            line = stdout.readline()
        except (OSError, ValueError):  # a broken or closed pipe
            self.close()
            raise GitError(f"git cat-file stopped before reading {name!r}") from None
        if not line.endswith(b"\n"):
            self.close()
            raise GitError(f"git cat-file stopped while reading {name!r}")
        return line.split(), stdout

    def close(self) -> None:
        proc, self.proc = self.proc, None
        finalizer, self._finalizer = self._finalizer, None
        if finalizer is not None:
            finalizer.detach()
        if proc is not None:
            stop_process(proc)

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        if self.proc is not None and self.proc.poll() is not None:
            self.close()
        if self.proc is None:
            self.proc = start_cat_file(self._repo, self._mode)
            self._finalizer = weakref.finalize(self, stop_process, self.proc)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        return self.proc.stdin, self.proc.stdout


def _found(header: list[bytes]) -> bool:
    """`<id> <type> <size>`, not `<name> missing` or `<name> ambiguous`."""
    return len(header) == 3 and header[2].isdigit()


class ObjectReader:
    """Objects of the repository at `repo` through long-running `git cat-file` processes,
    started on the first question (again after `restart`, `close` or a failure)."""

    def __init__(self, repo: Path) -> None:
        self._repo = repo
        self._contents = _Batch(repo, "--batch")
        self._infos = _Batch(repo, "--batch-check")

    @property
    def repo(self) -> Path:
        return self._repo

    @property
    def pids(self) -> tuple[int, ...]:
        """The running processes' ids: their CPU time reaches this process's
        `RUSAGE_CHILDREN` only when they end (the benchmarks read it live)."""
        return tuple(b.proc.pid for b in (self._contents, self._infos) if b.proc is not None)

    def read(self, name: str) -> tuple[bytes, bytes] | None:
        """(type, content) of the object `name` (an id, or `<commit>:<path>` without line
        breaks); None when git answers that it is missing or ambiguous. GitError when the
        process fails (it is stopped; the next question starts another)."""
        header, stdout = self._contents.ask(name)
        if not _found(header):
            return None
        size = int(header[2])
        try:
            data = stdout.read(size + 1)  # every record ends with LF
        except (OSError, ValueError):
            data = b""
        if len(data) != size + 1 or data[-1:] != b"\n":
            self._contents.close()
            raise GitError(f"git cat-file returned a truncated object for {name!r}")
        return header[1], data[:-1]

    def read_known(self, name: str) -> tuple[bytes, bytes] | None:
        """`read` of an object that should be there: a "missing" answer (a pack removed under
        the process by `gc`) is asked once more of a new process."""
        got = self.read(name)
        if got is None:
            self.restart()
            got = self.read(name)
        return got

    def info(self, name: str) -> tuple[bytes, int] | None:
        """(type, size in bytes) of the object `name`, without reading it; None when missing."""
        header, _ = self._infos.ask(name)
        return (header[1], int(header[2])) if _found(header) else None

    def restart(self) -> None:
        """Stop the processes; the next questions start new ones (which list packs afresh)."""
        self.close()

    def close(self) -> None:
        """Stop the processes (idempotent)."""
        self._contents.close()
        self._infos.close()

"""`ObjectReader`: one long-running `git cat-file --batch` shared by a process's readers.

A reader (`GitTree`, `CommitFiles`) starts its own `cat-file` process and stops it when it is
closed: right for a command that reads once. The long-running hub reads a few objects of its
mirror every pass (a new source commit, the files it changed, policy files, agent reports);
starting a process for each reader costs ~1.3 ms of CPU a time, so the hub's `Mirror` keeps one
`ObjectReader` and hands it to the readers it opens (they never close it).

Objects written after the process started are found: git looks for new packs when an object
is not in the ones it knows, and reads loose objects by path. An answer "missing" for an object
that should be there (a pack removed under the process by `gc`) can be asked again after
`restart()`; callers that know an object exists do so. The process stops with `close()`, or
when the reader is collected (a finalizer), or at interpreter exit. Called by `gitfleet.repo`
(`GitTree`, `CommitFiles`, `history`, `Mirror`).
"""

from __future__ import annotations

import subprocess
import weakref
from pathlib import Path
from typing import IO

from gitfleet.repo.gitcmd import GitError, start_cat_file, stop_process


class ObjectReader:
    """Objects of the repository at `repo` through one `git cat-file --batch`, started on the
    first read (again after `restart`, `close` or a failure)."""

    def __init__(self, repo: Path) -> None:
        self._repo = repo
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[[subprocess.Popen[bytes]], ObjectReader] | None = None

    @property
    def repo(self) -> Path:
        return self._repo

    @property
    def pid(self) -> int | None:
        """The running process's id (None when none runs): its CPU time reaches this
        process's `RUSAGE_CHILDREN` only when it ends (the benchmarks read it live)."""
        return self._proc.pid if self._proc is not None else None

    def read(self, name: str) -> tuple[bytes, bytes] | None:
        """(type, content) of the object `name` (an id, or `<commit>:<path>` without line
        breaks); None when git answers that it is missing or ambiguous. GitError when the
        process fails (it is stopped; the next read starts another)."""
        if "\n" in name or "\r" in name:
            raise GitError(f"refused object name {name!r}")
        stdin, stdout = self._pipes()
        try:
            stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            stdin.flush()
            line = stdout.readline()
        except OSError:
            self.close()
            raise GitError(f"git cat-file stopped before reading {name!r}") from None
        if not line.endswith(b"\n"):
            self.close()
            raise GitError(f"git cat-file stopped while reading {name!r}")
        header = line.split()
        if len(header) != 3 or not header[2].isdigit():
            return None  # "<name> missing" or "<name> ambiguous"
        size = int(header[2])
        data = stdout.read(size + 1)  # every record ends with LF
        if len(data) != size + 1 or data[-1:] != b"\n":
            self.close()
            raise GitError(f"git cat-file returned a truncated object for {name!r}")
        return header[1], data[:-1]

    def restart(self) -> None:
        """Stop the process; the next read starts a new one (which lists the packs afresh)."""
        self.close()

    def close(self) -> None:
        """Stop the process (idempotent)."""
        proc, self._proc = self._proc, None
        finalizer, self._finalizer = self._finalizer, None
        if finalizer is not None:
            finalizer.detach()
        if proc is not None:
            stop_process(proc)

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        if self._proc is not None and self._proc.poll() is not None:
            self.close()
        if self._proc is None:
            self._proc = start_cat_file(self._repo)
            self._finalizer = weakref.finalize(self, stop_process, self._proc)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        return self._proc.stdin, self._proc.stdout

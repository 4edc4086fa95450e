"""A killable worker process that runs one job at a time under a wall-clock deadline.

The Jinja2 renderer runs every template here: the child is forked once per `load_fleet` (it
inherits the sandboxed environment, the partials and the template context, so a job is only a
template path and source), a job that overruns its deadline is killed with SIGKILL and the child
is restarted lazily for the next job. A kill works for anything the template does — tight loops
that produce no output, huge integer powers inside one C call — which an in-process signal or
trace hook cannot guarantee. The child's address space is capped (RLIMIT_AS) so a memory bomb is
a MemoryError in the child, not an out-of-memory parent. Used only by `renderers.jinja`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.context import ForkProcess
from types import TracebackType
from typing import Any, Literal

MEMORY_HEADROOM_BYTES = 1024 * 1024 * 1024
"""Address space the child may grow by beyond what it inherited at fork time."""

Status = Literal["ok", "timeout", "crashed", "unavailable"]


@dataclass(frozen=True)
class WorkerReply:
    """What happened to one job: `value` is the job's return value when status is "ok"."""

    status: Status
    value: Any = None
    detail: str = ""


def fork_available() -> bool:
    """True where the `fork` start method exists (Linux, macOS)."""
    return "fork" in multiprocessing.get_all_start_methods()


def _limit_memory(headroom: int) -> None:
    """Cap the child's address space at its current size plus `headroom` (Linux only)."""
    try:
        import resource

        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[0])
        limit = pages * os.sysconf("SC_PAGE_SIZE") + headroom
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, OSError, ValueError):
        return


def _serve(conn: Connection, job: Callable[[Any], Any], headroom: int) -> None:
    """Child main loop: receive an argument, send back ("ok", result) or ("error", text).

    Ctrl-C is left to the parent (which kills the child); a reply that cannot be sent ends the
    child quietly and the parent reports the job as crashed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _limit_memory(headroom)
    while True:
        try:
            arg = conn.recv()
        except (EOFError, OSError):
            return
        if arg is None:
            return
        try:
            reply: tuple[str, Any] = ("ok", job(arg))
        except BaseException as exc:  # a bug in the job must not kill the loop silently
            reply = ("error", f"{exc.__class__.__name__}: {exc}")
        try:
            conn.send(reply)
        except BaseException:
            return


class DeadlineWorker:
    """Runs `job(arg)` in a forked child with a per-call wall-clock deadline.

    Use as a context manager; `call` never raises for anything the job does.
    """

    def __init__(self, job: Callable[[Any], Any], headroom: int = MEMORY_HEADROOM_BYTES) -> None:
        self._job = job
        self._headroom = headroom
        self._proc: ForkProcess | None = None
        self._conn: Connection | None = None

    def __enter__(self) -> DeadlineWorker:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _start(self) -> Connection:
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe(duplex=True)
        proc = ctx.Process(
            target=_serve, args=(child, self._job, self._headroom), daemon=True, name="gitfleet-j2"
        )
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        return parent

    def call(self, arg: Any, timeout: float) -> WorkerReply:
        """Run one job; kill the child if no reply arrives within `timeout` seconds."""
        if not fork_available():
            return WorkerReply("unavailable", detail="the 'fork' start method is not available")
        conn = self._conn or self._start()
        try:
            conn.send(arg)
            if not conn.poll(max(timeout, 0.0)):
                self._kill()
                return WorkerReply("timeout")
            kind, value = conn.recv()
        except (EOFError, OSError, BrokenPipeError) as exc:
            self._kill()
            return WorkerReply("crashed", detail=f"worker process ended: {exc.__class__.__name__}")
        if kind != "ok":
            return WorkerReply("crashed", detail=str(value))
        return WorkerReply("ok", value)

    def _kill(self) -> None:
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if conn is not None:
            conn.close()
        if proc is not None:
            proc.kill()
            proc.join(5)
            if not proc.is_alive():
                proc.close()

    def close(self) -> None:
        """Stop the child (politely, then with SIGKILL)."""
        proc, conn = self._proc, self._conn
        if proc is None or conn is None:
            return
        with contextlib.suppress(OSError, BrokenPipeError):
            conn.send(None)
        proc.join(2)
        self._kill()

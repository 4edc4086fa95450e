"""The killable worker process behind the Jinja2 renderer: replies, crashes, deadlines."""

from __future__ import annotations

import os
import time

import pytest

from renderers.jinja_worker import DeadlineWorker, WorkerReply


def job(arg: str) -> str:
    if arg == "exit":
        os._exit(3)
    if arg == "raise":
        raise ValueError("boom")
    if arg == "sleep":
        time.sleep(30)
    if arg == "pow":
        return str(7**7**10 % 10)  # one long C call (~100 MB integer): only a kill stops it
    return f"done {os.getpid() != PARENT}"


PARENT = os.getpid()


@pytest.mark.parametrize(
    ("arg", "status", "detail"),
    [
        ("hello", "ok", ""),
        ("exit", "crashed", "worker process ended"),
        ("raise", "crashed", "ValueError: boom"),
        ("sleep", "timeout", ""),
        ("pow", "timeout", ""),
    ],
)
def test_worker_reply_and_recovery(arg: str, status: str, detail: str) -> None:
    with DeadlineWorker(job) as worker:
        started = time.monotonic()
        reply = worker.call(arg, 0.5)
        assert time.monotonic() - started < 5
        assert reply.status == status
        assert detail in reply.detail
        assert worker.call("again", 5) == WorkerReply("ok", "done True")

"""Leave the process without tearing its heap down: how every `gitfleet` command ends.

A pass over a big fleet leaves a big heap behind (fleet-1k: ~800 MiB, ~470k output files, the
pass's memos), and the interpreter's own exit frees it object by object: ~2 s of a ~10 s
`gitfleet validate` at fleet-1k, freeing memory the kernel takes back at once anyway.
`exit_quickly` does what a normal exit does that anyone can see, then skips the freeing: it runs
the `atexit` handlers (temporary directories, logging, multiprocessing children, coverage),
flushes stdout and stderr, and ends the process with the exit status the `SystemExit` would have
given (`None` 0, an integer itself, anything else printed to stderr and 1; 120 when stdout cannot
be flushed, as Python does). While any other thread runs it exits the normal way (the interpreter
joins non-daemon threads first). Called by `gitfleet.cli.run` (the console script and `python -m
gitfleet`) and by `benchmarks/phase.py`, which measures a pass as the CLI pays for it (so it lives
outside `gitfleet.cli`, whose import would be part of that measurement).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import NoReturn


def run_quickly(command: Callable[[], object]) -> NoReturn:
    """Run `command` (a click group in standalone mode: it ends by raising SystemExit) and
    exit quickly with its status. The exception's frames stay alive until the exit, so what
    the command held is never freed either."""
    try:
        command()
    except SystemExit as stop:
        exit_quickly(stop.code)
    exit_quickly(0)


def exit_quickly(code: object = 0) -> NoReturn:
    """End the process as `sys.exit(code)` would, without freeing the heap first."""
    if threading.active_count() > 1:
        raise SystemExit(code)
    status = _status(code)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        status = status or 120
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(status)


def _status(code: object) -> int:
    """The exit status of `SystemExit(code)`; a message is printed to stderr first."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF  # what the C exit() keeps of it
    print(code, file=sys.stderr)
    return 1

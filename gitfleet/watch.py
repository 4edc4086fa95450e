"""Watch a local fleet repository's refs and wake the hub loop when a branch moves.

A local path is watched with watchfiles (inotify) instead of being polled: any change under the
repository's refs, packed-refs or HEAD sets the trigger event. Called by `gitfleet reconcile`.
"""

from __future__ import annotations

import threading
from pathlib import Path

from watchfiles import watch


def git_dir(repo: Path) -> Path:
    """The Git directory of a working repository or a bare one."""
    dot = repo / ".git"
    return dot if dot.is_dir() else repo


def _is_ref_change(path: str) -> bool:
    return "/refs/" in path or path.endswith(("packed-refs", "HEAD"))


def start_watcher(repo: Path, trigger: threading.Event, stop: threading.Event) -> threading.Thread:
    """A daemon thread that sets `trigger` whenever a ref of `repo` changes, until `stop`."""

    def run() -> None:
        for changes in watch(
            git_dir(repo), stop_event=stop, yield_on_timeout=False, rust_timeout=1000
        ):
            if any(_is_ref_change(path) for _, path in changes):
                trigger.set()

    thread = threading.Thread(target=run, name="gitfleet-watch", daemon=True)
    thread.start()
    return thread

"""A settable clock and a hub that never really sleeps, for tests that drive `Hub.run_once`
against a bare remote.

Called by the integration tests (hub + agents, staged runs, faults, secrets).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from reconciler.loop import Hub, HubConfig

START = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)


class Clock:
    """A settable clock shared by hubs and agents (condition times depend on it)."""

    def __init__(self, start: datetime = START) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


def skip_sleep(seconds: float) -> None:
    """A `sleep` that returns at once (retries in tests do not wait)."""


def make_hub(remote: Path, cache: Path, clock: Clock) -> Hub:
    """A hub on the bare `remote` with its mirror in `cache`, on `clock`, that never sleeps."""
    return Hub(HubConfig(str(remote), cache), clock=clock, sleep=skip_sleep)

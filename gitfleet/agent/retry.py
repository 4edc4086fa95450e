"""Retries with capped exponential backoff and full jitter around any `ClusterClient`.

`RetryingClient` retries `Throttled` (429) and `ServerError` (5xx) up to `attempts` times,
sleeping `uniform(0, min(cap, base * 2**n))` between tries through the injected `sleep` and
`random` (tests pass a recorder and a seeded generator, so nothing really sleeps). The last
failure is raised. Used by `gitfleet.agent.run.run_once` around the caller's client.
"""

from __future__ import annotations

import random as _random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from gitfleet.agent.client import ClusterClient, Obj, Propagation, ResourceInfo, Retryable

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    """Retry policy: attempts in total, base and cap of the exponential delay (seconds)."""

    attempts: int = 5
    base: float = 0.5
    cap: float = 30.0
    sleep: Callable[[float], None] = time.sleep
    random: _random.Random = field(default_factory=_random.Random)
    """Seeded from the OS by default, so agents restarted together do not retry in lockstep."""

    def delay(self, attempt: int) -> float:
        """Full-jitter delay before retry number `attempt` (0-based)."""
        return self.random.uniform(0, min(self.cap, self.base * 2**attempt))


class RetryingClient:
    """A `ClusterClient` that retries the retryable failures of `inner`."""

    def __init__(self, inner: ClusterClient, backoff: Backoff) -> None:
        self.inner = inner
        self.backoff = backoff

    def _retry(self, call: Callable[[], T]) -> T:
        for attempt in range(self.backoff.attempts):
            try:
                return call()
            except Retryable:
                if attempt + 1 >= self.backoff.attempts:
                    raise
                self.backoff.sleep(self.backoff.delay(attempt))
        raise AssertionError("unreachable: attempts must be >= 1")

    def discover(self, api_version: str, kind: str) -> ResourceInfo:
        return self._retry(lambda: self.inner.discover(api_version, kind))

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> Obj | None:
        return self._retry(lambda: self.inner.get(api_version, kind, namespace, name))

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[Obj]:
        return self._retry(lambda: self.inner.list(api_version, kind, namespace, labels))

    def apply(
        self, obj: Mapping[str, Any], *, field_manager: str, force: bool, dry_run: bool
    ) -> Obj:
        return self._retry(
            lambda: self.inner.apply(obj, field_manager=field_manager, force=force, dry_run=dry_run)
        )

    def patch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        patch: Mapping[str, Any],
        *,
        field_manager: str,
    ) -> Obj:
        return self._retry(
            lambda: self.inner.patch(
                api_version, kind, namespace, name, patch, field_manager=field_manager
            )
        )

    def delete(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        propagation: Propagation = "Background",
    ) -> None:
        self._retry(
            lambda: self.inner.delete(api_version, kind, namespace, name, propagation=propagation)
        )

"""Retry jitter is drawn from a generator seeded by the OS in production: agents restarted
together must not retry the API server in lockstep."""

from __future__ import annotations

from gitfleet.agent.retry import Backoff


def test_default_jitter_is_not_seeded_with_a_constant() -> None:
    delays = {Backoff().delay(10) for _ in range(8)}
    assert len(delays) > 1


def test_delays_stay_within_the_capped_exponential() -> None:
    backoff = Backoff(base=0.5, cap=30.0)
    assert all(0.0 <= backoff.delay(n) <= min(30.0, 0.5 * 2**n) for n in range(12))

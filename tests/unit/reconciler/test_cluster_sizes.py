"""Bytes per cluster summed by patching last pass's totals equal a fresh sum over a sequence
of passes (`reconciler.clustersizes`)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping

from reconciler.clustersizes import Parts, summed
from reconciler.stagememo import forget_stages

CLUSTERS = ["eu-1", "eu-2", "us-1", "us-2"]


def _fresh(parts: Parts) -> dict[str, int]:
    total: Counter[str] = Counter()
    for part in parts.values():
        total.update(part)
    return dict(total)


def _part(rng: random.Random) -> dict[str, int]:
    return {c: rng.randrange(1, 100) for c in rng.sample(CLUSTERS, rng.randrange(4))}


def _nonzero(totals: Mapping[str, int]) -> dict[str, int]:
    return {c: n for c, n in totals.items() if n}


def test_patched_totals_over_passes_equal_a_fresh_sum() -> None:
    """Parts kept as the very objects, replaced, added, dropped, and replaced by an equal
    copy: the totals equal the fresh sum (a cluster may stay listed with 0 bytes)."""
    forget_stages()
    rng = random.Random(3)
    parts: Parts = {f"live/p{i}": _part(rng) for i in range(4)}
    for _ in range(300):
        parts = dict(parts)
        what = rng.choice(["replace", "add", "drop", "copy", "none"])
        name = f"live/p{rng.randrange(6)}"
        if what in ("replace", "add"):
            parts[name] = _part(rng)
        elif what == "drop":
            parts.pop(name, None)
        elif what == "copy" and name in parts:
            parts[name] = dict(parts[name])
        totals = summed(parts)
        assert _nonzero(totals) == _nonzero(_fresh(parts))
        assert all(n >= 0 for n in totals.values())
    forget_stages()


def test_totals_start_afresh_after_forgetting() -> None:
    forget_stages()
    one: Parts = {"a": {"eu-1": 5}}
    assert summed(one) == {"eu-1": 5}
    forget_stages()
    assert summed({"b": {"eu-1": 2}}) == {"eu-1": 2}
    forget_stages()

"""`statusdocs._decisions_read` is made once per decisions tuple and `fixed_names`: the same
tuple read for a PickFixed placement with another number of names gives that number's list."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from reconciler import statusdocs
from reconciler.schedule.outcome import Decision

A, B, C = Decision("a", True, ""), Decision("b", False, "x"), Decision("c", False, "y")


def _read(decisions: tuple[Decision, ...], fixed: int | None) -> Any:
    return statusdocs._decisions_read(
        cast(Any, SimpleNamespace(decisions=decisions, fixed_names=fixed))
    )


def test_the_same_decisions_read_for_each_fixed_names() -> None:
    decisions = (A, B, C)
    assert _read(decisions, None) == ((A,), ())
    assert _read(decisions, 3) == ((A,), (B, C))
    assert _read(decisions, 2) == ((A,), (B,))
    assert _read(decisions, None) == ((A,), ())
    first = _read(decisions, 2)
    assert _read(decisions, 2) is first  # made once
    assert _read((A, B, C), 2) == first  # an equal tuple of other identity: made again, equal

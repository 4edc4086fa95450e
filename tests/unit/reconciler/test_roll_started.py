"""`rollmove.with_started` hands back the very binding when its RolloutStarted condition is
already what it would set (the shortcut most bindings of a settled rollout take every pass),
and otherwise sets it as rebuilding the conditions does: the same result in every case."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from reconciler.binding import Binding, BindingCondition
from reconciler.rollmove import with_started
from reconciler.rollout.rolling import STARTED_MESSAGE, STARTED_REASON
from reconciler.rollview import timed

THEN = datetime(2026, 11, 20, tzinfo=UTC)
NOW = datetime(2026, 11, 21, tzinfo=UTC)
STARTED = BindingCondition("RolloutStarted", "True", STARTED_REASON, STARTED_MESSAGE, THEN)
STALE = BindingCondition("RolloutStarted", "False", "RolloutNotStartedYet", "stale", THEN)
APPLIED = BindingCondition("Applied", "True", "Applied", "", THEN)


def _rebuilt(b: Binding) -> Binding:
    """RolloutStarted True set by rebuilding the conditions (what `with_started` always did)."""
    new = [("RolloutStarted", "True", STARTED_REASON, STARTED_MESSAGE)]
    started = timed(new, b.conditions, NOW)
    rest = [c for c in b.conditions if c.type != "RolloutStarted"]
    conditions = (*started, *rest)
    return b if conditions == b.conditions else replace(b, conditions=conditions)


@pytest.mark.parametrize(
    ("conditions", "same"),
    [
        ((STARTED, APPLIED), True),
        ((STARTED,), True),
        ((APPLIED, STARTED), False),  # started, but not first: reordered
        ((STARTED, APPLIED, STARTED), False),  # two of them: one kept
        ((STALE, APPLIED), False),
        ((replace(STARTED, message="older words"), APPLIED), False),
        ((), False),
    ],
)
def test_started_is_what_rebuilding_gives(
    conditions: tuple[BindingCondition, ...], same: bool
) -> None:
    b = Binding("c1", "Bound", 0, 3, content="d", conditions=conditions)
    got = with_started(b, "True", NOW)
    assert (got is b) == same
    assert got == _rebuilt(b)

"""`timed` builds each condition once with `set_condition`'s rule: the previous transition time
is kept while status, reason and message are unchanged (whatever the generation), else it is
the pass's clock."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

import pytest

from gitfleet.api import Condition, set_condition
from reconciler.status import Cond, timed

NOW = datetime(2026, 11, 26, 8, tzinfo=UTC)
BEFORE = "2026-01-01T00:00:00Z"


def _reference(conds: list[Cond], prior: tuple[Condition, ...], gen: int) -> tuple[Any, ...]:
    out: tuple[Condition, ...] = ()
    by_type = {c.type: c for c in prior}
    for c in conds:
        previous = by_type.get(c.type)
        new = Condition(
            type=c.type,
            status=cast(Any, c.status),
            reason=c.reason,
            message=c.message,
            observed_generation=gen,
        )
        out += set_condition((previous,) if previous else (), new, NOW)
    return out


def _prior(**change: Any) -> Condition:
    fields: dict[str, Any] = {
        "type": "Applied",
        "status": "True",
        "reason": "Done",
        "message": "ok",
        "observed_generation": 1,
        "last_transition_time": BEFORE,
    }
    return Condition(**{**fields, **change})


@pytest.mark.parametrize(
    "prior",
    [
        (),
        (_prior(),),
        (_prior(status="False"),),
        (_prior(reason="Other"),),
        (_prior(message="changed"),),
        (_prior(observed_generation=0),),
        (_prior(last_transition_time=None),),
        (_prior(type="Available"),),
    ],
)
@pytest.mark.parametrize("gen", [1, 2])
def test_timed_is_set_condition(prior: tuple[Condition, ...], gen: int) -> None:
    conds = [Cond("Applied", "True", "Done", "ok"), Cond("Available", "Unknown", "Wait", "")]
    got = timed(conds, prior, gen, NOW)
    assert got == _reference(conds, prior, gen)
    assert got[0].last_transition_time in (BEFORE, "2026-11-26T08:00:00Z")

"""Kubernetes-style status conditions and the RFC 3339 timestamps they carry.

`Condition` mirrors metav1.Condition. `set_condition` is the one way the reconciler updates a
condition list: it keeps `lastTransitionTime` unless status, reason or message changed, so a pass
that changes nothing writes identical bytes. `format_time`/`parse_time` convert between aware
datetimes and the canonical `2026-11-21T10:00:00Z` form used in every file gitfleet writes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Annotated, Literal

from pydantic import BeforeValidator

from gitfleet.api.base import KubeModel

ConditionStatus = Literal["True", "False", "Unknown"]

_RFC3339_RE = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)


@lru_cache(maxsize=4096)
def format_time(moment: datetime) -> str:
    """`moment` as RFC 3339 in UTC with second precision (naive datetimes are taken as UTC).
    Kept for the last few thousand moments: a pass writes the same few on many conditions."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """Parse an RFC 3339 timestamp into an aware UTC datetime; ValueError when malformed."""
    match = _RFC3339_RE.fullmatch(text)
    if match is None:
        raise ValueError(f'must be an RFC 3339 timestamp such as "2026-11-21T10:00:00Z": "{text}"')
    day, clock, fraction, zone = match.groups()
    fraction = (fraction or "")[:7]  # '.' plus at most 6 digits: microsecond precision
    zone = "+00:00" if zone in ("Z", "z") else zone
    try:
        parsed = datetime.fromisoformat(f"{day}T{clock}{fraction}{zone}")
    except ValueError as exc:
        raise ValueError(f'is not a valid RFC 3339 timestamp: "{text}" ({exc})') from None
    return parsed.astimezone(UTC)


def _timestamp(value: object) -> object:
    """Accept datetimes (YAML may resolve unquoted timestamps) and check RFC 3339 strings."""
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, str):
        parse_time(value)
    return value


Timestamp = Annotated[str, BeforeValidator(_timestamp)]
"""An RFC 3339 timestamp kept as text exactly as written (datetimes are canonicalised)."""


class Condition(KubeModel):
    """metav1.Condition: one observation about an object's state."""

    type: str
    status: ConditionStatus
    reason: str = ""
    message: str = ""
    observed_generation: int | None = None
    last_transition_time: Timestamp | None = None


def find_condition(conditions: Sequence[Condition], type_: str) -> Condition | None:
    """The condition of type `type_`, or None."""
    for condition in conditions:
        if condition.type == type_:
            return condition
    return None


def set_condition(
    conditions: Sequence[Condition], new: Condition, now: datetime
) -> tuple[Condition, ...]:
    """Replace (or append) the condition of `new.type`.

    The previous `lastTransitionTime` is kept when status, reason and message are unchanged;
    otherwise it becomes `new.last_transition_time` or, if unset, `now`. Order is preserved;
    a new type is appended at the end.
    """
    old = find_condition(conditions, new.type)
    unchanged = (
        old is not None
        and old.status == new.status
        and old.reason == new.reason
        and old.message == new.message
    )
    if unchanged and old is not None and old.last_transition_time is not None:
        stamp: str = old.last_transition_time
    else:
        stamp = new.last_transition_time or format_time(now)
    updated = new.model_copy(update={"last_transition_time": stamp})
    if old is None:
        return (*conditions, updated)
    return tuple(updated if c.type == new.type else c for c in conditions)

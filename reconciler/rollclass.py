"""`rolling.classify` of one placement's binding views, reading only the views that are not the
last call's objects.

What `classify` reads of a view is a fact of the view object (its state, readiness apart from
the clock, failed, diff reported, deleting, up to date), packed here into one small int per view
(`_mask`) and remembered per placement by position (`rollsplice.Column`: a placement recomputed
because one cluster joined or left reads that cluster's view only). The class lists are then
picked from the views' cluster names in C. The clock enters only through views whose objects
are available but untrackable (`BindingView.ready` then counts the unavailable period): a
placement with such a view is classified by `classify` itself, as are views of another state
than Scheduled, Bound and Unscheduled. So the result is always `classify`'s. Called by
`reconciler.rollstage`.
"""

from __future__ import annotations

from collections.abc import Hashable
from datetime import datetime, timedelta
from itertools import compress, repeat
from operator import and_, attrgetter

from reconciler.rollout.model import BOUND, SCHEDULED, UNSCHEDULED, BindingView
from reconciler.rollout.rolling import Classes, classify
from reconciler.rollsplice import Column

_SCHEDULED, _LIVE, _READY, _CAN_BE_READY, _CAN_BE_UNAVAILABLE = 1, 2, 4, 8, 16
_REMOVE, _TARGETED, _UP_TO_DATE, _APPLY_FAILED, _UPDATE = 32, 64, 128, 256, 512
_UNREADY, _CLOCK = 1024, 2048
"""Bits of a view's mask: `_LIVE` is Unscheduled or Bound, `_TARGETED` Scheduled or Bound,
`_UNREADY` live and not ready; `_CLOCK`: its readiness reads the clock (or its state is none
of the three), so the placement is classified by `classify`."""


def _mask(b: BindingView) -> int:
    """What `classify` reads of `b`, apart from the clock."""
    state = b.state
    if state == SCHEDULED:
        return _SCHEDULED | _TARGETED
    if state not in (UNSCHEDULED, BOUND):
        return _CLOCK
    ready, since = b.readiness
    if not ready and since is not None:
        return _CLOCK
    mask = _LIVE | (_READY if ready else _UNREADY)
    if not b.failed and not b.diff_reported:
        mask |= _CAN_BE_READY
    if ready and b.deleting:
        mask |= _CAN_BE_UNAVAILABLE
    if state == UNSCHEDULED:
        return mask | (0 if b.deleting else _REMOVE)
    mask |= _TARGETED
    if not b.deleting:
        mask |= _UP_TO_DATE if b.up_to_date else _APPLY_FAILED if b.failed else _UPDATE
    return mask


_MASKS: Column[int] = Column(_mask)
_NAMES: Column[str] = Column(attrgetter("cluster"))


def _picked(names: list[str], masks: list[int], bit: int, kinds: set[int]) -> tuple[str, ...]:
    """The names whose mask has `bit` (`kinds`: the distinct masks)."""
    if all(k & bit for k in kinds):
        return tuple(names)
    if not any(k & bit for k in kinds):
        return ()
    return tuple(compress(names, map(and_, masks, repeat(bit))))


def classify_placement(
    key: Hashable, views: tuple[BindingView, ...], now: datetime, period: timedelta
) -> Classes:
    """`classify(views, now, period)` of placement `key`'s views (see the module docstring)."""
    masks = _MASKS.of(key, views)
    kinds = set(masks)
    if any(k & _CLOCK for k in kinds):
        return classify(views, now, period)
    names = _NAMES.of(key, views)
    unready = _picked(names, masks, _UNREADY, kinds)
    return Classes(
        scheduler_targeted=list(map(and_, masks, repeat(_TARGETED))).count(_TARGETED),
        ready=_picked(names, masks, _READY, kinds),
        can_be_ready=_picked(names, masks, _CAN_BE_READY, kinds),
        can_be_unavailable=_picked(names, masks, _CAN_BE_UNAVAILABLE, kinds),
        remove=_picked(names, masks, _REMOVE, kinds),
        update=_picked(names, masks, _UPDATE, kinds),
        apply_failed=_picked(names, masks, _APPLY_FAILED, kinds),
        bounding=_picked(names, masks, _SCHEDULED, kinds),
        up_to_date=_picked(names, masks, _UP_TO_DATE, kinds),
        waits=(),
        all_ready=not unready,
        not_ready=len(unready),
        unready=unready,
    )

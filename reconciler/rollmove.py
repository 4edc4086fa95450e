"""What moving a binding does to it (spec/kubefleet.md §2.4 effects): the binding the rollout
gives a placement's target content (or, for an External placement's rollback, an older snapshot
rendered from its recorded commit), and a binding's RolloutStarted as the rolling update sets it.
Pure apart from the plan's per-pass records (`moved_to`, `reports`); called by
`reconciler.rollstage` and `reconciler.rollexternal`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from functools import lru_cache

from gitfleet.api.canonical import placement_content_hash
from reconciler.binding import STARTED_ATTRIBUTE
from reconciler.placement import PlacementPlan
from reconciler.rollout.model import BOUND
from reconciler.rollout.rolling import (
    STALE_MESSAGE,
    STALE_REASON,
    STARTED_MESSAGE,
    STARTED_REASON,
)
from reconciler.rollview import timed
from reconciler.state import Binding, BindingCondition

_STARTED_ROWS = (("RolloutStarted", "True", STARTED_REASON, STARTED_MESSAGE),)


@lru_cache(maxsize=4)
def _started_at(now: datetime) -> BindingCondition:
    """`timed(_STARTED_ROWS, (), now)`'s condition: one object for every binding without
    conditions that a pass moves (a new placement's, all of them; frozen, so sharing is safe)."""
    return BindingCondition(*_STARTED_ROWS[0], now)


def moved(plan: PlacementPlan, b: Binding, now: datetime, index: int | None = None) -> Binding:
    """The binding after the rollout gave it the target content (§2.4 effects), or with
    `index` an older snapshot rendered from its recorded commit (`plan.renders`)."""
    target = plan.target()
    older = plan.renders.get(index) if index is not None else None
    content: str | None
    if older is not None:
        custom = older.cluster(b.cluster)
        content = placement_content_hash(m.entry for m in older.manifests_for(b.cluster))
        plan.moved_to[b.cluster] = older.index
    else:
        custom = plan.cluster(b.cluster)
        content = plan.desired.get(b.cluster)
        plan.moved_to.pop(b.cluster, None)
    kept = [c for c in b.conditions if c.type != "RolloutStarted"] if content == b.content else []
    if not kept:
        plan.reports.pop(b.cluster, None)
    started = timed(_STARTED_ROWS, b.conditions, now) if b.conditions else [_started_at(now)]
    return replace(
        b,
        state=BOUND,
        previous_state=None,
        resource_index=older.index if older is not None else (target.index if target else None),
        content=content,
        cluster_overrides=custom.cluster_overrides,
        resource_overrides=custom.resource_overrides,
        conditions=(*started, *kept),
    )


def with_started(b: Binding, status: str, now: datetime) -> Binding:
    """`b` with RolloutStarted `status` (True: started; False: stale, held by the strategy)."""
    if b.__dict__.get(STARTED_ATTRIBUTE) == status:
        return b
    reason, message = (
        (STARTED_REASON, STARTED_MESSAGE) if status == "True" else (STALE_REASON, STALE_MESSAGE)
    )
    first = b.conditions[0] if b.conditions else None
    if (
        first is not None
        and (first.type, first.status, first.reason, first.message)
        == ("RolloutStarted", status, reason, message)
        and [c.type for c in b.conditions].count("RolloutStarted") == 1
    ):
        object.__setattr__(b, STARTED_ATTRIBUTE, status)  # frozen: only the memo of a fact of it
        return b  # what the rebuild below gives (most bindings of a settled rollout, each pass)
    started = timed([("RolloutStarted", status, reason, message)], b.conditions, now)
    rest = [c for c in b.conditions if c.type != "RolloutStarted"]
    conditions = (*started, *rest)
    return b if conditions == b.conditions else replace(b, conditions=conditions)

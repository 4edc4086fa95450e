"""The rollout of an External placement (spec/kubefleet.md §4, cluster-group-upgrade.md): only
what a driver's `ExternalUpdate` asks for moves - to the latest content, or to an older snapshot
rendered from its recorded commit (a rollback); clusters not moved are held, with the reason in
`plan.waits`. Pure; called by `reconciler.rollstage`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from gitfleet.api.errors import FleetError
from reconciler.placement import PlacementPlan
from reconciler.rolldelete import begin
from reconciler.rollmove import moved
from reconciler.rollout.model import UNSCHEDULED, ExternalUpdate
from reconciler.state import Binding

PriorIndex = Mapping[str, Mapping[str, Mapping[str, Any]]]
HELD = "held: External strategy, no update run targets this placement"


def _external(
    plan: PlacementPlan,
    updates: Sequence[ExternalUpdate],
    now: datetime,
    prior_index: PriorIndex,
    assume: frozenset[str],
) -> list[FleetError]:
    """An External placement: only what a driver asks for moves. A move to an older snapshot
    than the latest is a rollback, rendered from the snapshot's recorded commit."""
    latest = plan.state.latest_resources()
    errors: list[FleetError] = []
    moves: dict[str, tuple[int, ExternalUpdate]] = {}
    deletes: set[str] = set()
    for u in updates:
        moves.update({c: (i, u) for c, i in u.clusters.items()})
        deletes |= u.delete
    out = []
    begin(
        plan,
        [b.cluster for b in plan.state.bindings if b.state == UNSCHEDULED and b.cluster in deletes],
        prior_index,
        assume,
    )
    for b in plan.state.bindings:
        move = moves.get(b.cluster)
        strategy = prior_index.get(b.cluster, {}).get(plan.key, {}).get("applyStrategy")
        if move is not None and b.state != UNSCHEDULED:
            target, update = move
            if latest is not None and target == latest.index:
                b = moved(plan, b, now)
                strategy = update.apply_strategy
            elif target in plan.renders and target != b.resource_index:
                b = moved(plan, b, now, target)
                strategy = update.apply_strategy
            elif target != b.resource_index:
                errors.append(_rollback_error(plan, updates, b.cluster, target))
        _record_strategy(plan, b.cluster, strategy)
        out.append(b)
    plan.state = replace(plan.state, bindings=tuple(out))
    sources = ", ".join(sorted({u.source for u in updates}))
    if not updates:
        plan.rollout_note = HELD
    live = set(plan.live_clusters())
    for b in plan.state.bindings:
        if b.cluster not in live and b.state != UNSCHEDULED:
            plan.waits[b.cluster] = _held_message(plan, b, sources)
    return errors


def _held_message(plan: PlacementPlan, b: Binding, sources: str) -> str:
    latest = plan.state.latest_resources()
    if latest is not None and b.resource_index is not None and b.resource_index < latest.index:
        by = f" by {sources}" if sources else ""
        return f"rollback: at resource snapshot {b.resource_index}{by}, latest is {latest.index}"
    return f"held: External strategy, waiting for {sources}" if sources else HELD


def _record_strategy(plan: PlacementPlan, cluster: str, strategy: object) -> None:
    """An External placement's cluster keeps the apply strategy it was last moved with (a
    staged run's `status.applyStrategy`, §4.4); nothing pushes the placement's to it (§2.2
    step 1 is the rolling-update controller's). None: the placement's own."""
    if isinstance(strategy, Mapping) and dict(strategy) != dict(plan.apply_strategy):
        plan.cluster_apply_strategies[cluster] = dict(strategy)


def _rollback_error(
    plan: PlacementPlan, updates: Sequence[ExternalUpdate], cluster: str, index: int
) -> FleetError:
    source = next(u.source for u in updates if cluster in u.clusters)
    why = plan.unavailable.get(index) or (
        f"resource snapshot index {index} of placement `{plan.key}` was not read from its "
        "recorded commit"
    )
    return FleetError("", None, "", f"{source}: cannot deploy to cluster {cluster}: {why}")


def external_into(
    plan: PlacementPlan,
    updates: list[ExternalUpdate],
    now: datetime,
    prior_index: PriorIndex,
    assume: frozenset[str],
    errors: list[FleetError],
) -> None:
    errors.extend(_external(plan, updates, now, prior_index, assume))

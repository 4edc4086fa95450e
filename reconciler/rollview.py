"""How the rollout stage sees bindings: the agent's Applied/Available/DiffReported for a cluster
(`observe` — only from a report naming the exact content the hub gave that cluster, timed by the
hub's own `now`; a dry run without any status source assumes them), and the `BindingView` /
`PlacementView` every rollout driver reads. Pure; called by `reconciler.rollstage`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from gitfleet.api.report import AgentReport
from reconciler.placement import PlacementPlan
from reconciler.priorindex import given_content
from reconciler.rollout.model import (
    BOUND,
    SCHEDULED,
    UNSCHEDULED,
    BindingView,
    ObservedCondition,
    PlacementView,
)
from reconciler.state import Binding, BindingCondition

MAX_MESSAGE = 1024
"""Report condition messages are cut to this many characters."""
REPORTED_TYPES = ("Applied", "Available", "DiffReported")
HUB_TYPES = ("RolloutStarted", "WorkSynchronized")
"""Binding conditions the hub itself sets (kept from pass to pass while the content stays)."""
SYNC_FAILED = "SyncWorkFailed"


def timed(
    new: Sequence[tuple[str, str, str, str]], prior: Sequence[BindingCondition], now: datetime
) -> list[BindingCondition]:
    """Conditions keeping the prior transition time while status, reason and message match."""
    before = {c.type: c for c in prior}
    out = []
    for ctype, status, reason, message in new:
        old = before.get(ctype)
        same = old is not None and (old.status, old.reason, old.message) == (
            status,
            reason,
            message,
        )
        if same and old is not None:
            out.append(old)  # the very condition a rebuild would make
        else:
            out.append(BindingCondition(ctype, status, reason, message, now))
    return out


def _reported(
    plan: PlacementPlan, b: Binding, report: AgentReport | None, given: str | None
) -> list[tuple[str, str, str, str]]:
    """The agent's conditions about exactly the content the hub gave this cluster (`given`:
    the content hash of its previous index entry)."""
    if b.content is None or b.state == SCHEDULED or given is None or report is None:
        return []
    entry = next((p for p in report.placements if p.key == plan.key), None)
    if entry is None or entry.content_hash != given:
        return []
    plan.reports[b.cluster] = entry
    return [
        (c.type, c.status, c.reason, c.message[:MAX_MESSAGE])
        for c in entry.conditions
        if c.type in REPORTED_TYPES
    ]


def observe(
    plan: PlacementPlan,
    reports: Mapping[str, AgentReport],
    now: datetime,
    prior_index: Mapping[str, Mapping[str, Mapping[str, Any]]],
) -> None:
    """Desired content per targeted cluster, and each binding's reported conditions."""
    plan.desired = _desired(plan)
    latest = plan.target()
    index = latest.index if latest else None
    bindings = []
    for b in plan.state.bindings:
        if b.content is None and b.state == BOUND and b.resource_index == index:
            b = replace(b, content=plan.desired.get(b.cluster))  # state written before contents
        started = [c for c in b.conditions if c.type in HUB_TYPES]
        given = given_content(prior_index.get(b.cluster, {}).get(plan.key))
        reported = timed(_reported(plan, b, reports.get(b.cluster), given), b.conditions, now)
        conditions = (*started, *reported)
        bindings.append(b if conditions == b.conditions else replace(b, conditions=conditions))
    plan.state = replace(plan.state, bindings=tuple(bindings))


def _desired(plan: PlacementPlan) -> dict[str, str]:
    """`desired_content` per targeted cluster, hashed once per distinct manifest tuple (most
    clusters share the placement's default manifests or an override result)."""
    by_tuple: dict[int, str] = {}
    out = {}
    for cluster in plan.targeted_clusters():
        mine = plan.manifests_for(cluster)
        known = by_tuple.get(id(mine))
        if known is None:
            known = by_tuple[id(mine)] = plan.desired_content(cluster)
        out[cluster] = known
    return out


def record_sync(plans: Mapping[str, PlacementPlan], now: datetime) -> None:
    """After the files are laid out: a cluster whose files for a placement could not be written
    as rendered (an object lost to another placement, `assemble`) gets the binding condition
    WorkSynchronized False `SyncWorkFailed` with that message, so the next pass's rollout counts
    the binding as failed (§2.3 HasBindingFailed: not an allow-listed reason); a cluster whose
    files were written drops it. Clusters the rollout did not reach keep what they had."""
    for plan in plans.values():
        if plan.held:
            continue
        live = set(plan.live_clusters())
        bindings = []
        for b in plan.state.bindings:
            if b.cluster in live:
                b = with_sync(b, plan.sync_errors.get(b.cluster), now)
            bindings.append(b)
        if any(a is not b for a, b in zip(bindings, plan.state.bindings, strict=True)):
            plan.state = replace(plan.state, bindings=tuple(bindings))


def with_sync(b: Binding, error: str | None, now: datetime) -> Binding:
    rest = [c for c in b.conditions if c.type != "WorkSynchronized"]
    if error is None:
        return b if len(rest) == len(b.conditions) else replace(b, conditions=tuple(rest))
    failed = timed(
        [("WorkSynchronized", "False", SYNC_FAILED, error[:MAX_MESSAGE])], b.conditions, now
    )
    started = [c for c in rest if c.type == "RolloutStarted"]
    others = [c for c in rest if c.type != "RolloutStarted"]
    return replace(b, conditions=(*started, *failed, *others))


def _assumed(plan: PlacementPlan) -> list[ObservedCondition]:
    """A dry run without any status source: every cluster applied what it was given."""
    if plan.apply_strategy.get("type") == "ReportDiff":
        return [ObservedCondition("DiffReported", "True", "AllWorkHaveDiffReported")]
    return [
        ObservedCondition("Applied", "True", "AllWorkHaveBeenApplied"),
        ObservedCondition("Available", "True", "AllWorkAreAvailable"),
    ]


def binding_view(
    plan: PlacementPlan, b: Binding, assume: frozenset[str] = frozenset()
) -> BindingView:
    """The rollout's view of one binding (`assume`: clusters taken as having applied and made
    available what they were given - a dry run, or AssumeJoined clusters without agents)."""
    latest = plan.target()
    conds = list(b.conditions)
    if b.cluster in assume and b.content is not None and b.state != SCHEDULED:
        conds = [c for c in conds if c.type == "RolloutStarted"] + _assumed(plan)
    failures = plan.cluster(b.cluster).failures
    if failures and b.content == plan.desired.get(b.cluster):
        message = "; ".join(m for _, m in failures[:3])
        conds.append(ObservedCondition("Overridden", "False", "OverriddenFailed", message))
    return BindingView(
        cluster=b.cluster,
        state=b.state,
        resource_index=b.resource_index,
        content=b.content,
        desired_content=plan.desired.get(b.cluster),
        previous_state=b.previous_state,
        conditions=tuple(conds),
        desired_resource_index=latest.index if latest else None,
    )


def _override_names(
    plan: PlacementPlan,
) -> dict[int, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]]:
    """Per renderable index and selected cluster: the override snapshot names it renders with."""
    clusters = [b.cluster for b in plan.state.bindings if b.state != UNSCHEDULED]
    out: dict[int, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {}
    latest = plan.target()
    if latest is not None:
        mine = {c: plan.cluster(c) for c in clusters}
        out[latest.index] = {
            c: (m.cluster_overrides, m.resource_overrides) for c, m in mine.items()
        }
    for index, render in plan.renders.items():
        out[index] = {c: render.names(c) for c in clusters}
    return out


def placement_view(plan: PlacementPlan, assume: frozenset[str] = frozenset()) -> PlacementView:
    latest = plan.state.latest_resources()
    policy = plan.state.latest_policy()
    return PlacementView(
        key=plan.key,
        kind=plan.kind,
        name=plan.name,
        namespace=plan.namespace,
        strategy_type=plan.strategy_type,
        placement_type=plan.placement_type,
        number_of_clusters=plan.number_of_clusters,
        cluster_names=tuple(
            plan.declared.get("spec", {}).get("policy", {}).get("clusterNames") or ()
        ),
        apply_strategy=plan.apply_strategy,
        policy_index=policy.index if policy else 0,
        policy_fulfilled=plan.scheduled.status == "True",
        latest_resource_index=latest.index if latest else None,
        resource_indexes=tuple(s.index for s in plan.state.resource_snapshots),
        resource_commits={s.index: s.commit for s in plan.state.resource_snapshots if s.commit},
        unavailable=dict(plan.unavailable),
        override_snapshots=_override_names(plan),
        bindings=(
            *(binding_view(plan, b, assume) for b in plan.state.bindings),
            *deleting_views(plan),
        ),
    )


def deleting_views(plan: PlacementPlan) -> list[BindingView]:
    """The bindings being deleted (`reconciler.rolldelete`), as the drivers see them: without
    conditions, as deleting a binding bumps its generation and KubeFleet counts a condition only
    at the current one. So a deleting binding is never ready or available (an eviction budget
    counts it unavailable) and never failed (it keeps a maxSurge slot), §2.3 and §5.2."""
    return [
        BindingView(
            cluster=b.cluster,
            state=b.state,
            resource_index=b.resource_index,
            content=b.content,
            previous_state=b.previous_state,
            deleting=True,
        )
        for b in plan.state.deleting
    ]

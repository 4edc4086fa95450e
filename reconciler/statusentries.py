"""The per-cluster entries of a placement's status (`perClusterPlacementStatuses`, spec §8),
each reused across passes while what it is made of is unchanged.

An entry is made of the cluster's scheduling decision, its binding, whether it has the latest
content, its agent's report entry, its override result, its sync error and rollout wait, the
conditions the previous pass wrote for it (whose times it keeps), and a few placement-wide facts.
`cluster_entries` keeps every cluster's entry with exactly those, per placement, and hands the
very same entry back while they compare equal and its conditions kept their times (so the pass's
clock cannot matter). A placement recomputed because one cluster was added or its report moved
builds that cluster's entry only. With each entry are kept what the placement conditions read of
it (`status.condition_summary`: they are counted per distinct summary) and the slots of its
grouping key and emitted text. Called by `reconciler.statusdocs`.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any, NamedTuple

from gitfleet.api import Condition
from gitfleet.load.yamlemit import Pieces
from reconciler.manifests import NO_OVERRIDES, ClusterManifests
from reconciler.placement import PlacementPlan
from reconciler.priorconds import dump_conditions
from reconciler.reports import failure_details
from reconciler.rollout.rolling import STALE_REASON
from reconciler.stagememo import StageMemo
from reconciler.state import Binding
from reconciler.status import (
    Cond,
    Summary,
    cluster_rollout_conditions,
    condition_summary,
    overridden_condition,
    timed,
)

BLOCKED_MESSAGE = "The rollout is being blocked by the rollout strategy"
_Made = tuple[tuple[Any, ...], Summary, tuple[Condition, ...], dict[str, Any], list[Any], list[Any]]
"""(what the entry was made from, the summary of its untimed conditions, its timed conditions,
the entry, its grouping text once made, its emitted lines once written)."""
_ENTRIES: StageMemo[dict[str, _Made]] = StageMemo()
"""Placement key -> each selected cluster's last entry, with the placement-wide facts."""


class Entries(NamedTuple):
    """A placement's per-cluster status entries (`cluster_entries`)."""

    entries: list[dict[str, Any]]
    texts: list[list[Any]]
    """Each entry's grouping-text slot (`gitfleet.api.output.group_named`), kept with it."""
    summaries: Counter[Summary]
    """How many selected clusters have each `status.condition_summary`."""
    by_name: dict[str, tuple[Condition, ...]]
    pieces: Pieces
    """id of each kept entry -> the slot its emitted lines are kept in (`dump_yaml`)."""


def cluster_entries(
    plan: PlacementPlan,
    prior: dict[str, tuple[Condition, ...]],
    reports: Any,
    now: datetime,
) -> Entries:
    """perClusterPlacementStatuses (timed) with their grouping-text slots, the untimed
    conditions of selected clusters and the timed conditions by cluster (as
    `_placement_conditions` reads them back)."""
    latest = plan.state.latest_resources()
    index = latest.index if latest else 0
    bindings = {b.cluster: b for b in plan.state.bindings}
    live = set(plan.live_clusters())
    gen = plan.state.generation
    shared = (gen, index, report_diff(plan), plan.strategy_type)
    last = _ENTRIES.last(plan.key)
    before = last[1] if last is not None and last[0] == shared else {}
    made: dict[str, _Made] = {}
    entries: list[dict[str, Any]] = []
    texts: list[list[Any]] = []
    kinds: list[Summary] = []
    by_name: dict[str, tuple[Condition, ...]] = {}
    pieces: Pieces = {}
    # One look per selected cluster: what its entry reads, compared with what it was made from.
    reported, custom, errors, waits = plan.reports, plan.per_cluster, plan.sync_errors, plan.waits
    for d in plan.decisions:
        if not d.selected:
            continue
        name = d.cluster
        binding = bindings.get(name)
        on_latest = binding is not None and name in live
        conds = prior.get(name, ())
        inputs = (
            d,
            binding,
            on_latest,
            reported.get(name) if on_latest else None,
            custom.get(name, NO_OVERRIDES),
            errors.get(name),
            waits.get(name),
            conds,
        )
        found = before.get(name)
        if found is None or found[0] != inputs:
            found = _entry(plan, inputs, index, gen, now)
        if found[2] is conds or kept_times(found[2], conds):
            made[name] = found
        kinds.append(found[1])
        by_name[name] = found[2]
        entries.append(found[3])
        texts.append(found[4])
        pieces[id(found[3])] = found[5]
    summaries = Counter(kinds)
    _ENTRIES.put(plan.key, shared, made)
    if plan.fixed_names is not None:
        missing = max(plan.fixed_names - len(entries), 0)
        for i, d in enumerate([d for d in plan.decisions if not d.selected][:missing]):
            failed = [Cond("Scheduled", "False", "ScheduleFailed", d.reason)]
            unselected = f"#unselected-{i}"
            timed_conds = by_name[unselected] = timed(failed, prior.get(unselected, ()), gen, now)
            entries.append({"conditions": dump_conditions(timed_conds)})
            texts.append([])
    return Entries(entries, texts, summaries, by_name, pieces)


def kept_times(conds: tuple[Condition, ...], prior: tuple[Condition, ...]) -> bool:
    """Every condition is the prior's own object: the entry did not depend on the clock."""
    if conds is prior:  # a kept entry's conditions, read back as the prior ones
        return True
    return {id(c) for c in conds} <= {id(c) for c in prior}


def _entry(
    plan: PlacementPlan, inputs: tuple[Any, ...], index: int, gen: int, now: datetime
) -> _Made:
    d, binding, on_latest, report, custom, sync_error, _, prior = inputs
    conds = [Cond("Scheduled", "True", "Scheduled", d.reason)]
    failure = "; ".join(m for _, m in custom.failures[:3]) or None
    if on_latest and binding is not None:
        conds += cluster_rollout_conditions(
            True,
            sync_error,
            _hub_reported(binding),
            report_diff(plan),
            overridden_condition(custom.overridden, failure),
        )
    else:
        conds.append(_not_started(plan, binding))
    timed_conds = timed(conds, prior, gen, now)
    entry = {
        "clusterName": d.cluster,
        **_rollout_fields(plan, binding, index),
        **_applicable(custom),
        "conditions": dump_conditions(timed_conds),
        **failure_details(report),
    }
    return inputs, condition_summary(conds), timed_conds, entry, [], []


def _not_started(plan: PlacementPlan, binding: Binding | None) -> Cond:
    """RolloutStarted of a selected cluster that does not have the latest content (§8.3)."""
    if plan.strategy_type == "External":
        return Cond(
            "RolloutStarted",
            "Unknown",
            "RolloutControlledByExternalController",
            "The rollout is controlled by an external controller (an update run)",
        )
    started = binding.condition("RolloutStarted") if binding is not None else None
    if started is not None and started.status == "False":
        return Cond("RolloutStarted", "False", STALE_REASON, BLOCKED_MESSAGE)
    return cluster_rollout_conditions(False, None)[0]


def _rollout_fields(plan: PlacementPlan, binding: Binding | None, index: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "observedResourceIndex": str(
            binding.resource_index
            if binding is not None and binding.resource_index is not None
            else index
        )
    }
    waiting = plan.waits.get(binding.cluster) if binding is not None else None
    if waiting:
        out["rolloutWaiting"] = waiting
    return out


def _hub_reported(binding: Binding) -> list[Cond]:
    """The agent's conditions the hub recorded for exactly this binding's content."""
    return [
        Cond(c.type, c.status, c.reason, c.message)
        for c in binding.conditions
        if c.type in ("Applied", "Available", "DiffReported")
    ]


def _applicable(custom: ClusterManifests) -> dict[str, Any]:
    """KubeFleet's applicable override snapshot lists: CRO names, RO {name, namespace}."""
    out: dict[str, Any] = {}
    if custom.cluster_overrides:
        out["applicableClusterResourceOverrides"] = list(custom.cluster_overrides)
    if custom.resource_overrides:
        out["applicableResourceOverrides"] = [
            {"name": ref.split("/", 1)[1], "namespace": ref.split("/", 1)[0]}
            for ref in custom.resource_overrides
        ]
    return out


def report_diff(plan: PlacementPlan) -> bool:
    return plan.apply_strategy.get("type") == "ReportDiff"

"""How the rollout stage sees bindings: the agent's Applied/Available/DiffReported for a cluster
(`observe` — only from a report naming the exact content the hub gave that cluster, timed by the
hub's own `now`; a dry run without any status source assumes them), and the `BindingView` /
`PlacementView` every rollout driver reads. Pure; called by `reconciler.rollstage`.

A placement recomputed because one cluster was added or removed, or one binding changed, costs
only what changed: each cluster's desired content hash, observed binding and `BindingView` are
remembered per cluster with the binding or manifests they were made from and the plan facts
they read, looked up a placement at a time (`reconciler.rollsplice.Rows`; `_observed` and
`_view` read nothing else, so the key cannot miss an input), and an observation that read the
clock is never remembered. Binding sync conditions after the layout are `reconciler.rollsync`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from itertools import compress, repeat
from operator import and_, attrgetter, is_, is_not, itemgetter, ne
from typing import Any, cast

from gitfleet.api.report import AgentReport, PlacementReport
from reconciler.manifests import Manifest, manifests_content_hash
from reconciler.placement import PlacementPlan
from reconciler.priorindex import given_content
from reconciler.rollnames import override_names
from reconciler.rollout.model import (
    BOUND,
    SCHEDULED,
    UNSCHEDULED,
    BindingView,
    ObservedCondition,
    PlacementView,
)
from reconciler.rollsplice import NEVER, Column, Rows
from reconciler.stagememo import IdentityMemo
from reconciler.state import Binding, BindingCondition

MAX_MESSAGE = 1024
"""Report condition messages are cut to this many characters."""
REPORTED_TYPES = ("Applied", "Available", "DiffReported")
HUB_TYPES = ("RolloutStarted", "WorkSynchronized")
"""Binding conditions the hub itself sets (kept from pass to pass while the content stays)."""
SYNC_FAILED = "SyncWorkFailed"
ReportEntries = Mapping[str, Mapping[str, PlacementReport]]
"""cluster -> placement key -> the cluster's report entry about that placement."""


class EntryTable(dict[str, dict[str, PlacementReport]]):
    """`ReportEntries` as `report_entries` builds them: each cluster's entries are one dict per
    report object, never changed once built (`rollfacts` compares them by identity)."""


_entries: IdentityMemo[dict[str, PlacementReport]] = IdentityMemo()
_NAMES: Column[str] = Column(attrgetter("cluster"))
_STATES: Column[str] = Column(attrgetter("state"))


def cluster_names(key: str, bindings: tuple[Binding, ...]) -> list[str]:
    """`[b.cluster for b in bindings]`, spliced from the last call's list for placement `key`
    (`rollsplice.Column`: only bindings that are not last call's objects are read). The
    caller must not change the list."""
    return _NAMES.of(key, bindings)


def targeted(key: str, bindings: tuple[Binding, ...]) -> list[str]:
    """`PlacementPlan.targeted_clusters` of these bindings (a new list), read as `cluster_names`."""
    states = _STATES.of(key, bindings)
    return sorted(compress(_NAMES.of(key, bindings), map(ne, states, repeat(UNSCHEDULED))))


def report_entries(reports: Mapping[str, AgentReport]) -> ReportEntries:
    """Every report's entries by placement key, the first of a key as a scan finds it (built
    once per placements list: a report that differs from the cluster's last one only in its
    heartbeat shares that list, `gitfleet.load.report.reread_agent_report`, and so gives the
    very entries of last pass)."""
    _entries.next_round()
    out = EntryTable()
    for cluster, report in reports.items():
        found = _entries.get(report.placements)
        if found is None:
            found = {}
            for p in report.placements:
                found.setdefault(p.key, p)
            _entries.put(report.placements, found)
        out[cluster] = found
    return out


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
    b: Binding, entry: PlacementReport | None, given: str | None
) -> PlacementReport | None:
    """The agent's report entry about exactly the content the hub gave this cluster (`given`:
    the content hash of its previous index entry), else None."""
    if b.content is None or b.state == SCHEDULED or given is None or entry is None:
        return None
    return entry if entry.content_hash == given else None


ObserveFacts = tuple[int | None, str | None, PlacementReport | None, str | None]
"""What `observe` reads for one binding besides the binding: the target index, the cluster's
desired content, its agent's report entry about the placement, the content it was given."""
_OBSERVED: Rows[tuple[Binding, PlacementReport | None]] = Rows()


def _observed(
    b: Binding, facts: ObserveFacts, now: datetime
) -> tuple[Binding, PlacementReport | None]:
    """One binding observed (from `b` and `facts` only), with the report entry it counts."""
    index, desired, entry, given = facts
    if b.content is None and b.state == BOUND and b.resource_index == index:
        b = replace(b, content=desired)  # state written before contents
    started = [c for c in b.conditions if c.type in HUB_TYPES]
    counted = _reported(b, entry, given)
    new = [
        (c.type, c.status, c.reason, c.message[:MAX_MESSAGE])
        for c in (counted.conditions if counted is not None else ())
        if c.type in REPORTED_TYPES
    ]
    conditions = (*started, *timed(new, b.conditions, now))
    return (b if conditions == b.conditions else replace(b, conditions=conditions)), counted


def observe(
    plan: PlacementPlan,
    entries: ReportEntries,
    now: datetime,
    prior_index: Mapping[str, Mapping[str, Mapping[str, Any]]],
    given: Sequence[str | None] | None = None,
    got: Sequence[PlacementReport | None] | None = None,
) -> None:
    """Desired content per targeted cluster, and each binding's reported conditions (a binding
    whose result did not read the clock is remembered: `reconciler.rollsplice.Rows`). `given`:
    the content each binding's cluster was given (its previous index entry's), when the caller
    has it; `got`: each binding's cluster's report entry about the placement, in the bindings'
    order (`rollfacts.Facts.reports`: () without any entries), when the caller has it."""
    plan.desired = _desired(plan)
    latest = plan.target()
    index = latest.index if latest else None
    key, bindings = plan.key, plan.state.bindings
    names = cluster_names(key, bindings)
    none: Mapping[str, Any] = {}
    if got is None or len(got) != len(names):
        got = [entries.get(c, none).get(key) for c in names] if entries else [None] * len(names)
    if given is None or len(given) != len(names):
        given = [given_content(prior_index.get(c, none).get(key)) for c in names]
    desired = map(plan.desired.get, names)
    rows = list(zip(bindings, repeat(index), desired, got, given, strict=False))
    found = _OBSERVED.lookup(key, names, rows)
    for i in list(compress(range(len(found)), map(is_, found, repeat(None)))):
        b, facts = rows[i][0], rows[i][1:]
        made = found[i] = _observed(b, facts, now)
        if not _kept_times(made[0], b):
            rows[i] = NEVER  # it read the clock: made again next pass
    results = cast(list[tuple[Binding, PlacementReport | None]], found)
    _OBSERVED.end(key, names, rows, results)
    # a counted entry is the cluster's entry itself (or one equal to it: rows were equal)
    counted = list(map(is_not, map(itemgetter(1), results), repeat(None)))
    plan.reports.update(
        zip(
            compress(names, counted),
            compress(cast(Sequence[PlacementReport], got), counted),
            strict=True,
        )
    )
    plan.state = replace(plan.state, bindings=tuple(map(itemgetter(0), results)))


def _kept_times(out: Binding, b: Binding) -> bool:
    """Every condition of `out` is one of `b`'s own objects: observing did not read the clock
    (compared by id in C: both bindings hold their conditions, so the ids are theirs)."""
    return set(map(id, b.conditions)).issuperset(map(id, out.conditions))


_CONTENTS: Rows[str] = Rows()
_TUPLES: Column[tuple[Manifest, ...]] = Column()
"""Placement key -> each targeted cluster's manifests, by its per-cluster result object (and the
placement's default manifests)."""
_FAILURES: Column[tuple[tuple[str, str], ...]] = Column(lambda m: () if m is None else m.failures)
_ASSUMABLE: Column[bool] = Column(lambda b: b.content is not None and b.state != SCHEDULED)


def _desired(plan: PlacementPlan) -> dict[str, str]:
    """`desired_content` per targeted cluster, hashed once per distinct manifest tuple (most
    clusters share the placement's default manifests or an override result) and remembered
    while a cluster's manifests are the very same tuple."""
    targeted_ = targeted(plan.key, plan.state.bindings)
    per, default = plan.per_cluster, plan.manifests
    tuples = _TUPLES.of(
        plan.key,
        tuple(map(per.get, targeted_)),
        default,
        lambda m: default if m is None or m.manifests is None else m.manifests,
    )
    found = _CONTENTS.lookup(plan.key, targeted_, tuples)
    by_tuple: dict[int, str] = {}
    for i in list(compress(range(len(found)), map(is_, found, repeat(None)))):
        mine = tuples[i]
        known = by_tuple.get(id(mine))
        if known is None:
            known = by_tuple[id(mine)] = manifests_content_hash(mine)
        found[i] = known
    hashes = cast(list[str], found)
    _CONTENTS.end(plan.key, targeted_, tuples, hashes)
    return dict(zip(targeted_, hashes, strict=True))


ASSUMED_DIFF = (ObservedCondition("DiffReported", "True", "AllWorkHaveDiffReported"),)
ASSUMED_APPLIED = (
    ObservedCondition("Applied", "True", "AllWorkHaveBeenApplied"),
    ObservedCondition("Available", "True", "AllWorkAreAvailable"),
)
"""A dry run without any status source: every cluster applied what it was given."""
ViewFacts = tuple[int | None, bool, bool, tuple[tuple[str, str], ...], str | None]
"""What a `BindingView` reads of the plan for its cluster: the target index, whether the
cluster is assumed ready, whether the placement reports diffs, its override failures and its
desired content."""
_VIEWS: Rows[BindingView] = Rows()


def assumed_ready(b: Binding, assume: frozenset[str]) -> bool:
    """Whether `b`'s view takes its cluster as having applied and made available what it was
    given (`assume`: `binding_view`'s): such a view is ready whatever else it holds (its
    DiffReported or Available is True, with a trackable reason)."""
    return b.cluster in assume and b.content is not None and b.state != SCHEDULED


def _view_facts(
    plan: PlacementPlan, b: Binding, assume: frozenset[str], index: int | None
) -> ViewFacts:
    assumed = assumed_ready(b, assume)
    diff = assumed and plan.apply_strategy.get("type") == "ReportDiff"
    failures = plan.cluster(b.cluster).failures
    return index, assumed, diff, failures, plan.desired.get(b.cluster)


def _view(b: Binding, facts: ViewFacts) -> BindingView:
    """The view of `b` made from `facts` only (so remembering it by them is exact)."""
    index, assumed, diff, failures, desired = facts
    conds = list(b.conditions)
    if assumed:
        conds = [c for c in conds if c.type == "RolloutStarted"]
        conds += ASSUMED_DIFF if diff else ASSUMED_APPLIED
    if failures and b.content == desired:
        message = "; ".join(m for _, m in failures[:3])
        conds.append(ObservedCondition("Overridden", "False", "OverriddenFailed", message))
    return BindingView(
        cluster=b.cluster,
        state=b.state,
        resource_index=b.resource_index,
        content=b.content,
        desired_content=desired,
        previous_state=b.previous_state,
        conditions=tuple(conds),
        desired_resource_index=index,
    )


def _target_index(plan: PlacementPlan) -> int | None:
    latest = plan.target()
    return latest.index if latest else None


def binding_view(
    plan: PlacementPlan, b: Binding, assume: frozenset[str] = frozenset()
) -> BindingView:
    """The rollout's view of one binding (`assume`: clusters taken as having applied and made
    available what they were given - a dry run, or AssumeJoined clusters without agents)."""
    facts = _view_facts(plan, b, assume, _target_index(plan))
    found = _VIEWS.peek(plan.key, b.cluster, (b, *facts))
    return found if found is not None else _view(b, facts)


def _view_rows(plan: PlacementPlan, assume: frozenset[str]) -> list[tuple[Any, ...]]:
    """(binding, *`_view_facts`) of every binding, built a column at a time."""
    bindings, index = plan.state.bindings, _target_index(plan)
    names = cluster_names(plan.key, bindings)
    failures = _FAILURES.of(plan.key, tuple(map(plan.per_cluster.get, names)))
    desired = map(plan.desired.get, names)
    if not assume:
        no = repeat(False)
        return list(zip(bindings, repeat(index), no, no, failures, desired, strict=False))
    # whether each binding could be assumed is spliced (it reads the binding alone); the
    # cluster's membership of `assume` (a new set when a cluster joins) is looked up in C
    ready = _ASSUMABLE.of(plan.key, bindings)
    assumed = list(map(and_, map(assume.__contains__, names), ready))
    diff = assumed if plan.apply_strategy.get("type") == "ReportDiff" else repeat(False)
    return list(zip(bindings, repeat(index), assumed, diff, failures, desired, strict=False))


def binding_views(plan: PlacementPlan, assume: frozenset[str]) -> tuple[BindingView, ...]:
    """`binding_view` of every binding, each remembered with what it was made of."""
    names = cluster_names(plan.key, plan.state.bindings)
    rows = _view_rows(plan, assume)
    found = _VIEWS.lookup(plan.key, names, rows)
    for i in list(compress(range(len(found)), map(is_, found, repeat(None)))):
        found[i] = _view(rows[i][0], rows[i][1:])
    views = cast(list[BindingView], found)
    _VIEWS.end(plan.key, names, rows, views)
    return tuple(views)


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
        override_snapshots=override_names(plan),
        bindings=(*binding_views(plan, assume), *deleting_views(plan)),
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

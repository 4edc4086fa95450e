"""The per-cluster entries of a placement's status (`perClusterPlacementStatuses`, spec §8),
each reused across passes while what it is made of is unchanged.

An entry is made of the cluster's scheduling decision, its binding, whether it has the latest
content, its agent's report entry, its override result, its sync error and rollout wait, the
conditions the previous pass wrote for it (whose times it keeps), and a few placement-wide facts.
`cluster_entries` keeps every cluster's entry with exactly those, per placement, and hands the
very same entry back while they compare equal. An entry whose conditions took the pass's time is
kept with the conditions it wrote in place of its prior ones: the next pass reads those back as
its prior, and with them the same inputs give that very entry at any time (every condition keeps
its prior one). A placement recomputed because one cluster was added or its report moved
builds that cluster's entry only, and looks at that cluster only: what the entries read is kept
by cluster as columns (`_Columns`), each diffed with last pass's in C (skipped for the very
same or an equal column), so the other clusters cost no Python step each. The decisions and
bindings columns are last pass's patched where the plan's tuples hold other objects
(`reconciler.statuskeyed`: the clusters that changed are known, those columns not diffed), and
the kept entries are a table patched in place (`reconciler.statustable`: the placement's entry
slots and summary counts follow the clusters that changed). With each entry
are kept what the placement conditions read of it (`status.condition_summary`: one object per
distinct summary, counted by identity) and the slots of its grouping key and emitted text.
Entries share their conditions and the dumped dicts of them (`status.timed`,
`statusrollout.dumped`): a cold pass holds each distinct condition once, not once a cluster. A
cluster's rollout conditions (after Scheduled) are timed, dumped, summarized and written as JSON
once per distinct set (`reconciler.statusrollout`), and its grouping text is made with the entry
from those texts (`statusgroups.entry_text`): only its Scheduled condition is its own.
Called by `reconciler.statusdocs`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime
from itertools import compress
from operator import is_not, itemgetter
from typing import Any, NamedTuple, cast

from gitfleet.api import Condition
from gitfleet.load.yamlemit import Pieces
from reconciler.manifests import NO_OVERRIDES, ClusterManifests
from reconciler.placement import PlacementPlan
from reconciler.priorconds import dump_conditions
from reconciler.reports import failure_details
from reconciler.rollkept import frozen
from reconciler.schedule.cycle import BOUND
from reconciler.schedule.outcome import Decision
from reconciler.stagememo import StageMemo
from reconciler.state import Binding
from reconciler.status import (
    Cond,
    Summary,
    timed,
)
from reconciler.statusgroups import entry_text
from reconciler.statuskeyed import Keys, gone, moved, placement_keys
from reconciler.statusrollout import dumped, dumped_json, report_diff, rollout, rollout_conds
from reconciler.statustable import Table

_Made = tuple[tuple[Any, ...], Summary, tuple[Condition, ...], dict[str, Any], list[Any], list[Any]]
"""(what the entry was made from, the summary of its untimed conditions, its timed conditions,
the entry, its grouping text once made, its emitted lines once written)."""
_ENTRIES: StageMemo[tuple[Table, Any, Keys]] = StageMemo()
"""Placement key -> each selected cluster's last entry and what the entries read then
(`_Columns`, and the bindings and decisions keyed), with the placement-wide facts."""


class Entries(NamedTuple):
    """A placement's per-cluster status entries (`cluster_entries`)."""

    entries: list[dict[str, Any]]
    texts: list[list[Any]]
    """Each entry's grouping-text slot (`gitfleet.api.grouping.group_named`), kept with it."""
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
    freeze: Callable[[dict[Any, Any]], dict[Any, Any]] = frozen,
) -> Entries:
    """perClusterPlacementStatuses (timed) with their grouping-text slots, the untimed
    conditions of selected clusters and the timed conditions by cluster (as
    `_placement_conditions` reads them back). `freeze`: how the plan's dicts are taken
    (`rollkept.frozen`, or the caller's copies of this call)."""
    latest = plan.state.latest_resources()
    index = latest.index if latest else 0
    gen = plan.state.generation
    target = plan.target()
    target_index = target.index if target is not None else None
    shared = (gen, index, report_diff(plan), plan.strategy_type, target_index)
    last = _ENTRIES.last(plan.key)
    _ENTRIES.drop(plan.key)  # taken: its table is patched in place (`statustable`)
    keys = placement_keys(last[1][2] if last is not None else None, plan)
    selected, names = keys[1].picked, keys[1].names  # the kept lists: read, never changed
    columns = _columns(plan, keys, prior, freeze)
    before = last[1][0] if last is not None and last[0] == shared else None
    todo = None  # every selected cluster looked at
    if last is not None and before is not None and before.made and columns is not None:
        todo = _changed(last[1][1], columns, prior, names, before.made, moved(keys))
    look = _Look(plan, before.made if before is not None else {}, prior, target_index, index, now)
    if todo is None or columns is None or before is None:
        look.bindings = {b.cluster: b for b in plan.state.bindings}
        mades = list(map(look, selected))
        table = Table(names, mades)
    else:
        look.bindings, look.one_each = columns.bindings, True
        new = {name: look(columns.decisions[name]) for name in todo}
        table = before
        table.patch(gone(keys, table.made), new)
        mades = list(map(table.made.__getitem__, names))
    by_name = dict(zip(names, map(_TIMED, mades), strict=True))
    kept = columns._replace(conds=by_name) if columns is not None else None
    _ENTRIES.put(plan.key, shared, (table, kept, keys))
    entries = list(map(_ENTRY, mades))
    texts = list(map(_TEXT, mades))
    pieces: Pieces = table.pieces
    summaries = table.summaries()
    if plan.fixed_names is not None:
        missing = max(plan.fixed_names - len(entries), 0)
        for i, d in enumerate([d for d in plan.decisions if not d.selected][:missing]):
            failed = [Cond("Scheduled", "False", "ScheduleFailed", d.reason)]
            unselected = f"#unselected-{i}"
            timed_conds = by_name[unselected] = timed(failed, prior.get(unselected, ()), gen, now)
            entries.append({"conditions": dump_conditions(timed_conds)})
            texts.append([])
    return Entries(entries, texts, summaries, by_name, pieces)


_TIMED, _ENTRY, _TEXT = itemgetter(2), itemgetter(3), itemgetter(4)


class _Columns(NamedTuple):
    """What each selected cluster's entry reads, by cluster (frozen: plans change)."""

    decisions: dict[str, Decision]
    bindings: dict[str, Binding]
    desired: dict[str, str]
    reports: dict[str, Any]
    custom: dict[str, ClusterManifests]
    errors: dict[str, str]
    waits: dict[str, str]
    conds: dict[str, tuple[Condition, ...]]
    """The prior conditions, and once kept the conditions written (the next pass's prior)."""


def _columns(
    plan: PlacementPlan,
    keys: Keys,
    prior: dict[str, tuple[Condition, ...]],
    freeze: Callable[[dict[Any, Any]], dict[Any, Any]] = frozen,
) -> _Columns | None:
    """The placement's per-cluster inputs; None when a cluster has two decisions or two
    bindings (its entries are then looked at one by one, every pass). The plan's dicts are
    taken by `freeze` (`rollkept.frozen`: a remembered stage result's dict is itself, no copy;
    `statusdocs` hands the copies it already made of them this call)."""
    bindings, decisions = keys
    if not bindings.unique or not decisions.unique:
        return None
    return _Columns(
        decisions.by_name,
        bindings.by_name,
        freeze(plan.desired),
        freeze(plan.reports),
        freeze(plan.per_cluster),
        freeze(plan.sync_errors),
        freeze(plan.waits),
        prior,
    )


def _changed(
    last: _Columns | None,
    now: _Columns,
    prior: dict[str, Any],
    names: list[str],
    before: dict[str, _Made],
    known: tuple[set[str] | None, set[str] | None] = (None, None),
) -> set[str] | None:
    """The selected clusters whose entry may differ from the one kept: any of their inputs is
    another object than last pass's (the conditions: than the ones written then), or they have
    no kept entry; None when last pass kept no columns (every cluster is looked at). A column
    that is last pass's very dict, or equal to it (in C), is skipped; another is diffed by
    identity over the selected names, in C. `known`: the clusters whose decision, and whose
    binding, may be another object (`statuskeyed.moved`; a column known is not diffed)."""
    if last is None:
        return None
    changed = _diffed(last.conds, prior, names)  # by identity: the times kept are the objects
    for old, new, known_ in zip(last[:-1], now[:-1], (*known, *[None] * 5), strict=True):
        if known_ is not None:  # the decisions and the bindings: their changes known
            changed |= known_
        elif old is not new and old != new:  # equal columns: their entries compare equal too
            changed |= _diffed(cast(Mapping[str, Any], old), cast(Mapping[str, Any], new), names)
    return changed | (set(names) - before.keys())


def _diffed(old: Mapping[str, Any], new: Mapping[str, Any], names: list[str]) -> set[str]:
    """The names whose value in `new` is another object than in `old` (or in one only), in C."""
    if old is new:
        return set()
    return set(compress(names, map(is_not, map(old.get, names), map(new.get, names))))


class _Look:
    """One cluster's entry: the kept one when it was made from equal inputs, else made."""

    def __init__(
        self,
        plan: PlacementPlan,
        before: dict[str, _Made],
        prior: dict[str, tuple[Condition, ...]],
        target: int | None,
        index: int,
        now: datetime,
    ) -> None:
        self.plan, self.before, self.prior, self.now = plan, before, prior, now
        self.target, self.index, self.gen = target, index, plan.state.generation
        self.bindings: dict[str, Binding] = {}
        self.one_each = False
        """Each cluster has one binding (`bindings`): its own says whether it is live."""
        self.live: set[str] | None = None

    def _on_latest(self, name: str) -> tuple[Binding | None, bool]:
        """The cluster's binding, and whether it gets the target content in this pass's output
        (`PlacementPlan.live_clusters`; with one binding a cluster, that binding alone says)."""
        b = self.bindings.get(name)
        if b is None:
            return None, False
        if self.one_each:
            live = b.state == BOUND and b.resource_index == self.target
            return b, live and (b.content is None or b.content == self.plan.desired.get(name))
        if self.live is None:
            self.live = set(self.plan.live_clusters())
        return b, name in self.live

    def __call__(self, d: Decision) -> _Made:
        plan, name = self.plan, d.cluster
        binding, on_latest = self._on_latest(name)
        conds = self.prior.get(name, ())
        inputs = (
            d,
            binding,
            on_latest,
            plan.reports.get(name) if on_latest else None,
            plan.per_cluster.get(name, NO_OVERRIDES),
            plan.sync_errors.get(name),
            plan.waits.get(name),
            conds,
        )
        found = self.before.get(name)
        if found is None or found[0] != inputs:
            found = _entry(plan, inputs, self.index, self.gen, self.now)
            if not kept_times(found[2], conds):  # the pass's clock set a condition
                found = ((*inputs[:-1], found[2]), *found[1:])
        return found


def kept_times(conds: tuple[Condition, ...], prior: tuple[Condition, ...]) -> bool:
    """Every condition is the prior's own object: the entry did not depend on the clock."""
    if conds is prior:  # a kept entry's conditions, read back as the prior ones
        return True
    return {id(c) for c in conds} <= {id(c) for c in prior}


def _entry(
    plan: PlacementPlan, inputs: tuple[Any, ...], index: int, gen: int, now: datetime
) -> _Made:
    d, binding, on_latest, report, custom, sync_error, _, prior = inputs
    scheduled = timed((Cond("Scheduled", "True", "Scheduled", d.reason),), prior, gen, now)
    rest = rollout(rollout_conds(plan, binding, on_latest, custom, sync_error), prior, gen, now)
    first = dumped(scheduled[0])
    entry = {
        "clusterName": d.cluster,
        **_rollout_fields(plan, binding, index),
        **_applicable(custom),
        "conditions": [first, *rest.dumped],
        **failure_details(report),
    }
    # from the shared conditions' texts: the document groups every entry it is made with
    texts: list[Any] = [entry_text(entry, f"[{dumped_json(scheduled[0])}{rest.text}]")]
    return inputs, rest.summary, scheduled + rest.timed, entry, texts, []


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

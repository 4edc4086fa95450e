"""Status files of the output tree: `status/placements/<key>.yaml` and `status/clusters/<name>.yaml`.

A placement's status file is the placement as KubeFleet shows it (defaults applied, generation
counted by spec changes) with `status.conditions`, `observedResourceIndex`, `selectedResources`
and the per-cluster statuses (spec §8), clusters with identical entries grouped
(`gitfleet.api.output.group_cluster_statuses`, in C: `reconciler.statusgroups`). A cluster's
status file is its MemberCluster with the reported status and gitfleet's eligibility verdict. Condition times are carried over from the
previous pass. A recomputed status file costs in proportion to the clusters that changed: each
cluster's entry, grouping key, condition summary and emitted text are kept with it
(`reconciler.statusentries`), and the file is the rest of the document with the entries and the
groups' cluster names spliced in from kept texts (`reconciler.yamlparts.Spliced`; the same bytes
as emitting it whole). A status file is kept with the inputs it was made from and the conditions it
wrote, which the next pass reads back: equal inputs give the same bytes then, whatever the clock
(`_STATUSES`); an unchanged placement is found without a Python step (`reconciler.statusrows`).
Called by `pass_`; cluster status files are `reconciler.clusterstatus`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import partial
from itertools import compress
from operator import attrgetter
from typing import Any, TypeVar

import yaml

from gitfleet.api.output import (
    GROUPS_FIELD,
    PER_CLUSTER_FIELD,
    placement_status_path,
)
from gitfleet.api.report import AgentReport
from gitfleet.load.yamlemit import Pieces
from gitfleet.load.yamlio import dump_yaml
from reconciler.govern.deletion import CONDITION as DELETION_HELD
from reconciler.govern.deletion import REASON as DELETION_REASON
from reconciler.isolate import hold
from reconciler.output import yaml_bytes
from reconciler.placement import PlacementPlan
from reconciler.priorconds import PriorConditions, dump_conditions
from reconciler.priorconds import placement_conditions_of as _placement_conditions
from reconciler.priorconds import status_of as _status_of
from reconciler.priorparse import derive_own, remember, remember_at
from reconciler.priorstate import CONDITIONS_TAG, read_placement_prior, status_conditions
from reconciler.rollkept import Frozen, frozen
from reconciler.stagememo import IdentityMemo, StageMemo
from reconciler.state import State
from reconciler.status import (
    Cond,
    deleting_message,
    summarized_conditions,
    timed,
)
from reconciler.statusentries import Entries, cluster_entries
from reconciler.statusgroups import grouped_statuses
from reconciler.statusrollout import next_round as next_entries_round
from reconciler.statusrollout import report_diff
from reconciler.statusrows import FileRows, Made
from reconciler.yamlparts import Blocks, Spliced, grouped_parts, items_block

T = TypeVar("T")


def derive_status(prior: State, path: str, tag: str, derive: Callable[[Any], T], empty: T) -> T:
    """`derive(status)` of a previous status file, `empty` when missing or unreadable."""
    if path not in prior.output:
        return empty
    try:
        return derive_own(prior.output, path, tag, lambda doc: derive(_status_of(doc)))
    except (yaml.YAMLError, AttributeError, TypeError, ValueError):
        return empty


def prior_placement_conditions(prior: State, key: str) -> PriorConditions:
    """Conditions as the previous pass wrote them in the placement's status file: recorded in
    `state/prior/` (`reconciler.priorstate`), else parsed from that file (missing or
    unreadable status only means new condition times)."""
    record = read_placement_prior(prior.output, key)
    if record is not None and record.conditions is not None:
        return record.conditions
    return status_conditions(prior.output, key) or ((), {})


def _held_conditions(plan: PlacementPlan) -> list[Cond]:
    prefix = plan.kind
    conds = [
        Cond(
            prefix + "Scheduled",
            plan.scheduled.status,
            plan.scheduled.reason,
            plan.scheduled.message,
        )
    ]
    hold = plan.deletion_hold
    if plan.scheduled.status == "True":
        reason = plan.errors[0][1] if plan.errors else "an input failed to load"
        reason = hold.message() if hold is not None and not plan.errors else reason
        message = f"The rollout is held, the clusters keep the previous resources: {reason}"
        conds.append(Cond(prefix + "RolloutStarted", "False", "RolloutNotStartedYet", message))
    if hold is not None:
        conds.append(Cond(DELETION_HELD, "True", DELETION_REASON, hold.message()))
    return conds


def placement_status_doc(
    plan: PlacementPlan,
    prior: PriorConditions,
    reports: Mapping[str, AgentReport],
    now: datetime,
    freeze: Callable[[dict[Any, Any]], dict[Any, Any]] = frozen,
) -> tuple[dict[str, Any], PriorConditions, Pieces]:
    """The status document of one placement (spec §8), its conditions as
    `prior_placement_conditions` reads them back next pass, and the line slots of its kept
    per-cluster entries (`dump_yaml`'s `pieces`). `freeze`: how the plan's per-cluster dicts
    are taken (`placement_status_files`: the copies it made of them this call)."""
    gen = plan.state.generation
    made = Entries([], [], Counter(), {}, {})
    if plan.held:
        conds = _held_conditions(plan)
    else:
        made = cluster_entries(plan, prior[1], reports, now, freeze)
        conds = summarized_conditions(plan.kind, plan.scheduled, made.summaries, report_diff(plan))
        if plan.scheduled.status == "Unknown":
            made = Entries([], [], Counter(), {}, {})
    top = timed(conds, prior[0], gen, now)
    status: dict[str, Any] = {"conditions": dump_conditions(top)}
    latest = plan.state.latest_resources()
    if latest is not None:
        status["observedResourceIndex"] = str(latest.index)
    if plan.selection is not None and not plan.held:
        status["selectedResources"] = [r.identifier() for r in plan.selection.resources]
    singles, groups = grouped_statuses(made.entries, made.texts)
    if singles:
        status[PER_CLUSTER_FIELD] = singles
    if groups:
        status[GROUPS_FIELD] = groups
    if plan.state.deleting and not plan.held:
        status["deletingClusters"] = [
            {"clusterName": b.cluster, "message": deleting_message(b.cluster, b.removing)}
            for b in sorted(plan.state.deleting, key=lambda b: b.cluster)
        ]
    doc = dict(plan.declared)
    doc["metadata"] = {**_declared_metadata(doc.get("metadata", {})), "generation": gen}
    return {**doc, "status": status}, (top, made.by_name), made.pieces


def _failed_status_doc(
    plan: PlacementPlan, prior: PriorConditions, now: datetime
) -> dict[str, Any]:
    """The status of a placement whose status could not be computed: what failed, where."""
    scheduled = plan.scheduled
    conds = [Cond(plan.kind + "Scheduled", scheduled.status, scheduled.reason, scheduled.message)]
    status = {"conditions": dump_conditions(timed(conds, prior[0], plan.state.generation, now))}
    return {**plan.declared, "status": status}


_SERVER_FIELDS = (
    "uid",
    "resourceVersion",
    "selfLink",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "finalizers",
)
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _declared_metadata(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The placement's metadata without what another hub's API server wrote into an exported
    copy (`kubectl get -o yaml`): it describes that hub, and would churn the status file."""
    out = {k: v for k, v in meta.items() if k not in _SERVER_FIELDS}
    annotations = {k: v for k, v in (out.get("annotations") or {}).items() if k != LAST_APPLIED}
    if annotations:
        out["annotations"] = annotations
    else:
        out.pop("annotations", None)
    return out


def placement_status_files(
    plans: Mapping[str, PlacementPlan],
    prior: State,
    reports: Mapping[str, AgentReport],
    now: datetime,
) -> dict[str, bytes]:
    """Every placement's status file. A placement whose plan fields equal last pass's and whose
    prior conditions are the ones it was made from is last pass's bytes without a Python step
    (`_ROWS`); any other is looked up by the inputs the document reads (`_placement_file`)."""
    _BLOCKS.next_round()
    _READ.next_round()
    next_entries_round()
    make = partial(_placement_file, reports=reports, now=now)
    conditions = partial(prior_placement_conditions, prior)
    _FROZEN.clear()
    try:
        return _ROWS.files(plans, conditions, placement_status_path, make)
    finally:
        _FROZEN.clear()


def _placement_file(
    key: str,
    plan: PlacementPlan,
    conditions: PriorConditions,
    reports: Mapping[str, AgentReport],
    now: datetime,
) -> Made:
    """One placement's status file, and the conditions the next pass reads back from it: the
    last one when its inputs equal the ones it was made from, with the conditions it wrote
    (`_STATUSES`), else made."""
    inputs = (*_status_inputs(plan), conditions)
    path = placement_status_path(key)
    found = _STATUSES.get(key, inputs)
    if found is not None:  # the bytes of the last pass, read back as `conditions`
        remember_at(path, found[0], CONDITIONS_TAG, found[1])
        return Made(found[0], True, conditions)
    data, written = _status_file(key, plan, conditions, reports, now, inputs)
    remember_at(path, data, CONDITIONS_TAG, written)
    last = _STATUSES.last(key)
    # What the next pass reads back: `written`, or the equal value known for these bytes.
    return Made(
        data, last is not None and last[1][0] is data, remember(data, CONDITIONS_TAG, written)
    )


_WHOLE = (
    "held",
    "kind",
    "scheduled",
    "deletion_hold",
    "state",
    "fixed_names",
    "target_index",
    "strategy_type",
    "apply_strategy",
    "selection",
    "declared",
)
"""The plan fields a status reads whole and no later stage changes in place."""


class _PassCopies:
    """`rollkept.frozen` of the plan dicts one call reads: a remembered stage result's
    `Frozen` dict is itself (the very object next pass: compared by identity), a plain dict is
    copied once however often the call reads it (`clear` before and after the call: a copy
    holds its dict, so an id names one dict until then, and a dict changed in place after the
    call is copied anew)."""

    def __init__(self) -> None:
        self._copies: dict[int, tuple[dict[Any, Any], Frozen[Any, Any]]] = {}

    def __call__(self, items: dict[Any, Any]) -> Frozen[Any, Any]:
        if type(items) is Frozen:
            return items
        found = self._copies.get(id(items))
        if found is None:
            found = self._copies[id(items)] = (items, Frozen(items))
        return found[1]

    def clear(self) -> None:
        self._copies.clear()


_FROZEN = _PassCopies()
"""The plan dicts `placement_status_files` reads, frozen (each copied once a call at most)."""
_COPIED: dict[str, Callable[[Any], Any]] = {"errors": list} | dict.fromkeys(
    ("desired", "reports", "per_cluster", "sync_errors", "waits"), _FROZEN
)
"""The plan fields a status reads that later stages change in place, with how to copy one: a
dict frozen (`rollkept.frozen`: a remembered stage result's dict is itself, no copy)."""
READ_FIELDS = frozenset((*_WHOLE, "decisions", *_COPIED))
"""Every plan field `placement_status_doc` reads: `_WHOLE`, `_COPIED` and the decisions
(`_decisions_read`). `_ROWS` and `_status_inputs` are both made of these, and nothing else."""
_ROWS = FileRows((*_WHOLE, "decisions"), _COPIED)
"""Compares every plan field `_status_inputs` reads (the decisions whole: a superset)."""
_STATUSES: StageMemo[tuple[bytes, PriorConditions]] = StageMemo()
"""Placement key -> its last status file and the conditions written in it, with the inputs it
was made from and those conditions (what equal inputs give again at any time)."""
_READ_WHOLE = attrgetter(*_WHOLE)
_SELECTED = attrgetter("selected")
_READ_COPIED = tuple((attrgetter(name), copy) for name, copy in _COPIED.items())


def _status_inputs(plan: PlacementPlan) -> tuple[Any, ...]:
    """Everything `placement_status_doc` reads of the plan (`READ_FIELDS`; those changed in
    place copied, the decisions as `_decisions_read` gives them)."""
    copied = [copy(get(plan)) for get, copy in _READ_COPIED]
    return (*_READ_WHOLE(plan), *_decisions_read(plan), *copied)


Read = tuple[tuple[Any, ...], tuple[Any, ...]]


def _decisions_read(plan: PlacementPlan) -> Read:
    """The decisions a status reads: the selected ones, and the unselected ones a PickFixed
    placement lists for the names it could not place (`cluster_entries`). A cluster added to
    or removed from the fleet that the placement does not select changes no status. Made once
    per decisions tuple and `fixed_names` (`_READ`: a reused plan keeps its decisions)."""
    found = _READ.get(plan.decisions)
    if found is not None and found[0] == plan.fixed_names:
        return found[1]
    selected = tuple(compress(plan.decisions, map(_SELECTED, plan.decisions)))
    read: Read = (selected, ())
    if plan.fixed_names is not None:
        missing = max(plan.fixed_names - len(selected), 0)
        read = (selected, tuple([d for d in plan.decisions if not d.selected][:missing]))
    _READ.put(plan.decisions, (plan.fixed_names, read))
    return read


_READ: IdentityMemo[tuple[int | None, Read]] = IdentityMemo()
"""A plan's decisions tuple -> (its `fixed_names`, `_decisions_read`), for the last two passes."""


_BLOCKS = Blocks()
"""The texts of the status files' lists of cluster names, for this pass and the last."""


def _status_bytes(doc: dict[str, Any], pieces: Pieces) -> str:
    """`dump_yaml(doc, pieces=pieces)` of a status document: its per-cluster entries written
    from their kept texts and its groups' cluster names from kept name texts (`Spliced`)."""
    status = doc.get("status")
    if not isinstance(status, dict):
        return dump_yaml(doc, pieces=pieces)
    spliced = Spliced()
    status = dict(status)
    singles = status.get(PER_CLUSTER_FIELD)
    if singles:
        status[PER_CLUSTER_FIELD] = spliced.part(singles, items_block(singles, pieces))
    if status.get(GROUPS_FIELD):
        status[GROUPS_FIELD] = grouped_parts(status[GROUPS_FIELD], "clusterNames", spliced, _BLOCKS)
    return spliced.dump({**doc, "status": status})


def _status_file(
    key: str,
    plan: PlacementPlan,
    conditions: PriorConditions,
    reports: Mapping[str, AgentReport],
    now: datetime,
    inputs: tuple[Any, ...],
) -> tuple[bytes, PriorConditions]:
    try:
        doc, written, pieces = placement_status_doc(plan, conditions, reports, now, _FROZEN)
    except Exception as exc:  # one placement's fault fails it alone
        hold(plan, "writing the status of", exc)
        doc = _failed_status_doc(plan, conditions, now)
        _STATUSES.drop(key)
        return yaml_bytes(doc), _placement_conditions(_status_of(doc))
    data = _status_bytes(doc, pieces).encode()
    # Kept with the conditions written, which the next pass reads back as its prior ones: with
    # them these inputs give these very bytes at any time (every condition equals its prior one
    # then and keeps it, times included), even when this pass's clock set some of them.
    _STATUSES.put(key, (*inputs[:-1], written), (data, written))
    return data, written

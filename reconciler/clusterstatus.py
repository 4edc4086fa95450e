"""Cluster status files of the output tree: `status/clusters/<name>.yaml`.

A cluster's status file is its MemberCluster with the reported status and gitfleet's eligibility
verdict (`gitfleet.io/Eligible`), its time carried over from the previous pass (from memory
when the previous output holds the very files the last pass wrote, `reconciler.ownprior`; then
only the clusters whose view changed are made again). Called by `pass_`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter

from gitfleet.api import Condition
from gitfleet.api.output import cluster_status_path
from reconciler.output import yaml_bytes
from reconciler.ownprior import OwnFiles
from reconciler.priorconds import conditions_of as _conditions_of
from reconciler.priorconds import dump_conditions
from reconciler.priorparse import remember
from reconciler.schedule.clusters import ClusterView
from reconciler.stagememo import StageMemo, changed_keys
from reconciler.state import State
from reconciler.status import Cond, keeps_time, timed
from reconciler.statusdocs import derive_status

ELIGIBLE = "gitfleet.io/Eligible"


def _prior_conditions(
    prior: State, path: str, own: Mapping[str, tuple[Condition, ...]] | None
) -> tuple[Condition, ...]:
    if own is not None and path in own:
        return own[path]  # the last pass's file, the very bytes (`ownprior`)
    return derive_status(
        prior, path, "conditions", lambda status: _conditions_of(status.get("conditions")), ()
    )


def _eligibility_cond(view: ClusterView, has_status: bool, mode: str) -> Cond:
    if view.ineligible_reason is not None:
        return Cond(ELIGIBLE, "False", "NotEligible", view.ineligible_reason)
    if not has_status:
        return Cond(
            ELIGIBLE,
            "True",
            "AssumedJoined",
            "No cluster status source: the cluster is taken as joined and healthy",
        )
    if mode == "AssumeJoined":
        return Cond(
            ELIGIBLE, "True", "AssumedJoined", "Fleet spec.clusterEligibility is AssumeJoined"
        )
    return Cond(
        ELIGIBLE, "True", "AgentHealthy", "The member agent is joined, healthy and sends heartbeats"
    )


def cluster_status_files(
    views: Mapping[str, ClusterView], has_status: bool, mode: str, prior: State, now: datetime
) -> dict[str, bytes]:
    """Every cluster's status file; a cluster whose inputs equal the last pass's, with a
    verdict that kept its time then, gets that pass's bytes (`_FILES`). When the prior output
    holds the very files the last call wrote (`ownprior`), only the clusters whose view
    changed, or whose file was not settled then, are looked at (`_Round`)."""
    own = _OWN.values(prior.output)
    facts = (has_status, mode)
    clusters = dict(zip(views, map(_CLUSTER, views.values()), strict=True))
    reasons = dict(zip(views, map(_REASON, views.values()), strict=True))
    last = _ROUND.last("")
    if own is not None and last is not None and last[1].reusable(facts, clusters):
        before = last[1]
        files, written = dict(before.files), dict(before.written)
        redo = changed_keys(before.clusters, clusters) | changed_keys(before.reasons, reasons)
        names = sorted(redo | before.unsettled)
    else:
        files, written, names = {}, {}, sorted(views)
    unsettled = set()
    for name in names:
        path = cluster_status_path(name)
        before_conds = _prior_conditions(prior, path, own)
        inputs = (clusters[name], reasons[name], has_status, mode, before_conds)
        found = _FILES.get(name, inputs)
        if found is None:
            found = _status_file(views[name], has_status, mode, before_conds, now, inputs)
        if _FILES.last(name) is None or found[1] != before_conds:
            unsettled.add(name)  # read back, its file's conditions are not its inputs'
        files[path], written[path] = found
    _OWN.wrote(files, written)
    _ROUND.put("", (), _Round(facts, clusters, reasons, files, written, frozenset(unsettled)))
    return dict(files)  # the round keeps its own


_CLUSTER = attrgetter("cluster")
_REASON = attrgetter("ineligible_reason")


@dataclass(frozen=True)
class _Round:
    """The last call: its facts, clusters and reasons (by name), files and their conditions
    (by path), and the clusters whose file the next pass may make differently."""

    facts: tuple[bool, str]
    clusters: dict[str, object]
    reasons: dict[str, str | None]
    files: dict[str, bytes]
    written: dict[str, tuple[Condition, ...]]
    unsettled: frozenset[str]

    def reusable(self, facts: tuple[bool, str], clusters: Mapping[str, object]) -> bool:
        return self.facts == facts and self.clusters.keys() == clusters.keys()


_ROUND: StageMemo[_Round] = StageMemo()
_FILES: StageMemo[tuple[bytes, tuple[Condition, ...]]] = StageMemo()
"""Cluster name -> its last status file and its conditions, with what they were made from."""
_OWN: OwnFiles[tuple[Condition, ...]] = OwnFiles()
"""The cluster status files of the last pass, and their conditions by path."""


def _kept(verdict: tuple[Condition, ...], before: tuple[Condition, ...]) -> bool:
    """Every verdict condition kept a previous transition time, so the file does not depend on
    the pass's clock (checked by value: the previous conditions are read back without their
    generation, so `timed` builds new objects)."""
    prior = {c.type: c for c in before}
    return all(keeps_time(prior.get(c.type), c) for c in verdict)


def _status_file(
    view: ClusterView,
    has_status: bool,
    mode: str,
    before: tuple[Condition, ...],
    now: datetime,
    inputs: tuple[object, ...],
) -> tuple[bytes, tuple[Condition, ...]]:
    doc = view.cluster.model_dump(by_alias=True, exclude_none=True, mode="json")
    status = dict(doc.get("status") or {})
    reported = [c for c in status.get("conditions") or [] if c.get("type") != ELIGIBLE]
    verdict = timed([_eligibility_cond(view, has_status, mode)], before, 0, now)
    verdict_dump = [
        {k: v for k, v in c.items() if k != "observedGeneration"} for c in dump_conditions(verdict)
    ]
    status["conditions"] = sorted(reported + verdict_dump, key=lambda c: str(c.get("type")))
    data = yaml_bytes({**doc, "status": status})
    made = (data, remember(data, "conditions", _conditions_of(status["conditions"])))
    if _kept(verdict, before):
        _FILES.put(view.name, inputs, made)
    else:
        _FILES.drop(view.name)
    return made

"""Cluster status files of the output tree: `status/clusters/<name>.yaml`.

A cluster's status file is its MemberCluster with the reported status and gitfleet's eligibility
verdict (`gitfleet.io/Eligible`), its time carried over from the previous pass (from memory
when the previous output holds the very files the last pass wrote, `reconciler.ownprior`; then
only the clusters whose view changed are made again). The MemberAgent's Joined and Healthy keep
the previous file's transition time while their status stays, as KubeFleet's do: a heartbeat
moves only `lastReceivedHeartbeat`, and that (with the other observations) is recorded at most
every `clusterStatusRecordInterval` (`reconciler.clusterrecord`). Called by `pass_`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from operator import attrgetter
from typing import Any

import yaml

from gitfleet.api import Condition
from gitfleet.api.output import cluster_status_path
from reconciler.clusterrecord import (
    MEMBER_AGENT,
    NOTHING,
    Recorded,
    heartbeat_in,
    keeps_record,
    record_due,
    recorded_in,
    skeleton_of,
)
from reconciler.output import yaml_bytes
from reconciler.ownprior import OwnFiles
from reconciler.priorconds import dump_conditions
from reconciler.priorparse import derive_own, remember
from reconciler.schedule.clusters import ClusterView
from reconciler.stagememo import StageMemo, changed_keys
from reconciler.state import State
from reconciler.status import Cond, keeps_time, timed

ELIGIBLE = "gitfleet.io/Eligible"
TAG = "cluster-record"
"""The `priorparse` reader tag of a cluster status file's `Recorded`."""


def _prior_record(prior: State, path: str, own: Mapping[str, Recorded] | None) -> Recorded:
    if own is not None and path in own:
        return own[path]  # the last pass's file, the very bytes (`ownprior`)
    if path not in prior.output:
        return NOTHING
    try:
        return derive_own(prior.output, path, TAG, recorded_in)
    except (yaml.YAMLError, AttributeError, TypeError, ValueError):
        return NOTHING  # unreadable: new condition times, observations written afresh


def _keep_agent_times(agents: list[Any], before: tuple[Condition, ...]) -> list[Any]:
    """The MemberAgent's conditions keep the previous file's transition time while their
    status stays (KubeFleet's `meta.SetStatusCondition`): a report only sets it when Joined or
    Healthy changes, not on every heartbeat."""
    was = {c.type: c for c in before}
    out = []
    for agent in agents:
        if isinstance(agent, dict) and agent.get("type") == MEMBER_AGENT:
            conds = []
            for cond in agent.get("conditions") or []:
                old = was.get(cond.get("type"))
                if (
                    old is not None
                    and old.status == cond.get("status")
                    and old.last_transition_time
                ):
                    cond = {**cond, "lastTransitionTime": old.last_transition_time}
                conds.append(cond)
            agent = {**agent, "conditions": conds}
        out.append(agent)
    return out


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
    views: Mapping[str, ClusterView],
    has_status: bool,
    mode: str,
    prior: State,
    now: datetime,
    every: timedelta = timedelta(0),
) -> dict[str, bytes]:
    """Every cluster's status file, its observations recorded at most every `every`
    (`clusterrecord`); a cluster whose inputs equal the last pass's, with a verdict that kept
    its time then, gets that pass's bytes (`_FILES`). When the prior output holds the very
    files the last call wrote (`ownprior`), only the clusters whose view changed, or whose
    file was not settled then, are looked at (`_Round`), and all whose observations moved
    when the pass records them."""
    own = _OWN.values(prior.output)
    facts = (has_status, mode, every)
    clusters = dict(zip(views, map(_CLUSTER, views.values()), strict=True))
    reasons = dict(zip(views, map(_REASON, views.values()), strict=True))
    last = _ROUND.last("")
    if own is not None and last is not None and last[1].reusable(facts, clusters):
        before = last[1]
        files, written = dict(before.files), dict(before.written)
        redo = changed_keys(before.clusters, clusters) | changed_keys(before.reasons, reasons)
        redo |= before.unsettled
    else:
        files, written, redo = {}, {}, set(views)
    records = {n: _prior_record(prior, _path(n), own) for n in redo}
    live = {name: _live_heartbeat(view) for name, view in views.items()}
    recorded = {n: (records[n] if n in records else written[_path(n)]).heartbeat for n in views}
    due = record_due(live, recorded, every)
    for name in [n for n in views if due and n not in records and live[n] != recorded[n]]:
        records[name] = _prior_record(prior, _path(name), own)  # its observations moved
    unsettled = set()
    for name in sorted(records):
        path, before_record = _path(name), records[name]
        inputs = (clusters[name], reasons[name], has_status, mode, before_record, due)
        found = _FILES.get(name, inputs)
        if found is None:
            kept = partial(_recorded_bytes, files, prior.output, path)
            found = _status_file(views[name], facts, before_record, due, now, inputs, kept)
        if _FILES.last(name) is None or found[1] != before_record:
            unsettled.add(name)  # read back, its file's record is not its inputs'
        files[path], written[path] = found
    _OWN.wrote(files, written)
    _ROUND.put("", (), _Round(facts, clusters, reasons, files, written, frozenset(unsettled)))
    return dict(files)  # the round keeps its own


def _live_heartbeat(view: ClusterView) -> str | None:
    status = view.cluster.status
    agent = status.agent() if status is not None else None
    return agent.last_received_heartbeat if agent is not None else None


def _recorded_bytes(
    files: Mapping[str, bytes], output: Mapping[str, bytes], path: str
) -> bytes | None:
    return files.get(path) or output.get(path)  # the last round's, else the prior tree's


_path = cluster_status_path
_CLUSTER = attrgetter("cluster")
_REASON = attrgetter("ineligible_reason")


@dataclass(frozen=True)
class _Round:
    """The last call: its facts, clusters and reasons (by name), files and their conditions
    (by path), and the clusters whose file the next pass may make differently."""

    facts: tuple[bool, str, timedelta]
    clusters: dict[str, object]
    reasons: dict[str, str | None]
    files: dict[str, bytes]
    written: dict[str, Recorded]
    unsettled: frozenset[str]

    def reusable(self, facts: tuple[bool, str, timedelta], clusters: Mapping[str, object]) -> bool:
        return self.facts == facts and self.clusters.keys() == clusters.keys()


_ROUND: StageMemo[_Round] = StageMemo()
_FILES: StageMemo[tuple[bytes, Recorded]] = StageMemo()
"""Cluster name -> its last status file and its record, with what they were made from."""
_OWN: OwnFiles[Recorded] = OwnFiles()
"""The cluster status files of the last pass, and their records by path."""


def _kept(verdict: tuple[Condition, ...], before: tuple[Condition, ...]) -> bool:
    """Every verdict condition kept a previous transition time, so the file does not depend on
    the pass's clock (checked by value: the previous conditions are read back without their
    generation, so `timed` builds new objects)."""
    prior = {c.type: c for c in before}
    return all(keeps_time(prior.get(c.type), c) for c in verdict)


def _status_file(
    view: ClusterView,
    facts: tuple[bool, str, timedelta],
    before: Recorded,
    due: bool,
    now: datetime,
    inputs: tuple[object, ...],
    recorded: Callable[[], bytes | None],
) -> tuple[bytes, Recorded]:
    """The file and its record: the recorded bytes when only observations moved and the pass
    does not record them (`clusterrecord.keeps_record`), else the document made now."""
    doc = view.cluster.model_dump(by_alias=True, exclude_none=True, mode="json")
    status = dict(doc.get("status") or {})
    if status.get("agentStatus"):
        status["agentStatus"] = _keep_agent_times(status["agentStatus"], before.agent_conditions)
    reported = [c for c in status.get("conditions") or [] if c.get("type") != ELIGIBLE]
    verdict = timed([_eligibility_cond(view, *facts[:2])], before.conditions, 0, now)
    verdict_dump = [
        {k: v for k, v in c.items() if k != "observedGeneration"} for c in dump_conditions(verdict)
    ]
    status["conditions"] = sorted(reported + verdict_dump, key=lambda c: str(c.get("type")))
    full = {**doc, "status": status}
    skeleton = skeleton_of(full)
    kept = recorded() if keeps_record(before, heartbeat_in(status), skeleton, due) else None
    if kept is not None:
        made = (kept, before)
    else:
        data = yaml_bytes(full)
        made = (data, remember(data, TAG, recorded_in(full, skeleton)))
    if _kept(verdict, before.conditions):
        _FILES.put(view.name, inputs, made)
    else:
        _FILES.drop(view.name)
    return made

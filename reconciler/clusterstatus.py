"""Cluster status files of the output tree: `status/clusters/<name>.yaml`.

A cluster's status file is its MemberCluster with the reported status and gitfleet's eligibility
verdict (`gitfleet.io/Eligible`), its time carried over from the previous pass (from memory
when the previous output holds the very files the last pass wrote, `reconciler.ownprior`; then
only the clusters whose view changed are made again). The MemberAgent's Joined and Healthy keep
the previous file's transition time while their status stays, as KubeFleet's do: a heartbeat
moves only `lastReceivedHeartbeat`. Called by `pass_`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from typing import Any

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
MEMBER_AGENT = "MemberAgent"


Conds = tuple[tuple[Condition, ...], tuple[Condition, ...]]
"""A cluster status file's conditions and its MemberAgent's conditions."""


def _conditions_in(status: Mapping[str, Any]) -> Conds:
    agents = status.get("agentStatus") or []
    agent = next((a for a in agents if isinstance(a, dict) and a.get("type") == MEMBER_AGENT), {})
    return (_conditions_of(status.get("conditions")), _conditions_of(agent.get("conditions")))


def _prior_conditions(prior: State, path: str, own: Mapping[str, Conds] | None) -> Conds:
    if own is not None and path in own:
        return own[path]  # the last pass's file, the very bytes (`ownprior`)
    none: Conds = ((), ())
    return derive_status(prior, path, "clusterconds", _conditions_in, none)


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
    written: dict[str, Conds]
    unsettled: frozenset[str]

    def reusable(self, facts: tuple[bool, str], clusters: Mapping[str, object]) -> bool:
        return self.facts == facts and self.clusters.keys() == clusters.keys()


_ROUND: StageMemo[_Round] = StageMemo()
_FILES: StageMemo[tuple[bytes, Conds]] = StageMemo()
"""Cluster name -> its last status file and its conditions, with what they were made from."""
_OWN: OwnFiles[Conds] = OwnFiles()
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
    before: Conds,
    now: datetime,
    inputs: tuple[object, ...],
) -> tuple[bytes, Conds]:
    doc = view.cluster.model_dump(by_alias=True, exclude_none=True, mode="json")
    status = dict(doc.get("status") or {})
    if status.get("agentStatus"):
        status["agentStatus"] = _keep_agent_times(status["agentStatus"], before[1])
    reported = [c for c in status.get("conditions") or [] if c.get("type") != ELIGIBLE]
    verdict = timed([_eligibility_cond(view, has_status, mode)], before[0], 0, now)
    verdict_dump = [
        {k: v for k, v in c.items() if k != "observedGeneration"} for c in dump_conditions(verdict)
    ]
    status["conditions"] = sorted(reported + verdict_dump, key=lambda c: str(c.get("type")))
    data = yaml_bytes({**doc, "status": status})
    made = (data, remember(data, "clusterconds", _conditions_in(status)))
    if _kept(verdict, before[0]):
        _FILES.put(view.name, inputs, made)
    else:
        _FILES.drop(view.name)
    return made

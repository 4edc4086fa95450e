"""Cluster status files of the output tree: `status/clusters/<name>.yaml`.

A cluster's status file is its MemberCluster with the reported status and gitfleet's eligibility
verdict (`gitfleet.io/Eligible`), its time carried over from the previous pass. Called by
`pass_`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from gitfleet.api import Condition
from gitfleet.api.output import cluster_status_path
from reconciler.output import yaml_bytes
from reconciler.priorconds import conditions_of as _conditions_of
from reconciler.priorconds import dump_conditions
from reconciler.priorparse import remember
from reconciler.schedule.clusters import ClusterView
from reconciler.stagememo import StageMemo
from reconciler.state import State
from reconciler.status import Cond, keeps_time, timed
from reconciler.statusdocs import derive_status

ELIGIBLE = "gitfleet.io/Eligible"


def _prior_conditions(prior: State, path: str) -> tuple[Condition, ...]:
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
    verdict that kept its time then, gets that pass's bytes (`_FILES`)."""
    files: dict[str, bytes] = {}
    for name, view in sorted(views.items()):
        path = cluster_status_path(name)
        before = _prior_conditions(prior, path)
        inputs = (view.cluster, view.ineligible_reason, has_status, mode, before)
        data = _FILES.get(name, inputs)
        if data is None:
            data = _status_file(view, has_status, mode, before, now, inputs)
        files[path] = data
    return files


_FILES: StageMemo[bytes] = StageMemo()
"""Cluster name -> its last status file, with what it was made from."""


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
) -> bytes:
    doc = view.cluster.model_dump(by_alias=True, exclude_none=True, mode="json")
    status = dict(doc.get("status") or {})
    reported = [c for c in status.get("conditions") or [] if c.get("type") != ELIGIBLE]
    verdict = timed([_eligibility_cond(view, has_status, mode)], before, 0, now)
    verdict_dump = [
        {k: v for k, v in c.items() if k != "observedGeneration"} for c in dump_conditions(verdict)
    ]
    status["conditions"] = sorted(reported + verdict_dump, key=lambda c: str(c.get("type")))
    data = yaml_bytes({**doc, "status": status})
    remember(data, "conditions", _conditions_of(status["conditions"]))
    if _kept(verdict, before):
        _FILES.put(view.name, inputs, data)
    else:
        _FILES.drop(view.name)
    return data

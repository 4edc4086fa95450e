"""Agent reports as the pass uses them: cluster status for eligibility, per-placement results.

`status_from_report` turns an `AgentReport` into the MemberCluster status KubeFleet's eligibility
checker reads (a MemberAgent entry with Joined, Healthy and the heartbeat; properties and
resource usage). `placement_conditions` gives one placement's Applied/Available (or DiffReported)
conditions from a report, but only when the report names the exact content hash the hub gave the
cluster: a report from an agent that is behind (or about other overrides) never counts. Pure
(`statuses_from_reports` keeps each cluster's last status with the very objects it was made
from: a StageMemo); called by `pass_` and `statusdocs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from gitfleet.api import MemberCluster, format_time, parse_time
from gitfleet.api.report import AgentReport, PlacementReport
from reconciler.stagememo import StageMemo
from reconciler.status import Cond

PASS_COMPLETED = "gitfleet.io/PassCompleted"


def status_from_report(
    declared: MemberCluster, report: AgentReport, now: datetime | None = None
) -> MemberCluster:
    """The declared MemberCluster with the status its agent reported. A heartbeat from the
    future (an agent clock ahead of the hub) is clamped to the hub's `now`."""
    return _made(declared, report, now)[2]


def _made(
    declared: MemberCluster, report: AgentReport, now: datetime | None
) -> tuple[datetime, datetime | None, MemberCluster]:
    """(the report's heartbeat, the `now` it was clamped to or None, the cluster status)."""
    heartbeat = parse_time(report.heartbeat_time)
    clamp = now if now is not None and heartbeat > now else None
    if clamp is not None:
        report = report.model_copy(update={"heartbeat_time": format_time(clamp)})
    passed = next((c for c in report.conditions if c.type == PASS_COMPLETED), None)
    healthy = {
        "type": "Healthy",
        "status": "False" if passed is not None and passed.status == "False" else "True",
        "reason": passed.reason if passed is not None else "AgentReported",
        "lastTransitionTime": (passed.last_transition_time if passed else None)
        or report.heartbeat_time,
    }
    joined = {
        "type": "Joined",
        "status": "True",
        "reason": "AgentReported",
        "lastTransitionTime": report.heartbeat_time,
    }
    status: dict[str, object] = {
        "agentStatus": [
            {
                "type": "MemberAgent",
                "lastReceivedHeartbeat": report.heartbeat_time,
                "conditions": [joined, healthy],
            }
        ]
    }
    if report.properties:
        status["properties"] = {k: v.dump() for k, v in report.properties.items()}
    if report.resource_usage is not None:
        status["resourceUsage"] = report.resource_usage.dump()
    body = declared.dump()
    body["status"] = status
    return heartbeat, clamp, MemberCluster.model_validate(body)


def statuses_from_reports(
    clusters: Mapping[str, MemberCluster],
    reports: Mapping[str, AgentReport],
    now: datetime | None = None,
) -> dict[str, MemberCluster]:
    """Cluster status for every declared cluster that has a report (others have none): the
    very object of the last call for a cluster whose declaration and report are the very
    objects of then, unless the clock moved across a heartbeat from the future (`_STATUSES`;
    a poll of heartbeats builds the statuses of the reporting clusters only)."""
    out: dict[str, MemberCluster] = {}
    for name, declared in clusters.items():
        report = reports.get(name)
        if report is not None:
            out[name] = _status(name, declared, report, now)
    return out


def _status(
    name: str, declared: MemberCluster, report: AgentReport, now: datetime | None
) -> MemberCluster:
    last = _STATUSES.last(name)
    if last is not None and last[0][0] is declared and last[0][1] is report:
        heartbeat, clamp, status = last[1]
        if clamp is None if now is None or heartbeat <= now else clamp == now:
            return status
    made = _made(declared, report, now)
    _STATUSES.put(name, (declared, report), made)
    return made[2]


_STATUSES: StageMemo[tuple[datetime, datetime | None, MemberCluster]] = StageMemo()
"""Cluster name -> its last status, with the declaration and report it was made from (held,
so compared by identity), the report's heartbeat and the clock it was clamped to (or None)."""


def placement_report(
    report: AgentReport | None, key: str, content: str | None
) -> PlacementReport | None:
    """The report's entry for placement `key`, when it names exactly `content` (the content
    hash the hub gave that cluster): a report about other content never counts."""
    if report is None or not content:
        return None
    entry = next((p for p in report.placements if p.key == key), None)
    if entry is None or entry.content_hash != content:
        return None
    return entry


def reported_conditions(entry: PlacementReport | None) -> list[Cond]:
    """Applied/Available/DiffReported of a current report entry as untimed conditions."""
    if entry is None:
        return []
    return [Cond(c.type, c.status, c.reason, c.message) for c in entry.conditions]


def failure_details(entry: PlacementReport | None) -> dict[str, object]:
    """failedPlacements / driftedPlacements / diffedPlacements for perClusterPlacementStatuses."""
    if entry is None:
        return {}
    out: dict[str, object] = {}
    for name, items in (
        ("failedPlacements", entry.failed_placements),
        ("driftedPlacements", entry.drifted_placements),
        ("diffedPlacements", entry.diffed_placements),
    ):
        if items:
            out[name] = [i.dump() for i in items]
    return out

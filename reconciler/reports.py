"""Agent reports as the pass uses them: cluster status for eligibility, per-placement results.

`status_from_report` turns an `AgentReport` into the MemberCluster status KubeFleet's eligibility
checker reads (a MemberAgent entry with Joined, Healthy and the heartbeat; properties and
resource usage). `placement_conditions` gives one placement's Applied/Available (or DiffReported)
conditions from a report, but only when the report names the exact content hash the hub gave the
cluster: a report from an agent that is behind (or about other overrides) never counts. Pure; called by `pass_` and
`statusdocs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from gitfleet.api import MemberCluster, format_time, parse_time
from gitfleet.api.report import AgentReport, PlacementReport
from reconciler.status import Cond

PASS_COMPLETED = "gitfleet.io/PassCompleted"


def status_from_report(
    declared: MemberCluster, report: AgentReport, now: datetime | None = None
) -> MemberCluster:
    """The declared MemberCluster with the status its agent reported. A heartbeat from the
    future (an agent clock ahead of the hub) is clamped to the hub's `now`."""
    if now is not None and parse_time(report.heartbeat_time) > now:
        report = report.model_copy(update={"heartbeat_time": format_time(now)})
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
    return MemberCluster.model_validate(body)


def statuses_from_reports(
    clusters: Mapping[str, MemberCluster],
    reports: Mapping[str, AgentReport],
    now: datetime | None = None,
) -> dict[str, MemberCluster]:
    """Cluster status for every declared cluster that has a report (others have none)."""
    return {n: status_from_report(c, reports[n], now) for n, c in clusters.items() if n in reports}


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

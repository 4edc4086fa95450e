"""`reports.statuses_from_reports` builds the status of a cluster whose declaration and report
are the very objects of the last call once: a poll of heartbeats builds the reporting clusters'
statuses only. Whatever the order of calls and clocks, each status equals what
`status_from_report` gives (a heartbeat from the future is clamped to that call's clock)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from gitfleet.api.report import AgentReport
from reconciler.reports import status_from_report, statuses_from_reports
from reconciler.stagememo import forget_stages
from tests.unit.schedule.fleet import cluster

T0 = datetime(2026, 11, 26, 8, tzinfo=UTC)
BEAT = "2026-11-26T08:05:00Z"


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


def _report(name: str, beat: str) -> AgentReport:
    return AgentReport.model_validate(
        {
            "apiVersion": "gitfleet.io/v1alpha1",
            "kind": "AgentReport",
            "metadata": {"name": name},
            "heartbeatTime": beat,
            "agentVersion": "test",
        }
    )


def test_unchanged_declarations_and_reports_keep_their_status() -> None:
    clusters = {n: cluster(n, {"env": "prod"}).cluster for n in ("a", "b", "c")}
    reports = {n: _report(n, "2026-11-26T07:00:00Z") for n in ("a", "b")}
    first = statuses_from_reports(clusters, reports, T0)
    assert sorted(first) == ["a", "b"]
    reports["b"] = _report("b", "2026-11-26T07:30:00Z")  # a new heartbeat
    second = statuses_from_reports(clusters, reports, T0 + timedelta(minutes=1))
    assert second["a"] is first["a"]
    assert second["b"] is not first["b"]
    assert second["b"] == status_from_report(clusters["b"], reports["b"], T0)
    clusters["a"] = cluster("a", {"env": "dev"}).cluster  # a relabelled declaration
    third = statuses_from_reports(clusters, reports, T0)
    assert third["a"] is not first["a"] and third["a"].metadata.labels == {"env": "dev"}


@pytest.mark.parametrize(
    "clocks",
    [
        (0, 10, 10, 0),  # clamped, then behind the clock, then clamped again
        (10, 0, 0, 10),
        (0, 1, 2, 3),
        (None, 0, None, 10, None),
    ],
)
def test_a_heartbeat_from_the_future_is_clamped_to_each_calls_clock(
    clocks: tuple[int | None, ...],
) -> None:
    declared = {"a": cluster("a", {}).cluster}
    reports = {"a": _report("a", BEAT)}  # five minutes after T0
    for minutes in clocks:
        now = None if minutes is None else T0 + timedelta(minutes=minutes)
        made = statuses_from_reports(declared, reports, now)["a"]
        assert made == status_from_report(declared["a"], reports["a"], now), minutes

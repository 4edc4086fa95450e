"""A cluster status file records its agent's observations (heartbeat, properties, resource
usage) at most every `clusterStatusRecordInterval`, for the whole fleet at once; anything else in
it (labels, conditions, the eligibility verdict) is written at once. The same files whether the
last pass is in memory or read back from the prior tree."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import pytest
import yaml

from gitfleet.api import MemberCluster
from gitfleet.api.output import cluster_status_path
from gitfleet.api.report import AgentReport
from reconciler.clusterrecord import keeps_record, record_due, recorded_in, skeleton_of
from reconciler.clusterstatus import cluster_status_files
from reconciler.reports import PASS_COMPLETED, status_from_report
from reconciler.schedule.clusters import ClusterView
from reconciler.stagememo import forget_stages
from reconciler.state import State
from tests.unit.schedule.fleet import cluster

T0 = datetime(2026, 11, 26, 8, tzinfo=UTC)
FIVE = timedelta(minutes=5)


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


def _at(seconds: int) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(
    ("live", "recorded", "every", "due"),
    [
        ({"a": _at(60)}, {"a": _at(0)}, FIVE, False),
        ({"a": _at(299)}, {"a": _at(0)}, FIVE, False),
        ({"a": _at(300)}, {"a": _at(0)}, FIVE, True),  # the interval reached
        ({"a": _at(60), "b": _at(400)}, {"a": _at(0), "b": _at(0)}, FIVE, True),  # any cluster
        ({"a": _at(0)}, {"a": _at(60)}, FIVE, True),  # older than the file: not a kept record
        ({"a": _at(0)}, {"a": "yesterday"}, FIVE, True),  # an unreadable record
        ({"a": _at(900)}, {"a": None}, FIVE, False),  # a first report: its file is new anyway
        ({"a": None}, {"a": _at(0)}, FIVE, False),  # no report now
        ({"a": _at(0)}, {"a": _at(0)}, timedelta(0), True),  # 0: every heartbeat
        ({}, {}, FIVE, False),
    ],
)
def test_record_due(
    live: dict[str, str | None], recorded: dict[str, str | None], every: timedelta, due: bool
) -> None:
    assert record_due(live, recorded, every) is due


def _doc(labels: dict[str, str], beat: str, cpu: str = "4", healthy: str = "True") -> Any:
    return {
        "metadata": {"name": "c1", "labels": labels},
        "status": {
            "agentStatus": [
                {
                    "type": "MemberAgent",
                    "lastReceivedHeartbeat": beat,
                    "conditions": [{"type": "Healthy", "status": healthy}],
                }
            ],
            "properties": {"cpu": {"value": cpu, "observationTime": beat}},
            "resourceUsage": {"available": {"cpu": cpu}, "observationTime": beat},
        },
    }


def test_the_skeleton_leaves_out_observations_only() -> None:
    base = skeleton_of(_doc({"env": "prod"}, _at(0)))
    assert skeleton_of(_doc({"env": "prod"}, _at(60), cpu="3")) == base
    assert skeleton_of(_doc({"env": "dev"}, _at(0))) != base
    assert skeleton_of(_doc({"env": "prod"}, _at(0), healthy="False")) != base
    record = recorded_in(_doc({"env": "prod"}, _at(0)))
    assert record.heartbeat == _at(0) and record.skeleton == base
    assert keeps_record(record, _at(60), base, due=False)
    assert not keeps_record(record, _at(60), base, due=True)
    assert not keeps_record(record, None, base, due=False)
    assert not keeps_record(record, _at(60), "other", due=False)
    assert not keeps_record(recorded_in(None), _at(60), base, due=False)


def _report(name: str, beat: str, healthy: bool, cpu: str) -> AgentReport:
    failed = [{"type": PASS_COMPLETED, "status": "False", "reason": "ApplyFailed"}]
    return AgentReport.model_validate(
        {
            "apiVersion": "gitfleet.io/v1alpha1",
            "kind": "AgentReport",
            "metadata": {"name": name},
            "heartbeatTime": beat,
            "agentVersion": "test",
            "conditions": [] if healthy else failed,
            "properties": {"example.com/cpu": {"value": cpu, "observationTime": beat}},
        }
    )


@cache
def _view(name: str, beat: str, env: str, healthy: bool, cpu: str) -> ClusterView:
    """The same view object for the same report, as the pass's views memo keeps it."""
    declared = cluster(name, {"env": env}).cluster
    reported: MemberCluster = status_from_report(declared, _report(name, beat, healthy, cpu))
    return ClusterView(name, reported, None)


def _beat(data: bytes) -> str:
    return str(yaml.safe_load(data)["status"]["agentStatus"][0]["lastReceivedHeartbeat"])


# minute -> (c2's env, c2 healthy); c1 reports every minute with a new cpu observation, c2 30 s
# after c1 but not from minute 4 to 6 (its last report stays)
EVENTS: dict[int, tuple[str, bool]] = {7: ("dev", True), 8: ("dev", False)}
SILENT = range(4, 7)


def _run(memo: bool, every: timedelta) -> list[tuple[str, str]]:
    files: dict[str, bytes] = {}
    seen = []
    env, healthy = "prod", True
    for minute in range(12):
        if not memo:
            forget_stages()
        env, healthy = EVENTS.get(minute, (env, healthy))
        c2_minute = 3 if minute in SILENT else minute
        views = {
            "c1": _view("c1", _at(60 * minute), "prod", True, str(minute)),
            "c2": _view("c2", _at(60 * c2_minute + 30), env, healthy, str(c2_minute)),
        }
        now = T0 + timedelta(minutes=minute, seconds=40)
        files = cluster_status_files(views, True, "Strict", State(output=files), now, every)
        seen.append(tuple(_beat(files[cluster_status_path(n)]) for n in ("c1", "c2")))
    return seen  # type: ignore[return-value]


@pytest.mark.parametrize("memo", [True, False])
def test_observations_are_recorded_for_the_fleet_at_once(memo: bool) -> None:
    c1 = [_at(60 * m) for m in range(12)]
    c2 = [_at(60 * m + 30) for m in range(12)]
    assert _run(memo, FIVE) == [
        (c1[0], c2[0]),  # first reports: written
        *[(c1[0], c2[0])] * 4,  # only observations moved: the files keep their bytes
        *[(c1[5], c2[3])] * 2,  # c1's heartbeat 5 min past its file's: both recorded (c2's last)
        (c1[5], c2[7]),  # c2 relabelled: written at once, with what it observed then
        (c1[5], c2[8]),  # c2 unhealthy: written at once
        (c1[5], c2[8]),
        *[(c1[10], c2[10])] * 2,  # c1 due again: every cluster whose observations moved
    ]


def test_an_interval_of_zero_records_every_heartbeat() -> None:
    c2 = [3 if m in SILENT else m for m in range(12)]
    assert _run(True, timedelta(0)) == [(_at(60 * m), _at(60 * c2[m] + 30)) for m in range(12)]

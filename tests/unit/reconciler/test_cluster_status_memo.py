"""Cluster status files are reused while the cluster, its eligibility verdict and its previous
conditions are unchanged and the verdict kept its time; a changed verdict, or one timed by
this pass's clock, is written afresh. The MemberAgent's conditions keep their time while
their status stays."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml

from gitfleet.api import MemberCluster
from gitfleet.api.output import cluster_status_path
from gitfleet.api.report import AgentReport
from reconciler import clusterstatus
from reconciler.clusterstatus import cluster_status_files
from reconciler.reports import PASS_COMPLETED, status_from_report
from reconciler.schedule.clusters import ClusterView
from reconciler.stagememo import forget_stages
from reconciler.state import State
from tests.unit.schedule.fleet import cluster

T0 = datetime(2026, 11, 26, 8, tzinfo=UTC)
PATH = cluster_status_path("c1")


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


def _file(reason: str | None, prior: dict[str, bytes], hours: int) -> bytes:
    """The status file as a running hub makes it (the memos as the earlier calls left them)."""
    views = {"c1": ClusterView("c1", cluster("c1").cluster, reason)}
    now = T0 + timedelta(hours=hours)
    return cluster_status_files(views, True, "Strict", State(output=prior), now)[PATH]


def test_reuse_follows_the_verdict_and_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    real = clusterstatus._status_file

    def counting(view: ClusterView, *rest: Any) -> tuple[bytes, Any]:
        made.append(view.name)
        return real(view, *rest)

    monkeypatch.setattr(clusterstatus, "_status_file", counting)
    first = {PATH: _file(None, {}, 0)}
    assert _file(None, first, 1) == first[PATH]  # eligible again: the first pass's bytes
    assert _file(None, first, 5) == first[PATH] and len(made) == 2  # reused, at any time
    late = _file("no heartbeat", first, 2)
    assert b"no heartbeat" in late and b"2026-11-26T10:00:00Z" in late
    later = _file("no heartbeat", first, 3)  # the same prior: a new verdict again, timed now
    assert b"2026-11-26T11:00:00Z" in later
    assert _file("no heartbeat", {PATH: later}, 4) == later  # kept from now on


def _reported(heartbeat: str, healthy: bool) -> MemberCluster:
    failed = [
        {"type": PASS_COMPLETED, "status": "False", "reason": "ApplyFailed"},
    ]
    report = AgentReport.model_validate(
        {
            "apiVersion": "gitfleet.io/v1alpha1",
            "kind": "AgentReport",
            "metadata": {"name": "c1"},
            "heartbeatTime": heartbeat,
            "agentVersion": "test",
            "conditions": [] if healthy else failed,
        }
    )
    return status_from_report(cluster("c1").cluster, report)


def _agent_times(data: bytes) -> tuple[str, str, str]:
    agent = yaml.safe_load(data)["status"]["agentStatus"][0]
    times = {c["type"]: c["lastTransitionTime"] for c in agent["conditions"]}
    return times["Joined"], times["Healthy"], agent["lastReceivedHeartbeat"]


@pytest.mark.parametrize("memo", [True, False])
def test_the_agent_conditions_keep_their_time_while_their_status_stays(memo: bool) -> None:
    """Every heartbeat moves lastReceivedHeartbeat; Joined and Healthy move only when their
    status does (as KubeFleet's conditions do), whether the last pass is in memory or not."""
    files: dict[str, bytes] = {}
    got = []
    for minute, healthy in [(0, True), (1, True), (2, False), (3, False), (4, True)]:
        if not memo:
            forget_stages()
        beat = f"2026-11-26T08:0{minute}:00Z"
        views = {"c1": ClusterView("c1", _reported(beat, healthy), None)}
        files = cluster_status_files(views, True, "Strict", State(output=files), T0)
        got.append(_agent_times(files[PATH]))
    at = [f"2026-11-26T08:0{m}:00Z" for m in range(5)]
    assert got == [
        (at[0], at[0], at[0]),
        (at[0], at[0], at[1]),
        (at[0], at[2], at[2]),  # Healthy turned False
        (at[0], at[2], at[3]),
        (at[0], at[4], at[4]),  # and True again
    ]

"""Cluster status files are reused while the cluster, its eligibility verdict and its previous
conditions are unchanged and the verdict kept its time; a changed verdict, or one timed by
this pass's clock, is written afresh."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gitfleet.api.output import cluster_status_path
from reconciler import clusterstatus
from reconciler.clusterstatus import cluster_status_files
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

    def counting(view: ClusterView, *rest: Any) -> bytes:
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

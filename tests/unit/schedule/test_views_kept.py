"""`inventory.build_cluster_views` hands a cluster whose declaration and reported status are the
very objects of the last call, with the same eligibility verdict, the very view of then; a new
status, a new declaration or a verdict the clock moved gives a new view, equal to the one a
fresh call (nothing remembered) gives."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gitfleet.api import MemberCluster
from reconciler import placememo
from reconciler.schedule.clusters import ClusterView, EligibilityPolicy
from reconciler.schedule.inventory import build_cluster_views

NOW = datetime(2026, 11, 21, 10, 0, 0, tzinfo=UTC)
POLICY = EligibilityPolicy("RequireAgent", True, timedelta(minutes=5), timedelta(minutes=5))


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    placememo.forget()
    yield
    placememo.forget()


def _member(name: str, heartbeat: str = "2026-11-21T09:59:00Z", **labels: str) -> MemberCluster:
    when = "2026-11-21T09:00:00Z"
    conds = [
        {"type": t, "status": "True", "reason": "R", "lastTransitionTime": when}
        for t in ("Joined", "Healthy")
    ]
    body: dict[str, Any] = {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": labels},
        "status": {
            "agentStatus": [
                {"type": "MemberAgent", "lastReceivedHeartbeat": heartbeat, "conditions": conds}
            ]
        },
    }
    return MemberCluster.model_validate(body)


NAMES = ("a", "b", "c")
DECLARED = {n: _member(n, env="prod").model_copy(update={"status": None}) for n in NAMES}
STATUSES = {n: _member(n) for n in NAMES}


def _views(
    declared: dict[str, MemberCluster], statuses: dict[str, MemberCluster], now: datetime = NOW
) -> dict[str, ClusterView]:
    return build_cluster_views(declared, statuses, POLICY, now)


def _fresh_views(
    declared: dict[str, MemberCluster], statuses: dict[str, MemberCluster], now: datetime = NOW
) -> dict[str, ClusterView]:
    placememo.forget()
    return _views(declared, statuses, now)


def test_unchanged_clusters_keep_their_very_views() -> None:
    first = _views(DECLARED, STATUSES)
    again = _views(DECLARED, STATUSES)
    assert all(again[n] is first[n] for n in NAMES)
    assert again == _fresh_views(DECLARED, STATUSES)


@pytest.mark.parametrize("what", ["status", "declaration"])
def test_a_changed_cluster_alone_gets_a_new_view(what: str) -> None:
    first = _views(DECLARED, STATUSES)
    declared, statuses = dict(DECLARED), dict(STATUSES)
    if what == "status":
        statuses["b"] = _member("b", heartbeat="2026-11-21T09:59:30Z")
    else:
        declared["b"] = _member("b", env="dev").model_copy(update={"status": None})
    again = _views(declared, statuses)
    assert again["b"] is not first["b"]
    assert [again[n] is first[n] for n in ("a", "c")] == [True, True]
    assert again == _fresh_views(declared, statuses)
    assert again["b"].cluster.status == statuses["b"].status
    assert again["b"].labels == (declared["b"].metadata.labels or {})


def test_a_verdict_the_clock_moved_gives_a_new_view() -> None:
    first = _views(DECLARED, STATUSES)
    later = NOW + timedelta(minutes=10)
    again = _views(DECLARED, STATUSES, later)
    assert all(again[n] is not first[n] for n in NAMES)
    assert all(v.ineligible_reason and "heartbeat" in v.ineligible_reason for v in again.values())
    assert again == _fresh_views(DECLARED, STATUSES, later)
    back = _views(DECLARED, STATUSES)  # the clock back: eligible again, not the stale verdict
    assert back == first
    assert all(v.ineligible_reason is None for v in back.values())

"""ClusterEligibility (spec §1.3.2): each check in order, with KubeFleet's reason strings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gitfleet.api import MemberCluster
from reconciler.schedule.eligibility import check_eligibility

NOW = datetime(2026, 11, 21, 10, 0, 0, tzinfo=UTC)
FIVE = timedelta(minutes=5)


def cluster(agent: dict[str, Any] | None = None, deleting: bool = False) -> MemberCluster:
    meta: dict[str, Any] = {"name": "c1"}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-21T09:00:00Z"
    body: dict[str, Any] = {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": meta,
    }
    if agent is not None:
        body["status"] = {"agentStatus": [agent]}
    return MemberCluster.model_validate(body)


def agent(
    heartbeat: str | None = "2026-11-21T09:59:00Z", **conds: tuple[str, str]
) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "MemberAgent", "conditions": []}
    if heartbeat:
        out["lastReceivedHeartbeat"] = heartbeat
    for ctype, (status, when) in conds.items():
        out["conditions"].append(
            {"type": ctype, "status": status, "reason": "R", "lastTransitionTime": when}
        )
    return out


OK = ("True", "2026-11-21T09:00:00Z")
NC = "cluster is not connected to the fleet: "


@pytest.mark.parametrize(
    ("member", "expected"),
    [
        (cluster(agent(Joined=OK, Healthy=OK), deleting=True), "cluster has left the fleet"),
        (cluster(None), NC + "member agent not online yet"),
        (
            cluster(agent(heartbeat="2026-11-21T09:50:00Z", Joined=OK, Healthy=OK)),
            NC + "no recent heartbeat signals (last received 10.00 minutes ago)",
        ),
        (cluster(agent(Healthy=OK)), NC + "member agent not joined yet"),
        (
            cluster(agent(Joined=("False", "2026-11-21T09:00:00Z"), Healthy=OK)),
            NC + "member agent not joined yet",
        ),
        (cluster(agent(Joined=OK)), NC + "health condition from member agent is not available"),
        (
            cluster(agent(Joined=OK, Healthy=("False", "2026-11-21T09:30:00Z"))),
            NC + "unhealthy for a prolonged period of time (last transitioned 30.00 minutes ago)",
        ),
        (cluster(agent(Joined=OK, Healthy=("False", "2026-11-21T09:58:00Z"))), None),
        (cluster(agent(Joined=OK, Healthy=OK)), None),
    ],
)
def test_eligibility_checks_in_order(member: MemberCluster, expected: str | None) -> None:
    assert check_eligibility(member, NOW, FIVE, FIVE) == expected

"""ClusterEligibility: is a member cluster connected and healthy enough to receive new work.

Implements KubeFleet's eligibility checker (spec §1.3.2) from the MemberCluster status an agent
reported: left the fleet, no agent, heartbeat timeout, not joined, no health condition,
unhealthy for too long. The reasons are KubeFleet's strings. Called by `clusters` and `cycle`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from gitfleet.api import MemberCluster, parse_time

NOT_CONNECTED = "cluster is not connected to the fleet: "
MEMBER_AGENT = "MemberAgent"


def _minutes(delta: timedelta) -> str:
    return f"{delta.total_seconds() / 60:.2f}"


def check_eligibility(
    cluster: MemberCluster, now: datetime, heartbeat_timeout: timedelta, health_timeout: timedelta
) -> str | None:
    """None when the cluster is eligible, else the first failing check's reason."""
    if cluster.metadata.deletion_timestamp:
        return "cluster has left the fleet"
    status = cluster.status
    agent = None
    if status is not None:
        agent = next((a for a in status.agent_status or [] if a.type == MEMBER_AGENT), None)
    if agent is None:
        return NOT_CONNECTED + "member agent not online yet"
    if agent.last_received_heartbeat is None:
        return NOT_CONNECTED + "no recent heartbeat signals (never received)"
    since = now - parse_time(agent.last_received_heartbeat)
    if since > heartbeat_timeout:
        return (
            NOT_CONNECTED
            + f"no recent heartbeat signals (last received {_minutes(since)} minutes ago)"
        )
    conditions = {c.type: c for c in agent.conditions or []}
    joined = conditions.get("Joined")
    if joined is None or joined.status != "True":
        return NOT_CONNECTED + "member agent not joined yet"
    healthy = conditions.get("Healthy")
    if healthy is None:
        return NOT_CONNECTED + "health condition from member agent is not available"
    if healthy.status != "True" and healthy.last_transition_time:
        since = now - parse_time(healthy.last_transition_time)
        if since > health_timeout:
            return (
                NOT_CONNECTED + "unhealthy for a prolonged period of time "
                f"(last transitioned {_minutes(since)} minutes ago)"
            )
    return None

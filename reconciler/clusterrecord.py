"""What a cluster status file records of its agent's observations, and when.

An agent reports every heartbeat (default 60 s) with a new `lastReceivedHeartbeat` and new
observation times for its properties and resource usage. Written each time, those alone would
make one output commit per heartbeat: the output branch's `git log`, the fleet's audit trail,
would be mostly heartbeats. So `status/clusters/<name>.yaml` records observations at most every
`Fleet spec.clusterStatusRecordInterval` (default 5m): while only observations changed, the file
keeps its bytes; at the first pass where some cluster's reported heartbeat is that much newer
than the one its file records (`record_due`), every cluster whose observations moved is written
(one commit for the whole fleet). Anything else in the file (labels, taints, the agent's
conditions, the eligibility verdict) is written at once, with the observations of that moment.
Eligibility is always computed from the live reports, never from the file. An interval of 0
records every heartbeat (KubeFleet's behaviour). Called by `clusterstatus`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, NamedTuple

from gitfleet.api import Condition
from gitfleet.api.conditions import parse_time
from reconciler.priorconds import conditions_of, status_of

MEMBER_AGENT = "MemberAgent"
OBSERVED = ("properties", "resourceUsage")
"""The parts of a cluster's status that are observations (besides the heartbeat)."""


class Recorded(NamedTuple):
    """What the pass needs of a cluster status file: its conditions, its MemberAgent's
    conditions, the heartbeat it records and the digest of the rest of it (`skeleton_of`)."""

    conditions: tuple[Condition, ...]
    agent_conditions: tuple[Condition, ...]
    heartbeat: str | None
    skeleton: str


NOTHING = Recorded((), (), None, "")


def _member_agent(status: Mapping[str, Any]) -> Mapping[str, Any]:
    agents = status.get("agentStatus") or []
    found = next((a for a in agents if isinstance(a, dict) and a.get("type") == MEMBER_AGENT), {})
    return found if isinstance(found, dict) else {}


def heartbeat_in(status: Mapping[str, Any]) -> str | None:
    """The MemberAgent's `lastReceivedHeartbeat` in a cluster's status (None when absent)."""
    beat = _member_agent(status).get("lastReceivedHeartbeat")
    return beat if isinstance(beat, str) else None


def skeleton_of(doc: Mapping[str, Any]) -> str:
    """The digest of a cluster status document without its observations (the heartbeat, the
    properties and the resource usage): equal digests mean only observations differ."""
    status = dict(status_of(doc))
    for key in OBSERVED:
        status.pop(key, None)
    if isinstance(status.get("agentStatus"), list):
        status["agentStatus"] = [
            {k: v for k, v in a.items() if k != "lastReceivedHeartbeat"}
            if isinstance(a, dict)
            else a
            for a in status["agentStatus"]
        ]
    text = json.dumps({**doc, "status": status}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def recorded_in(doc: Any, skeleton: str | None = None) -> Recorded:
    """The `Recorded` of a parsed (or just built) cluster status document (`skeleton`: its
    `skeleton_of`, when the caller has it)."""
    if not isinstance(doc, dict):
        return NOTHING
    status = status_of(doc)
    return Recorded(
        conditions_of(status.get("conditions")),
        conditions_of(_member_agent(status).get("conditions")),
        heartbeat_in(status),
        skeleton_of(doc) if skeleton is None else skeleton,
    )


@lru_cache(maxsize=16_384)
def _time(text: str) -> datetime | None:
    try:
        return parse_time(text)
    except ValueError:
        return None


def record_due(
    live: Mapping[str, str | None], recorded: Mapping[str, str | None], every: timedelta
) -> bool:
    """Whether this pass records observations: the interval is 0, or some cluster's reported
    heartbeat is `every` or more past the one its file records (or before it, or unreadable:
    the file is not one this rule kept). A cluster without a recorded heartbeat does not make
    the pass due: its file is written with the live one anyway."""
    if every <= timedelta(0):
        return True
    for name, seen in live.items():
        was = recorded.get(name)
        if seen is None or was is None or seen == was:
            continue
        seen_at, was_at = _time(seen), _time(was)
        if seen_at is None or was_at is None:
            return True
        if not timedelta(0) <= seen_at - was_at < every:
            return True
    return False


def keeps_record(before: Recorded, live: str | None, skeleton: str, due: bool) -> bool:
    """The file keeps its bytes: the pass is not due, both heartbeats are known and nothing
    but observations differs."""
    return (
        not due
        and live is not None
        and before.heartbeat is not None
        and before.skeleton == skeleton
    )

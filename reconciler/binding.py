"""A placement's binding to one cluster (KubeFleet's ClusterResourceBinding) and its YAML.

`Binding` (with its scheduling `BindingDecision` and hub-recorded `BindingCondition`s) is what the
scheduler decides, the rollout advances and `reconciler.state` remembers between passes;
`binding_to_yaml` and `read_bindings` are the two directions of its entry in the state files
(`state/placements/<key>.yaml`). Imported through `reconciler.state` (which re-exports the
classes) by the scheduler, the rollout and the pass; pure.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import UTC, datetime
from operator import attrgetter
from typing import Any

from gitfleet.api.conditions import format_time, parse_time


@dataclass(frozen=True)
class BindingDecision:
    """The binding's `spec.clusterDecision`: why the scheduler picked the cluster, with the
    scores it had then (None for PickFixed, which does not score). Downscale trims by these."""

    reason: str
    affinity_score: int | None = None
    topology_score: int | None = None

    @property
    def scored(self) -> bool:
        return self.affinity_score is not None and self.topology_score is not None


@dataclass(frozen=True)
class BindingCondition:
    """A binding condition as the hub recorded it: `last_transition_time` is the hub's `now` of
    the pass that first saw this status/reason/message (its committed clock, never an agent's)."""

    type: str
    status: str
    reason: str
    message: str = ""
    last_transition_time: datetime | None = None


@dataclass(frozen=True)
class Binding:
    """A placement's decision for one cluster (KubeFleet's ClusterResourceBinding)."""

    cluster: str
    state: str
    """Scheduled, Bound or Unscheduled."""
    policy_index: int
    resource_index: int | None = None
    """The resource snapshot index the cluster was given (None: nothing rolled out yet)."""
    previous_state: str | None = None
    decision: BindingDecision | None = None
    content: str | None = None
    """`placement_content_hash` of the files the hub gave this cluster for this placement."""
    cluster_overrides: tuple[str, ...] = ()
    """ClusterResourceOverride snapshot names the cluster's content was rendered with."""
    resource_overrides: tuple[str, ...] = ()
    """ResourceOverride snapshot names (`<namespace>/<name>-<index>`) likewise."""
    conditions: tuple[BindingCondition, ...] = ()
    """RolloutStarted and the agent's Applied/Available/DiffReported for `content`."""
    removing: int = 0
    """Deleting bindings only: how many objects the cluster's agent is removing."""

    def __post_init__(self) -> None:
        for name in MEMO_ATTRIBUTES:  # in one order on every binding: see MEMO_ATTRIBUTES
            object.__setattr__(self, name, None)

    def condition(self, type_: str) -> BindingCondition | None:
        return next((c for c in self.conditions if c.type == type_), None)

    def __hash__(self) -> int:
        """Computed once per object: bindings key the per-binding memos of a pass
        (`reconciler.state`), and a placement state's hash is its bindings'."""
        found: int | None = self.__dict__.get(HASH_ATTRIBUTE)
        if found is None:
            found = hash(_FIELDS(self))
            object.__setattr__(self, HASH_ATTRIBUTE, found)
        return found


HASH_ATTRIBUTE = "_hash"
"""The binding's hash, computed once (`Binding.__hash__`)."""
SYNCHRONIZED_ATTRIBUTE = "_work_synchronized"
"""Whether the binding has a WorkSynchronized condition, once `rollsync` asked (a fact of its
own frozen conditions, so it holds for the object's life)."""
STARTED_ATTRIBUTE = "_rollout_started"
"""The RolloutStarted status `rollmove.with_started` found the binding already carries exactly
(likewise a fact of its conditions): the next check of that very binding, every binding of a
placement each pass its rollout is looked at, reads it instead of walking the conditions."""
MEMO_ATTRIBUTES = (HASH_ATTRIBUTE, SYNCHRONIZED_ATTRIBUTE, STARTED_ATTRIBUTE)
"""Facts of a binding remembered on the object (its hash and the two above), None until
known. Every binding gets them when made, in this order: CPython's instances then share one
key table (a key added later, in whatever order, gives the object a dict of its own, ~650
bytes more a binding: 31 MiB of a fleet-1k pass's 42,289 bindings)."""
_FIELDS = attrgetter(*(f.name for f in fields(Binding)))
"""A binding's fields, in order, as one tuple (what `Binding.__hash__` hashes)."""


def binding_to_yaml(b: Binding) -> dict[str, Any]:
    entry: dict[str, Any] = {"cluster": b.cluster, "state": b.state, "policyIndex": b.policy_index}
    if b.resource_index is not None:
        entry["resourceIndex"] = b.resource_index
    if b.previous_state:
        entry["previousState"] = b.previous_state
    if b.decision is not None:
        entry["clusterDecision"] = _decision_to_yaml(b.decision)
    if b.content:
        entry["content"] = b.content
    if b.cluster_overrides:
        entry["clusterResourceOverrides"] = list(b.cluster_overrides)
    if b.resource_overrides:
        entry["resourceOverrides"] = list(b.resource_overrides)
    if b.conditions:
        entry["conditions"] = [_condition_to_yaml(c) for c in b.conditions]
    if b.removing:
        entry["removing"] = b.removing
    return entry


def _condition_to_yaml(c: BindingCondition) -> dict[str, str]:
    out = {"type": c.type, "status": c.status, "reason": c.reason}
    if c.message:
        out["message"] = c.message
    if c.last_transition_time is not None:
        out["lastTransitionTime"] = format_time(c.last_transition_time)
    return out


def _time(raw: Any) -> datetime | None:
    if raw is None:
        return None
    if isinstance(raw, datetime):
        return raw.replace(tzinfo=UTC) if raw.tzinfo is None else raw.astimezone(UTC)
    return parse_time(str(raw))


def _conditions(raw: Any) -> tuple[BindingCondition, ...]:
    return tuple(
        BindingCondition(
            type=str(c["type"]),
            status=str(c["status"]),
            reason=str(c["reason"]),
            message=str(c.get("message", "")),
            last_transition_time=_time(c.get("lastTransitionTime")),
        )
        for c in raw or []
    )


def _decision_to_yaml(d: BindingDecision) -> dict[str, Any]:
    out: dict[str, Any] = {"reason": d.reason}
    if d.scored:
        out["clusterScore"] = {
            "affinityScore": d.affinity_score,
            "topologySpreadScore": d.topology_score,
        }
    return out


def _decision(raw: Any) -> BindingDecision | None:
    if raw is None:
        return None
    score = raw.get("clusterScore") or {}
    affinity, topology = score.get("affinityScore"), score.get("topologySpreadScore")
    return BindingDecision(
        reason=str(raw["reason"]),
        affinity_score=None if affinity is None else int(affinity),
        topology_score=None if topology is None else int(topology),
    )


def read_bindings(raw: Any) -> tuple[Binding, ...]:
    return tuple(
        Binding(
            cluster=str(b["cluster"]),
            state=str(b["state"]),
            policy_index=int(b["policyIndex"]),
            resource_index=b.get("resourceIndex"),
            previous_state=b.get("previousState"),
            decision=_decision(b.get("clusterDecision")),
            content=b.get("content"),
            cluster_overrides=tuple(str(x) for x in b.get("clusterResourceOverrides") or ()),
            resource_overrides=tuple(str(x) for x in b.get("resourceOverrides") or ()),
            conditions=_conditions(b.get("conditions")),
            removing=int(b.get("removing") or 0),
        )
        for b in raw or []
    )

"""The reconciler's memory between passes, and its canonical files under `state/`.

A pass reads the `State` the previous pass wrote (policy and resource snapshot history, bindings,
the placement generation) and returns the next one. `state_files` and `read_state` convert to
and from the output tree's `state/placements/<key>.yaml` files; given the new output tree,
`state_files` also writes `state/prior/` (`reconciler.priorstate`: the index rows and condition
times a restarted hub would otherwise parse from every index and status file).
Called by `reconciler.pass_` and the CLI.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

import yaml

from gitfleet.api.conditions import format_time, parse_time
from gitfleet.api.output import (
    OUTPUT_API_VERSION,
    OVERRIDE_STATE_PATH,
    PLACEMENT_STATE_PREFIX,
    expand_named,
    group_named,
    placement_state_path,
)
from gitfleet.load.yamlio import dump_yaml
from reconciler.priorparse import derive_own, paths_under, remember
from reconciler.priorstate import placement_rows, prior_files

STATE_API_VERSION = OUTPUT_API_VERSION
PLACEMENT_STATE_KIND = "PlacementState"


@dataclass(frozen=True)
class Snapshot:
    """One policy or resource snapshot: its index and content hash (and source commit)."""

    index: int
    hash: str
    commit: str | None = None


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

    def condition(self, type_: str) -> BindingCondition | None:
        return next((c for c in self.conditions if c.type == type_), None)


@dataclass(frozen=True)
class PlacementState:
    """Everything a pass remembers about one placement."""

    key: str
    generation: int = 0
    spec_hash: str = ""
    policy_snapshots: tuple[Snapshot, ...] = ()
    resource_snapshots: tuple[Snapshot, ...] = ()
    bindings: tuple[Binding, ...] = ()
    selected: tuple[tuple[str, str], ...] = ()
    """(resource id, source file) of every resource the placement selected last time: when one
    of them is missing now because its file fails to load, the placement keeps its output."""
    origin_file: str = ""
    deleting: tuple[Binding, ...] = ()
    """Bindings being deleted (KubeFleet's deletionTimestamp): their clusters' files are gone
    from the output and their agents are removing the objects. The scheduler never sees them;
    the rollout counts them (kubefleet.md §2.3) until the agent reports the objects gone."""

    def __hash__(self) -> int:
        """Computed once per object: a state holds a binding per cluster (`canonical_state`)."""
        found: int | None = self.__dict__.get("_hash")
        if found is None:
            found = hash(tuple(getattr(self, f.name) for f in fields(self)))
            object.__setattr__(self, "_hash", found)
        return found

    def latest_policy(self) -> Snapshot | None:
        return self.policy_snapshots[-1] if self.policy_snapshots else None

    def latest_resources(self) -> Snapshot | None:
        return self.resource_snapshots[-1] if self.resource_snapshots else None


@dataclass(frozen=True)
class State:
    """The prior state handed to a pass: placements by key, plus the prior output tree."""

    placements: Mapping[str, PlacementState] = field(default_factory=dict)
    output: Mapping[str, bytes] = field(default_factory=dict)
    overrides: Mapping[str, tuple[Snapshot, ...]] = field(default_factory=dict)
    """Override snapshot history by override key (`ClusterResourceOverride/<name>`, ...)."""
    """The previous output tree (path -> bytes); used to keep held placements' files."""


def _snapshots_to_yaml(snaps: tuple[Snapshot, ...]) -> list[dict[str, Any]]:
    out = []
    for s in snaps:
        entry: dict[str, Any] = {"index": s.index, "hash": s.hash}
        if s.commit:
            entry["commit"] = s.commit
        out.append(entry)
    return out


def _binding_to_yaml(b: Binding) -> dict[str, Any]:
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


def _bindings_to_yaml(bindings: tuple[Binding, ...]) -> dict[str, Any]:
    """`bindings` (and `bindingGroups`: clusters whose bindings are identical but for the
    cluster name, `group_named`). Grouping needs the scheduler's (cluster, state) order without
    repeats, so that reading restores the exact tuple."""
    rows = [_binding_to_yaml(b) for b in bindings]
    keys = [(b.cluster, b.state) for b in bindings]
    if keys != sorted(set(keys)):
        return {"bindings": rows}
    singles, groups = group_named(rows, "cluster", "clusters")
    return {"bindings": singles, "bindingGroups": groups} if groups else {"bindings": singles}


def placement_state_doc(ps: PlacementState) -> dict[str, Any]:
    """The YAML document for one placement's state."""
    doc = {
        "apiVersion": STATE_API_VERSION,
        "kind": PLACEMENT_STATE_KIND,
        "metadata": {"name": ps.key},
        "generation": ps.generation,
        "specHash": ps.spec_hash,
        "originFile": ps.origin_file,
        "policySnapshots": _snapshots_to_yaml(ps.policy_snapshots),
        "resourceSnapshots": _snapshots_to_yaml(ps.resource_snapshots),
        **_bindings_to_yaml(ps.bindings),
        "selected": [{"id": rid, "file": f} for rid, f in ps.selected],
    }
    if ps.deleting:
        doc["deleting"] = [_binding_to_yaml(b) for b in ps.deleting]
    return doc


OVERRIDES_FILE = OVERRIDE_STATE_PATH
MAX_EMITTED_STATES = 20_000
"""Placement states whose YAML bytes are kept between passes (least recently used dropped)."""
_emitted: OrderedDict[PlacementState, tuple[PlacementState, bytes | None]] = OrderedDict()
"""state -> (the first equal state seen, its YAML once written)."""


def canonical_state(ps: PlacementState) -> PlacementState:
    """The first state equal to `ps` this process kept (else `ps`, kept from now on): an
    unchanged placement's state is the same object pass after pass (`reconciler.stagememo`)."""
    found = _emitted.get(ps)
    if found is not None:
        with suppress(KeyError):  # another hub thread may have dropped it meanwhile
            _emitted.move_to_end(ps)
        return found[0]
    _keep(ps, (ps, None))
    return ps


def _keep(ps: PlacementState, value: tuple[PlacementState, bytes | None]) -> None:
    _emitted[ps] = value
    with suppress(KeyError):  # the oldest go first
        while len(_emitted) > MAX_EMITTED_STATES:
            _emitted.popitem(last=False)


def _state_bytes(ps: PlacementState) -> bytes:
    """The YAML of `ps`, serialised only when this state was not written recently: a
    long-running hub re-emits only the placements a pass changed."""
    found = _emitted.get(ps)
    if found is not None and found[1] is not None:
        with suppress(KeyError):  # another hub thread may have dropped it meanwhile
            _emitted.move_to_end(ps)
        return found[1]
    data = dump_yaml(placement_state_doc(ps)).encode()
    _keep(ps, (found[0] if found is not None else ps, data))
    return data


def state_files(
    state: State, output: Mapping[str, bytes] | None = None, clusters: Iterable[str] | None = None
) -> dict[str, bytes]:
    """`state/placements/<key>.yaml` for every placement, and `state/overrides.yaml`; with
    `output` (the new output tree, its index and status files final) `state/prior/` too
    (`clusters`: those with an index file in `output`, when the caller knows them)."""
    files = {}
    for key, ps in sorted(state.placements.items()):
        data = files[placement_state_path(key)] = _state_bytes(ps)
        remember(data, "placement-state", ps)
    if state.overrides:
        doc = {
            "apiVersion": STATE_API_VERSION,
            "kind": "OverrideState",
            "overrides": {k: _snapshots_to_yaml(v) for k, v in sorted(state.overrides.items())},
        }
        data = files[OVERRIDES_FILE] = dump_yaml(doc).encode()
        remember(data, "override-state", dict(state.overrides))
    if output is not None:
        bindings = {key: ps.bindings for key, ps in state.placements.items()}
        files.update(prior_files(bindings, placement_rows(output, clusters), output))
    return files


def _read_overrides(
    files: Mapping[str, bytes], problems: list[str]
) -> dict[str, tuple[Snapshot, ...]]:
    if OVERRIDES_FILE not in files:
        return {}
    try:
        return derive_own(files, OVERRIDES_FILE, "override-state", _override_snapshots)
    except (yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as exc:
        problems.append(f"{OVERRIDES_FILE}: unreadable state file ignored ({type(exc).__name__})")
        return {}


def _override_snapshots(doc: Any) -> dict[str, tuple[Snapshot, ...]]:
    return {str(k): _snapshots(v) for k, v in ((doc or {}).get("overrides") or {}).items()}


def _snapshots(raw: Any) -> tuple[Snapshot, ...]:
    return tuple(
        Snapshot(index=int(s["index"]), hash=str(s["hash"]), commit=s.get("commit"))
        for s in raw or []
    )


def _bindings(raw: Any) -> tuple[Binding, ...]:
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


def _read_bindings(doc: Mapping[str, Any]) -> tuple[Binding, ...]:
    if "bindingGroups" not in doc:
        return _bindings(doc.get("bindings"))
    rows = expand_named(doc.get("bindings"), doc.get("bindingGroups"), "cluster", "clusters")
    return tuple(sorted(_bindings(rows), key=lambda b: (b.cluster, b.state)))


def parse_placement_state(doc: Mapping[str, Any]) -> PlacementState:
    """Inverse of `placement_state_doc`. Raises KeyError/ValueError on a malformed document."""
    return PlacementState(
        key=str(doc["metadata"]["name"]),
        generation=int(doc.get("generation", 0)),
        spec_hash=str(doc.get("specHash", "")),
        origin_file=str(doc.get("originFile", "")),
        policy_snapshots=_snapshots(doc.get("policySnapshots")),
        resource_snapshots=_snapshots(doc.get("resourceSnapshots")),
        bindings=_read_bindings(doc),
        deleting=_bindings(doc.get("deleting")),
        selected=tuple((str(r["id"]), str(r["file"])) for r in doc.get("selected") or []),
    )


def read_state(files: Mapping[str, bytes]) -> tuple[State, list[str]]:
    """Rebuild the State from a previous output tree; unreadable state files are reported and
    skipped (their placements start afresh) rather than failing the pass."""
    placements: dict[str, PlacementState] = {}
    problems: list[str] = []
    for path in [p for p in paths_under(files, PLACEMENT_STATE_PREFIX) if p.endswith(".yaml")]:
        try:
            ps = derive_own(files, path, "placement-state", parse_placement_state)
        except (yaml.YAMLError, AttributeError, KeyError, TypeError, ValueError) as exc:
            problems.append(f"{path}: unreadable state file ignored ({type(exc).__name__})")
            continue
        placements[ps.key] = ps
    overrides = _read_overrides(files, problems)
    return State(placements=placements, output=files, overrides=overrides), problems

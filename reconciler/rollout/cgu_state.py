"""What a ClusterGroupUpgrade remembers between passes (spec/cluster-group-upgrade.md §16.2):
its status, canary batch count, frozen targets, label/annotation overlay ops and the live fields
of its last valid spec, as one YAML document `state/clustergroupupgrades/<ns>/<name>.yaml`.

`CguRun` is the mutable working copy one pass advances (`reconciler.rollout.cgu_run`);
`read_run` / `run_doc` convert from and to the state document; `status_body` is the `status`
stanza of the status file (§16.1), a pure projection of the run. Called by the CGU driver.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gitfleet.api.conditions import format_time, parse_time

CONDITION_ORDER = ("ClustersSelected", "Validated", "Progressing", "Succeeded")
STATE_KIND = "ClusterGroupUpgradeState"


@dataclass(frozen=True)
class Cond:
    status: str
    reason: str
    message: str
    since: str | None = None
    """lastTransitionTime as recorded (RFC 3339)."""


@dataclass(frozen=True)
class Target:
    """One `managedPoliciesForUpgrade` entry: the placement and its target snapshot index."""

    entry: str
    """As written in `managedPolicies` (`name` or `ns/name`)."""
    key: str
    """The placement key (`name` or `ns.name`)."""
    kind: str
    name: str
    namespace: str
    index: int

    def doc(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.namespace:
            out["namespace"] = self.namespace
        out.update(kind=self.kind, resourceSnapshotIndex=self.index)
        return out


@dataclass(frozen=True)
class Op:
    """One recorded action application on one cluster (§13)."""

    seq: int
    at: str
    cluster: str
    phase: str
    add_labels: Mapping[str, str] = field(default_factory=dict)
    remove_labels: tuple[str, ...] = ()
    add_annotations: Mapping[str, str] = field(default_factory=dict)
    remove_annotations: tuple[str, ...] = ()

    def doc(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seq": self.seq,
            "at": self.at,
            "cluster": self.cluster,
            "phase": self.phase,
        }
        for key, value in (
            ("addLabels", dict(self.add_labels)),
            ("removeLabels", list(self.remove_labels)),
            ("addAnnotations", dict(self.add_annotations)),
            ("removeAnnotations", list(self.remove_annotations)),
        ):
            if value:
                out[key] = value
        return out


def op_of(raw: Mapping[str, Any]) -> Op:
    return Op(
        int(raw["seq"]),
        str(raw["at"]),
        str(raw["cluster"]),
        str(raw["phase"]),
        {str(k): str(v) for k, v in (raw.get("addLabels") or {}).items()},
        tuple(str(k) for k in raw.get("removeLabels") or ()),
        {str(k): str(v) for k, v in (raw.get("addAnnotations") or {}).items()},
        tuple(str(k) for k in raw.get("removeAnnotations") or ()),
    )


@dataclass
class CguRun:
    """The CGU's status and memory while one pass advances it."""

    conditions: dict[str, Cond] = field(default_factory=dict)
    computed_max: int | None = None
    targets: list[Target] = field(default_factory=list)
    compliant_before: list[str] = field(default_factory=list)
    plan: list[list[str]] = field(default_factory=list)
    canary_batches: int = 0
    clusters: list[dict[str, Any]] = field(default_factory=list)
    started_at: datetime | None = None
    completed_at: datetime | None = None
    current_batch: int = 0
    batch_started_at: datetime | None = None
    progress: dict[str, dict[str, Any]] = field(default_factory=dict)
    ops: list[Op] = field(default_factory=list)
    live: dict[str, Any] = field(default_factory=dict)
    """Live fields of the last valid spec: timeout, batchTimeoutAction, enable, afterCompletion."""
    origin_file: str = ""
    last_error: str = ""

    @property
    def started(self) -> bool:
        progressing = self.conditions.get("Progressing")
        return "Succeeded" in self.conditions or (
            progressing is not None and progressing.status == "True"
        )

    @property
    def finished(self) -> bool:
        return "Succeeded" in self.conditions

    def next_seq(self) -> int:
        return max((op.seq for op in self.ops), default=0) + 1


def _time(raw: Any) -> datetime | None:
    return None if raw in (None, "") else parse_time(str(raw))


def read_run(doc: Mapping[str, Any]) -> CguRun:
    """Inverse of `run_doc`; raises KeyError/ValueError/TypeError on a malformed document."""
    status = doc.get("status") or {}
    inner = status.get("status") or {}
    run = CguRun()
    for raw in status.get("conditions") or []:
        run.conditions[str(raw["type"])] = Cond(
            str(raw["status"]),
            str(raw.get("reason", "")),
            str(raw.get("message", "")),
            raw.get("lastTransitionTime"),
        )
    run.computed_max = status.get("computedMaxConcurrency")
    run.targets = [
        Target(
            str(t["entry"]),
            str(t["key"]),
            str(t["kind"]),
            str(t["name"]),
            str(t.get("namespace", "")),
            int(t["resourceSnapshotIndex"]),
        )
        for t in doc.get("targets") or []
    ]
    run.compliant_before = [
        str(x) for x in status.get("managedPoliciesCompliantBeforeUpgrade") or []
    ]
    run.plan = [[str(c) for c in batch] for batch in status.get("remediationPlan") or []]
    run.canary_batches = int(doc.get("canaryBatches", 0))
    run.clusters = [dict(c) for c in status.get("clusters") or []]
    run.started_at = _time(inner.get("startedAt"))
    run.completed_at = _time(inner.get("completedAt"))
    run.current_batch = int(inner.get("currentBatch", 0))
    run.batch_started_at = _time(inner.get("currentBatchStartedAt"))
    run.progress = {
        str(k): dict(v) for k, v in (inner.get("currentBatchRemediationProgress") or {}).items()
    }
    run.ops = [op_of(o) for o in doc.get("ops") or []]
    run.live = dict(doc.get("live") or {})
    run.origin_file = str(doc.get("originFile", ""))
    run.last_error = str(doc.get("lastError", ""))
    return run


def _conditions_doc(run: CguRun) -> list[dict[str, Any]]:
    return [
        {
            "type": t,
            "status": c.status,
            "reason": c.reason,
            "message": c.message,
            "lastTransitionTime": c.since,
        }
        for t in CONDITION_ORDER
        if (c := run.conditions.get(t)) is not None
    ]


def status_body(run: CguRun) -> dict[str, Any]:
    """The `status` stanza (§16.1); absent and empty fields are omitted."""
    out: dict[str, Any] = {"conditions": _conditions_doc(run)}
    if run.computed_max is not None:
        out["computedMaxConcurrency"] = run.computed_max
    if run.targets:
        out["managedPoliciesForUpgrade"] = [t.doc() for t in run.targets]
    if run.compliant_before:
        out["managedPoliciesCompliantBeforeUpgrade"] = list(run.compliant_before)
    if run.plan:
        out["remediationPlan"] = [list(b) for b in run.plan]
    if run.clusters:
        out["clusters"] = [dict(c) for c in run.clusters]
    inner: dict[str, Any] = {}
    if run.started_at is not None:
        inner["startedAt"] = format_time(run.started_at)
    if run.completed_at is not None:
        inner["completedAt"] = format_time(run.completed_at)
    if run.current_batch:
        inner["currentBatch"] = run.current_batch
    if run.batch_started_at is not None:
        inner["currentBatchStartedAt"] = format_time(run.batch_started_at)
    if run.progress:
        inner["currentBatchRemediationProgress"] = {
            k: dict(v) for k, v in sorted(run.progress.items())
        }
    if inner:
        out["status"] = inner
    return out


def run_doc(namespace: str, name: str, run: CguRun) -> dict[str, Any]:
    """The state document of one CGU."""
    doc: dict[str, Any] = {
        "apiVersion": "gitfleet.io/v1alpha1",
        "kind": STATE_KIND,
        "metadata": {"name": name, "namespace": namespace},
        "originFile": run.origin_file,
        "canaryBatches": run.canary_batches,
        "targets": [{"entry": t.entry, "key": t.key, **t.doc()} for t in run.targets],
        "ops": [op.doc() for op in run.ops],
        "live": dict(run.live),
        "status": status_body(run),
    }
    if run.last_error:
        doc["lastError"] = run.last_error
    return doc

"""The ClusterGroupUpgrade driver (spec/cluster-group-upgrade.md): every CGU of the fleet through
one pass, as an external rollout driver of the shared contract
`(fleet, RolloutInputs, prior_output) -> DriverResult`.

It reads each CGU's state from the previous output tree, orders the CGUs by their explicit
blockers (§8.2), advances each (`cgu_run.advance`), and returns the binding moves of External
placements (`ExternalUpdate`s), the status and state files, user errors (file, line, field),
the earliest due time and commit trailers for its events. `effective_labels` is the §13 label
overlay the pass applies before scheduling. Registered by the pass; read by `status cgu`.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import yaml

from gitfleet.api.cgu import (
    BATCH_TIMEOUT_ACTIONS,
    ClusterGroupUpgrade,
    ClusterGroupUpgradeSpec,
)
from gitfleet.load.model import FleetSnapshot
from reconciler.priorparse import parse_own, paths_under
from reconciler.rollout.cgu_base import Context
from reconciler.rollout.cgu_blockers import soak_annotations, staged_run_blockers
from reconciler.rollout.cgu_run import advance
from reconciler.rollout.cgu_select import apply_ops, go_list, ordered_ops
from reconciler.rollout.cgu_spec import Blocker, CguInput
from reconciler.rollout.cgu_state import CguRun, read_run, run_doc, status_body
from reconciler.rollout.guard import kept, run_fault
from reconciler.rollout.model import DriverResult, ExternalUpdate, RolloutInputs

Key = tuple[str, str]
STATE_PREFIX = "state/clustergroupupgrades/"
EVENT_TRAILER = "Gitfleet-Cgu-Event"
_QUIET_ACTIONS = frozenset({"RemediationInClusterStarted", "RemediationInClusterCompleted"})


STATUS_PREFIX = "status/clustergroupupgrades/"


def status_path(namespace: str, name: str) -> str:
    return f"{STATUS_PREFIX}{namespace}/{name}.yaml"


def state_path(namespace: str, name: str) -> str:
    return f"{STATE_PREFIX}{namespace}/{name}.yaml"


def prior_runs(output: Mapping[str, bytes]) -> dict[Key, CguRun]:
    """Every CGU state document of the previous output (unreadable ones start afresh)."""
    runs: dict[Key, CguRun] = {}
    for path in [p for p in paths_under(output, STATE_PREFIX) if p.endswith(".yaml")]:
        parts = path[len(STATE_PREFIX) : -len(".yaml")].split("/")
        if len(parts) != 2:
            continue
        try:
            runs[(parts[0], parts[1])] = read_run(parse_own(output[path]) or {})
        except (yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError):
            continue
    return runs


def _present(fleet: FleetSnapshot, runs: Mapping[Key, CguRun]) -> dict[Key, CguInput]:
    """CGUs in the fleet, plus started ones whose file fails to load (kept running, §12.1)."""
    out: dict[Key, CguInput] = {}
    for (ns, name), cgu in fleet.group_upgrades.items():
        out[(ns, name)] = CguInput(
            ns, name, cgu.spec, cgu.metadata.annotations or {}, _refusal(fleet, cgu)
        )
    for key, run in runs.items():
        if key not in out and run.origin_file in fleet.error_files and run.started and run.live:
            spec = ClusterGroupUpgradeSpec.model_validate(run.live)
            out[key] = CguInput(key[0], key[1], spec, {}, None)
    return dict(sorted(out.items()))


def _location(fleet: FleetSnapshot, cgu: ClusterGroupUpgrade) -> tuple[str, int | None]:
    origin = fleet.origins.get(("ClusterGroupUpgrade", cgu.cgu_namespace, cgu.name))
    return (origin.file, origin.line) if origin else ("", None)


def _refusal(fleet: FleetSnapshot, cgu: ClusterGroupUpgrade) -> tuple[str, str] | None:
    """InvalidSpec (batchTimeoutAction) or UnsupportedField, else None."""
    action = cgu.spec.batch_timeout_action
    if action not in BATCH_TIMEOUT_ACTIONS:
        file, line = _location(fleet, cgu)
        where = f"{file}:{line}: " if file else ""
        message = (
            f'{where}spec.batchTimeoutAction: must be one of: Continue, Abort (got "{action}")'
        )
        return "InvalidSpec", message
    unsupported = cgu.spec.unsupported()
    if unsupported:
        return "UnsupportedField", f"Unsupported fields: {go_list(unsupported)}"
    return None


def refusal_errors(fleet: FleetSnapshot) -> list[tuple[str, int | None, str, str]]:
    """User errors for refused CGU fields (the loader accepted their shape)."""
    out = []
    for cgu in fleet.group_upgrades.values():
        file, line = _location(fleet, cgu)
        if cgu.spec.batch_timeout_action not in BATCH_TIMEOUT_ACTIONS:
            out.append(
                (
                    file,
                    line,
                    "spec.batchTimeoutAction",
                    f'must be one of: Continue, Abort (got "{cgu.spec.batch_timeout_action}")',
                )
            )
        for path in cgu.spec.unsupported():
            out.append(
                (
                    file,
                    line,
                    path,
                    f"{path.removeprefix('spec.')} is not supported by gitfleet (ClusterGroupUpgrade)",
                )
            )
    return out


def _order(present: Mapping[Key, CguInput]) -> list[Key]:
    """Topological order of explicit blockingCRs edges (blockers first), ties and cycles by key."""
    edges: dict[Key, set[Key]] = {k: set() for k in present}
    for key, inp in present.items():
        for cr in inp.spec.blocking_c_rs or []:
            blocker = (cr.namespace or key[0], cr.name)
            if blocker in present and blocker != key:
                edges[key].add(blocker)
    waiting = {k: len(v) for k, v in edges.items()}
    ready = [k for k, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    out: list[Key] = []
    while len(out) < len(present):
        if not ready:  # a cycle: break it at the smallest remaining key
            heapq.heappush(ready, min(k for k in present if k not in out))
        key = heapq.heappop(ready)
        if key in out:
            continue
        out.append(key)
        for other, deps in edges.items():
            if key in deps and other not in out:
                waiting[other] -= 1
                if waiting[other] == 0:
                    heapq.heappush(ready, other)
    return out


def _blocker(run: CguRun | None) -> Blocker:
    if run is None:
        return Blocker(None, False, False)
    succeeded = run.conditions.get("Succeeded")
    claims = frozenset((t.key, c) for t in run.targets for b in run.plan for c in b)
    complete = frozenset(c["name"] for c in run.clusters if c.get("state") == "complete")
    return Blocker(
        succeeded.status if succeeded else None,
        bool(run.conditions),
        run.started and not run.finished,
        claims if run.started and not run.finished else frozenset(),
        complete,
    )


def effective_labels(
    fleet: FleetSnapshot, labels: Mapping[str, Mapping[str, str]], output: Mapping[str, bytes]
) -> dict[str, dict[str, str]]:
    """§13: Git labels, then the ops of every present CGU (prior state), in op order."""
    runs = prior_runs(output)
    present = _present(fleet, runs)
    ops = ordered_ops({k: runs[k].ops for k in present if k in runs})
    return apply_ops(labels, ops)


def overlay_entries(
    fleet: FleetSnapshot, output: Mapping[str, bytes]
) -> dict[str, list[dict[str, Any]]]:
    """§13: per cluster, the overlay ops in effect this pass with their origin, in op order."""
    runs = prior_runs(output)
    rows = [
        (op.at, ns, name, op.seq, op)
        for (ns, name) in _present(fleet, runs)
        if (ns, name) in runs
        for op in runs[(ns, name)].ops
    ]
    out: dict[str, list[dict[str, Any]]] = {}
    for _, ns, name, _, op in sorted(rows, key=lambda r: r[:4]):
        entry = {"origin": f"ClusterGroupUpgrade/{ns}/{name}", **op.doc()}
        entry.pop("seq", None)
        entry.pop("cluster", None)
        out.setdefault(op.cluster, []).append(entry)
    return out


def with_overlay_status(
    files: Mapping[str, bytes], entries: Mapping[str, list[dict[str, Any]]]
) -> dict[str, bytes]:
    """`status/clusters/<c>.yaml` documents that also list the overlay entries behind the
    effective labels and annotations they show (`status.labelOverlay`)."""
    out = {}
    for cluster, rows in sorted(entries.items()):
        path = f"status/clusters/{cluster}.yaml"
        if path not in files:
            continue
        doc = dict(yaml.safe_load(files[path]) or {})
        doc["status"] = {**(doc.get("status") or {}), "labelOverlay": rows}
        out[path] = yaml_doc(doc)
    return out


def with_label_overlay(fleet: FleetSnapshot, output: Mapping[str, bytes]) -> FleetSnapshot:
    """The fleet with every MemberCluster's effective labels and annotations (§13): what
    scheduling, overrides, selectors and every CGU of this pass see."""
    runs = prior_runs(output)
    ops = ordered_ops({k: runs[k].ops for k in _present(fleet, runs) if k in runs})
    touched = {op.cluster for op in ops}
    if not touched & set(fleet.clusters):
        return fleet
    base = {n: c.metadata.labels or {} for n, c in fleet.clusters.items()}
    notes = {n: c.metadata.annotations or {} for n, c in fleet.clusters.items()}
    labels, annotations = apply_ops(base, ops), apply_ops(notes, ops, annotations=True)
    clusters = {}
    for name, cluster in fleet.clusters.items():
        if name not in touched:
            clusters[name] = cluster
            continue
        meta = cluster.metadata.model_copy(
            update={"labels": labels[name] or None, "annotations": annotations[name] or None}
        )
        clusters[name] = cluster.model_copy(update={"metadata": meta})
    return replace(fleet, clusters=clusters)


def _live(run: CguRun, inp: CguInput, key: Key, fleet: FleetSnapshot) -> list[tuple[str, str, str]]:
    """Take the spec's live fields, or keep the last valid ones while it is refused (§12.1)."""
    if inp.invalid is None:
        run.live, run.last_error = inp.spec.dump(), ""
        origin = fleet.origins.get(("ClusterGroupUpgrade", *key))
        run.origin_file = origin.file if origin else run.origin_file
        return []
    if not run.started:
        return []
    message = inp.invalid[1]
    if message == run.last_error:
        return []
    run.last_error = message
    return [
        (
            "CguValidationFailure",
            "RemediationOnHoldDueToValidationFailure",
            f"ClusterGroupUpgrade {key[1]}: validation failure: {message}",
        )
    ]


@dataclass
class _Out:
    files: dict[str, bytes] = field(default_factory=dict)
    updates: list[ExternalUpdate] = field(default_factory=list)
    wakeups: list[datetime] = field(default_factory=list)
    trailers: list[tuple[str, str]] = field(default_factory=list)
    errors: list[tuple[str, int | None, str, str]] = field(default_factory=list)

    def merge(self, other: _Out) -> None:
        self.files.update(other.files)
        self.updates += other.updates
        self.wakeups += other.wakeups
        self.trailers += other.trailers
        self.errors += other.errors


def drive_cluster_group_upgrades(
    fleet: FleetSnapshot, inputs: RolloutInputs, prior_output: Mapping[str, bytes]
) -> DriverResult:
    """Every ClusterGroupUpgrade through this pass; one whose step raises keeps its previous
    documents and gets a located error (`reconciler.rollout.guard`), the others go on."""
    # Without a declared CGU or a file failing to load no previous run can be present
    # (`_present`): the previous output's state documents are not even listed then.
    declared = fleet.group_upgrades or fleet.error_files
    runs = prior_runs(prior_output) if declared else {}
    present = _present(fleet, runs)
    ops = ordered_ops({k: runs[k].ops for k in present if k in runs})
    labels = apply_ops(inputs.cluster_labels, ops) if present else {}  # present CGUs' only
    soak, bad_soak = soak_annotations(fleet)
    blockers = {k: _blocker(runs.get(k)) for k in present}
    blockers.update(staged_run_blockers(fleet, prior_output))
    now = inputs.now.replace(microsecond=0)
    out = _Out(errors=refusal_errors(fleet))
    for key in _order(present):
        one = _Out()
        try:
            ctx = Context(inputs.placements, labels, soak, now, blockers)
            run = _drive_one(fleet, key, present[key], runs.get(key), ctx, bad_soak, one)
            blockers[key] = _blocker(run)
        except Exception as exc:  # one CGU's fault fails it alone
            origin = fleet.origins.get(("ClusterGroupUpgrade", *key))
            file, line = (origin.file, origin.line) if origin else ("", None)
            source = f"ClusterGroupUpgrade/{key[0]}/{key[1]}"
            one = _Out(files=kept(prior_output, [state_path(*key), status_path(*key)]))
            one.errors.append(run_fault(source, file, line, exc))
        out.merge(one)
    return DriverResult(
        updates=tuple(out.updates),
        files=out.files,
        errors=tuple(out.errors),
        wakeup=min(out.wakeups) if out.wakeups else None,
        trailers=tuple(out.trailers),
    )


def _drive_one(
    fleet: FleetSnapshot,
    key: Key,
    inp: CguInput,
    prior: CguRun | None,
    ctx: Context,
    bad_soak: Mapping[str, str],
    out: _Out,
) -> CguRun:
    """One CGU's step into `out`; returns its run state after the step."""
    run = prior or CguRun()
    if not prior:
        out.trailers.append(
            (
                EVENT_TRAILER,
                f"{key[0]}/{key[1]} CguCreated BuildingRemediationPlan: New ClusterGroupUpgrade found: {key[1]}",
            )
        )
    events = _live(run, inp, key, fleet)
    if inp.invalid is not None and run.started:
        inp = CguInput(
            inp.namespace,
            inp.name,
            ClusterGroupUpgradeSpec.model_validate(run.live),
            inp.annotations,
        )
    step = advance(inp, run, ctx)
    events += step.events
    for t in run.targets if run.started and not run.finished else []:
        if t.key in bad_soak:
            events.append(
                (
                    "CguInvalidSoakAnnotation",
                    "",
                    f"ignoring invalid soak annotation on placement {t.key}: {bad_soak[t.key]}",
                )
            )
    source = f"ClusterGroupUpgrade/{key[0]}/{key[1]}"
    out.updates += [
        ExternalUpdate(p, source, dict(sorted(cs.items())))
        for p, cs in sorted(step.updates.items())
    ]
    out.wakeups += step.wakeups
    out.trailers += [
        (EVENT_TRAILER, f"{key[0]}/{key[1]} {reason} {action}: {message}".replace("  ", " "))
        for reason, action, message in events
        if action not in _QUIET_ACTIONS
    ]
    out.files[state_path(*key)] = yaml_doc(run_doc(key[0], key[1], run))
    out.files[status_path(*key)] = yaml_doc(_status_doc(fleet, key, run))
    return run


def _status_doc(fleet: FleetSnapshot, key: Key, run: CguRun) -> dict[str, Any]:
    cgu = fleet.group_upgrades.get(key)
    if cgu is not None:
        doc = cgu.dump()
    else:
        doc = {
            "apiVersion": "ran.openshift.io/v1alpha1",
            "kind": "ClusterGroupUpgrade",
            "metadata": {"name": key[1], "namespace": key[0]},
            "spec": dict(run.live),
        }
    doc.pop("status", None)
    doc["status"] = status_body(run)
    return doc


def yaml_doc(doc: Mapping[str, Any]) -> bytes:
    from gitfleet.load.yamlio import dump_yaml

    return dump_yaml(dict(doc)).encode()

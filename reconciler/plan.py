"""`gitfleet plan`: what a change does to the fleet, from two rendered output trees.

`plan_changes` compares the output of the base revision with the output of the head revision
(both computed by the pure pass, without any cluster credentials) and reports, per placement, the
clusters gained and lost and, per cluster, the objects added, changed and removed with unified
diffs of the rendered manifests, and for every ClusterGroupUpgrade whose status changes its
batches, the label ops it would record and whether merging starts it. Secret values never appear: Secret manifests are diffed with their
values replaced by markers that say which keys changed (no digest of a value either), and an
EncryptedSecret's armored payload by a marker saying whether it changed. Pure; the CLI formats.
"""

from __future__ import annotations

import difflib
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gitfleet.api.output import INDEX_FILE, object_path, split_cluster_path
from reconciler.govern.deletion import DeletionHold
from reconciler.output import yaml_bytes
from reconciler.priorparse import derive_own, load_bounded
from reconciler.priorstate import READ_ERRORS, index_entries
from reconciler.rollout.stagedreport import RunPreview, run_previews

MAX_DIFF_LINES = 400
"""Diff lines shown per object; longer diffs are cut with a note."""


@dataclass(frozen=True)
class ObjectChange:
    """One object of one cluster that the change adds, changes or removes."""

    file: str
    change: str
    """added, changed or removed."""
    diff: str


@dataclass
class PlacementChanges:
    """What the change does to one placement."""

    key: str
    gained: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    clusters: dict[str, list[ObjectChange]] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        out = {"added": 0, "changed": 0, "removed": 0}
        for changes in self.clusters.values():
            for c in changes:
                out[c.change] += 1
        return out


@dataclass(frozen=True)
class GroupUpgradeChange:
    """A ClusterGroupUpgrade that the change adds or whose status it changes."""

    key: str
    """`<namespace>/<name>`."""
    change: str
    """added, changed or removed."""
    batches: tuple[tuple[str, ...], ...] = ()
    progressing: str = ""
    """`<status> <reason>: <message>` of its Progressing (or Validated/ClustersSelected) condition."""
    starts: bool = False
    """True when merging the change starts the upgrade (it was not started before)."""
    ops: tuple[str, ...] = ()
    """Label/annotation overlay ops the change would record: `<cluster> <phase>: +k=v -k`."""


@dataclass(frozen=True)
class Plan:
    """The whole report."""

    placements: tuple[PlacementChanges, ...]
    errors: tuple[str, ...]
    group_upgrades: tuple[GroupUpgradeChange, ...] = ()
    runs: tuple[RunPreview, ...] = ()
    """Staged update runs the change adds or changes."""
    deletions_held: tuple[DeletionHold, ...] = ()
    """Removals the mass-deletion guard would hold after merging (shown first)."""

    def totals(self) -> dict[str, int]:
        out = {"placements": len(self.placements), "added": 0, "changed": 0, "removed": 0}
        clusters: set[str] = set()
        for p in self.placements:
            for k, v in p.counts().items():
                out[k] += v
            clusters.update(p.clusters, p.gained, p.lost)
        out["clusters"] = len(clusters)
        out["errors"] = len(self.errors)
        return out


def _bindings(files: Mapping[str, bytes]) -> dict[str, set[str]]:
    """placement key -> clusters whose index lists it."""
    out: dict[str, set[str]] = {}
    for path in filter(_INDEX_SUFFIX, files):  # 1 path in ~470 is a cluster index
        where = split_cluster_path(path)
        if where is None or where.what != "cluster-index":
            continue
        for key in _listed_keys(files, path):
            out.setdefault(key, set()).add(where.cluster)
    return out


_INDEX_SUFFIX = operator.methodcaller("endswith", "/" + INDEX_FILE)


def _listed_keys(files: Mapping[str, bytes], path: str) -> list[str]:
    """The placement keys the cluster index at `path` lists: from what the pass remembered of
    the file when it wrote it (`priorparse.remember`; else parsed once per blob id, so an index
    the change left alone is read once for both trees), or read as it is when the file does not
    read as a cluster index."""
    try:
        return list(derive_own(files, path, "cluster-index", index_entries))
    except READ_ERRORS:
        doc = load_bounded(files[path]) or {}
        return [str(e.get("key")) for e in doc.get("placements") or []]


def _changed_objects(
    base: Mapping[str, bytes], head: Mapping[str, bytes]
) -> dict[tuple[str, str], list[str]]:
    """(placement key, cluster) -> the object files whose bytes differ between the trees (or
    that one has only), in name order; the placement's index is no object. Only the paths
    that differ are looked at: most of an output tree is the same on both sides."""
    differ = [p for p, data in base.items() if head.get(p) != data]
    differ += [p for p in head if p not in base]
    out: dict[tuple[str, str], list[str]] = {}
    for path in sorted(differ):  # so each placement's files on a cluster come in name order
        where = split_cluster_path(path)
        if where is not None and where.what == "object":
            out.setdefault((where.key, where.cluster), []).append(where.file)
    return out


def _secret_values(doc: Any) -> dict[tuple[str, str], Any]:
    out = {}
    for section in ("data", "stringData"):
        values = doc.get(section)
        if isinstance(values, dict):
            out.update({(section, str(k)): v for k, v in values.items()})
    return out


def _is_secret(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("kind") == "Secret" and doc.get("apiVersion") == "v1"


def _is_encrypted(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("kind") == "EncryptedSecret"


def _mark_ciphertext(doc: dict[str, Any], other: bytes | None) -> bytes:
    """An EncryptedSecret with its armored payload replaced by a one-line marker (the payload
    changes whenever the Secret or its recipients change; its bytes tell a reviewer nothing)."""
    spec = doc.get("spec")
    if isinstance(spec, dict) and "ciphertext" in spec:
        theirs: Any = load_bounded(other) if other is not None else None
        same = (
            _is_encrypted(theirs)
            and (theirs.get("spec") or {}).get("ciphertext") == spec["ciphertext"]
        )
        spec["ciphertext"] = "(age ciphertext)" if same else "(age ciphertext, changed)"
    return yaml_bytes(doc)


def redact_secret(data: bytes, other: bytes | None = None, side: str = "") -> bytes:
    """A Secret manifest with every data/stringData value replaced by a marker. A value that
    differs from the same key in `other` (the other side of the diff) is marked as changed, so a
    reviewer sees which keys changed; no digest or part of any value is ever shown."""
    if b"Secret" not in data and b"\\" not in data:
        return data  # neither kind can be spelled without it (not even escaped: no backslash)
    doc: Any = load_bounded(data)
    if _is_encrypted(doc):
        return _mark_ciphertext(doc, other)
    if not _is_secret(doc):
        return data
    theirs = load_bounded(other) if other is not None else None
    before = _secret_values(theirs) if _is_secret(theirs) else {}
    for section in ("data", "stringData"):
        values = doc.get(section)
        if isinstance(values, dict):
            doc[section] = {
                k: "(redacted)"
                if before.get((section, str(k)), object()) == v
                else f"(redacted, {side or 'changed'} value)"
                for k, v in values.items()
            }
    return yaml_bytes(doc)


def _diff(path: str, old: bytes | None, new: bytes | None) -> str:
    a = redact_secret(old, new, "old").decode().splitlines(keepends=True) if old is not None else []
    b = redact_secret(new, old, "new").decode().splitlines(keepends=True) if new is not None else []
    lines = list(difflib.unified_diff(a, b, f"a/{path}", f"b/{path}"))
    if len(lines) > MAX_DIFF_LINES:
        cut = len(lines) - MAX_DIFF_LINES
        lines = [*lines[:MAX_DIFF_LINES], f"... {cut} more diff lines not shown\n"]
    return "".join(lines)


def _object_changes(
    key: str, cluster: str, names: list[str], base: Mapping[str, bytes], head: Mapping[str, bytes]
) -> list[ObjectChange]:
    changes = []
    for name in names:
        path = object_path(cluster, key, name)
        before, after = base.get(path), head.get(path)
        kind = "added" if before is None else "removed" if after is None else "changed"
        changes.append(ObjectChange(name, kind, _diff(path, before, after)))
    return changes


_CGU_STATUS = "status/clustergroupupgrades/"
_CGU_STATE = "state/clustergroupupgrades/"


def _started(status: Mapping[str, Any]) -> bool:
    conds = {c.get("type"): c for c in status.get("conditions") or []}
    progressing = conds.get("Progressing") or {}
    return "Succeeded" in conds or progressing.get("status") == "True"


def _headline(status: Mapping[str, Any]) -> str:
    conds = {c.get("type"): c for c in status.get("conditions") or []}
    for t in ("Succeeded", "Progressing", "Validated", "ClustersSelected"):
        c = conds.get(t)
        if c is not None and (t != "Validated" or c.get("status") != "True"):
            return f"{t}={c.get('status')} {c.get('reason')}: {c.get('message')}"
    return ""


def _ops(base: Mapping[str, bytes], head: Mapping[str, bytes], path: str) -> tuple[str, ...]:
    def load(files: Mapping[str, bytes]) -> list[Any]:
        data = files.get(path)
        doc = load_bounded(data) if data is not None else None
        return list((doc or {}).get("ops") or [])

    before = {(o.get("seq"), o.get("cluster")) for o in load(base)}
    out = []
    for op in load(head):
        if (op.get("seq"), op.get("cluster")) in before:
            continue
        adds = [f"+{k}={v}" for k, v in (op.get("addLabels") or {}).items()]
        adds += [f"-{k}" for k in op.get("removeLabels") or []]
        adds += [f"+annotation {k}={v}" for k, v in (op.get("addAnnotations") or {}).items()]
        adds += [f"-annotation {k}" for k in op.get("removeAnnotations") or []]
        out.append(f"{op.get('cluster')} {op.get('phase')}: {' '.join(adds)}")
    return tuple(out)


def group_upgrade_changes(
    base: Mapping[str, bytes], head: Mapping[str, bytes]
) -> tuple[GroupUpgradeChange, ...]:
    """CGUs whose status differs between the two trees: their plan, state and recorded ops."""
    out = []
    paths = sorted(p for p in set(base) | set(head) if p.startswith(_CGU_STATUS))
    for path in paths:
        if base.get(path) == head.get(path):
            continue
        key = path[len(_CGU_STATUS) : -len(".yaml")]
        if path not in head:
            out.append(GroupUpgradeChange(key, "removed"))
            continue
        status = (load_bounded(head[path]) or {}).get("status") or {}
        old = load_bounded(base[path]) if path in base else None
        was_started = _started((old or {}).get("status") or {})
        out.append(
            GroupUpgradeChange(
                key,
                "added" if old is None else "changed",
                tuple(tuple(b) for b in status.get("remediationPlan") or []),
                _headline(status),
                _started(status) and not was_started,
                _ops(base, head, _CGU_STATE + key + ".yaml"),
            )
        )
    return tuple(out)


def plan_changes(
    base: Mapping[str, bytes],
    head: Mapping[str, bytes],
    errors: tuple[str, ...] = (),
    deletions_held: tuple[DeletionHold, ...] = (),
) -> Plan:
    """Compare two output trees (path -> bytes)."""
    base_bind, head_bind = _bindings(base), _bindings(head)
    changed = _changed_objects(base, head)
    plans: dict[str, PlacementChanges] = {}
    for key in sorted(set(base_bind) | set(head_bind)):
        plan = PlacementChanges(key)
        before, after = base_bind.get(key, set()), head_bind.get(key, set())
        plan.gained, plan.lost = sorted(after - before), sorted(before - after)
        for cluster in sorted(before | after):
            names = changed.get((key, cluster))
            if names:
                plan.clusters[cluster] = _object_changes(key, cluster, names, base, head)
        if plan.gained or plan.lost or plan.clusters:
            plans[key] = plan
    return Plan(
        placements=tuple(plans.values()),
        errors=errors,
        group_upgrades=group_upgrade_changes(base, head),
        runs=run_previews(base, head),
        deletions_held=deletions_held,
    )

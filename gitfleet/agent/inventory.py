"""What this agent applied, kept in the member cluster, and pruning by it.

The inventory is the ConfigMap `gitfleet-inventory` in namespace `gitfleet-system` (both created
when missing): one data key per placement key, value = canonical JSON list of
`[apiVersion, kind, namespace, name]`. Applied objects also carry the labels
`gitfleet.io/placement` and `gitfleet.io/cluster`. Crash-safe order (driven by
`gitfleet.agent.sync`): record the intended objects before applying; prune deletes only objects
the inventory recorded that are desired by no placement and still carry this agent's ownership
labels; an entry leaves the inventory only after its delete succeeded and the object is gone (an
object that finalizers keep after its delete is a `PruneFailure` naming them, and stays recorded).
Prune order is the reverse of the apply order, CRDs last.
Limit: a ConfigMap holds at most 1 MiB (about 10,000 entries).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Set
from dataclasses import dataclass

from gitfleet.agent.builtin import wave_of
from gitfleet.agent.client import FIELD_MANAGER, ClusterClient, ClusterError, NotFound, Obj
from gitfleet.api.reserved import refused_object

INVENTORY_NAMESPACE = "gitfleet-system"
INVENTORY_NAME = "gitfleet-inventory"
LABEL_PLACEMENT = "gitfleet.io/placement"
LABEL_CLUSTER = "gitfleet.io/cluster"
ANNOTATION_HASH = "gitfleet.io/spec-hash"
ANNOTATION_APPLIED = "gitfleet.io/applied-output-commit"
"""On the inventory ConfigMap: the last output commit this agent applied, so replay protection
survives an agent restarted with an empty cache (written by its own field manager)."""
REPLAY_MANAGER = "gitfleet-replay"

Record = tuple[str, str, str, str]
"""(apiVersion, kind, namespace or '', name)."""
Inventory = dict[str, frozenset[Record]]
"""placement key -> recorded objects."""


class InventoryError(ClusterError):
    """The inventory ConfigMap exists but cannot be read: prune nothing."""


@dataclass(frozen=True)
class PruneFailure:
    """An object that should have been pruned but could not be deleted."""

    record: Record
    message: str


def read_inventory(client: ClusterClient) -> Inventory:
    """The recorded objects; {} when the ConfigMap does not exist."""
    live = client.get("v1", "ConfigMap", INVENTORY_NAMESPACE, INVENTORY_NAME)
    if live is None:
        return {}
    out: Inventory = {}
    for key, text in sorted((live.get("data") or {}).items()):
        try:
            rows = json.loads(text)
            out[key] = frozenset((str(a), str(k), str(n), str(m)) for a, k, n, m in rows)
        except (ValueError, TypeError) as exc:
            raise InventoryError(f"inventory entry {key} is unreadable: {exc}") from None
    return out


def write_inventory(client: ClusterClient, cluster: str, new: Inventory, old: Inventory) -> None:
    """Store `new` unless it equals `old` (creating the namespace first when needed)."""
    new = {k: v for k, v in new.items() if v}
    if new == {k: v for k, v in old.items() if v}:
        return
    if client.get("v1", "Namespace", None, INVENTORY_NAMESPACE) is None:
        namespace = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": INVENTORY_NAMESPACE, "labels": {LABEL_CLUSTER: cluster}},
        }
        client.apply(namespace, field_manager=FIELD_MANAGER, force=True, dry_run=False)
    data = {
        k: json.dumps(sorted(list(r) for r in v), separators=(",", ":"))
        for k, v in sorted(new.items())
    }
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": INVENTORY_NAME,
            "namespace": INVENTORY_NAMESPACE,
            "labels": {LABEL_CLUSTER: cluster},
        },
        "data": data,
    }
    client.apply(config_map, field_manager=FIELD_MANAGER, force=True, dry_run=False)


def with_intended(old: Inventory, intended: Mapping[str, Set[Record]]) -> Inventory:
    """`old` plus the objects about to be applied (recorded before any apply)."""
    keys = set(old) | set(intended)
    return {k: old.get(k, frozenset()) | frozenset(intended.get(k, ())) for k in sorted(keys)}


def is_owned(live: Obj, cluster: str, placement: str) -> bool:
    """Whether `live` carries this agent's ownership labels for `placement`."""
    labels = (live.get("metadata") or {}).get("labels") or {}
    return labels.get(LABEL_PLACEMENT) == placement and labels.get(LABEL_CLUSTER) == cluster


def prune(
    client: ClusterClient, cluster: str, inventory: Inventory, desired: Mapping[Record, str]
) -> tuple[Inventory, list[PruneFailure]]:
    """Delete recorded objects desired by no placement; the inventory that remains, failures."""
    remaining = {k: set(v) for k, v in inventory.items()}
    failures: list[PruneFailure] = []
    doomed = sorted(
        ((key, rec) for key, recs in inventory.items() for rec in recs if desired.get(rec) != key),
        key=lambda item: _prune_order(item[1]),
    )
    for key, record in doomed:
        if record in desired or refused_object(*record) is not None:
            # never prune what no placement may reach (the agent's own objects, reserved ns)
            remaining[key].discard(record)
            continue
        try:
            _delete_if_owned(client, cluster, key, record)
        except ClusterError as exc:
            failures.append(PruneFailure(record, exc.message))
            continue
        remaining[key].discard(record)
    return {k: frozenset(v) for k, v in sorted(remaining.items()) if v}, failures


def _delete_if_owned(client: ClusterClient, cluster: str, key: str, record: Record) -> None:
    """Delete the object when it still carries our labels; `PruneBlocked` while finalizers hold
    it (then it stays recorded, and the next pass looks again)."""
    api_version, kind, namespace, name = record
    try:
        live = client.get(api_version, kind, namespace or None, name)
    except NotFound:
        return
    if live is None or not is_owned(live, cluster, key):
        return
    if not (live.get("metadata") or {}).get("deletionTimestamp"):
        try:
            client.delete(api_version, kind, namespace or None, name, propagation="Background")
        except NotFound:
            return
        live = client.get(api_version, kind, namespace or None, name)
    if live is not None and (live.get("metadata") or {}).get("deletionTimestamp"):
        raise PruneBlocked(_blocked_message(live))


class PruneBlocked(ClusterError):
    """The object is being deleted but finalizers keep it (a controller has to remove them)."""


def _blocked_message(live: Obj) -> str:
    meta = live.get("metadata") or {}
    held = [str(f) for f in meta.get("finalizers") or []]
    spec = live.get("spec")
    if live.get("kind") == "Namespace" and isinstance(spec, dict):
        held += [f"spec.finalizers {f}" for f in spec.get("finalizers") or []]
    since = meta.get("deletionTimestamp")
    if held:
        return f"deleted at {since}, but finalizers still hold it: {', '.join(held)}"
    return f"deleted at {since}, but still present (deletion in progress)"


def _prune_order(record: Record) -> tuple[bool, int, Record]:
    """The reverse of the apply order (custom resources and workloads first, namespaces late),
    with CustomResourceDefinitions last of all: deleting one deletes every object of its kinds."""
    api_version, kind = record[0], record[1]
    return (kind == "CustomResourceDefinition", -wave_of(api_version, kind), record)


def read_applied_commit(client: ClusterClient) -> str | None:
    """The output commit this agent last applied, as recorded on the cluster."""
    live = client.get("v1", "ConfigMap", INVENTORY_NAMESPACE, INVENTORY_NAME)
    commit = (((live or {}).get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_APPLIED)
    return str(commit) if commit else None


def record_applied_commit(client: ClusterClient, commit: str) -> None:
    """Record `commit` on the inventory (when there is one, and only when it changed)."""
    live = client.get("v1", "ConfigMap", INVENTORY_NAMESPACE, INVENTORY_NAME)
    annotations = ((live or {}).get("metadata") or {}).get("annotations") or {}
    if live is None or annotations.get(ANNOTATION_APPLIED) == commit:
        return
    mark = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": INVENTORY_NAME,
            "namespace": INVENTORY_NAMESPACE,
            "annotations": {ANNOTATION_APPLIED: commit},
        },
    }
    client.apply(mark, field_manager=REPLAY_MANAGER, force=True, dry_run=False)

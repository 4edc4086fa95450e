"""`InMemoryCluster`: a faithful-enough Kubernetes API server in memory, for the agent's tests.

What it models (what the agent relies on):
- discovery of built-in kinds, plus kinds of CustomResourceDefinitions once they are Established
  (after `crd_establish_polls` reads of the CRD, 0 = at once);
- server-side apply with field ownership per field manager. **Simplification:** ownership is
  tracked per leaf path of nested mappings; lists are atomic leaves (real SSA merges list items
  by key for `listType=map`). Applying a field another manager owns with a different value is a
  `Conflict` naming the managers unless `force` (which moves ownership); fields a manager owned
  and no longer applies are removed unless another manager owns them; dry-run computes the result
  without storing it; `metadata.resourceVersion` in an apply is a precondition;
- resourceVersion bumps on every change and generation bumps when anything outside metadata and
  status changes; `metadata.managedFields` in the real `fieldsV1` encoding (lists atomic),
  omitted when nobody owns anything;
- namespaced vs cluster-scoped kinds; a namespaced object needs an existing, non-terminating
  namespace (`NotFound` otherwise);
- deletion with finalizers (a `deletionTimestamp` until a patch clears them); deleting a
  namespace removes its objects at once (a cluster with a namespace controller);
- the status subresource: apply and patch never change `status`; tests call `set_status`;
- a Secret's `stringData` is merged into `data` (base64) and never stored;
- server defaulting and validation in `memory_server` (Service cluster IP, Namespace label and
  `spec.finalizers`, CRDs need `openAPIV3Schema`), and the real conflict message;
- faults: `reject` (Invalid), `fail_next` (429 / 5xx for the next N calls), `crash_after_writes`
  (raise any exception, e.g. a simulated kill, after N more writes).
Not modelled: admission webhooks, OpenAPI validation, strategic merge, watch, label selector
expressions (equality only), garbage collection by owner references.

Differences a real kube-apiserver v1.36.3 + etcd showed (`tests/kube/`, the same scenarios):
- fixed here: the server stores `stringData` as `data` (this cluster kept `stringData`, so the
  agent's "already applied" check never matched a real Secret and re-applied it every pass);
  `managedFields` use `fieldsV1` and are absent when empty (this cluster used dotted paths);
  a Namespace gets `kubernetes.io/metadata.name` and `spec.finalizers: [kubernetes]`; a v1 CRD
  without `openAPIV3Schema` is refused (this cluster accepted it); the conflict message reads
  `Apply failed with 1 conflict: conflict with "m" using apps/v1: .spec.replicas`;
- still different: the real server defaults many fields (Deployment `strategy`,
  `revisionHistoryLimit`, container `imagePullPolicy`, Service `ipFamilies`, ...) that this
  cluster leaves out, none owned by a field manager (Full comparison ignores unowned
  member-only fields, so both agree); with no controller-manager, a deleted Namespace stays
  `Terminating` on the test server (the namespace controller would empty and remove it; this
  cluster does that at once), and nothing garbage-collects; CRDs become Established after a
  short asynchronous delay (modelled by `crd_establish_polls`).
The agent bugs the real server exposed were fixed in the agent: stringData Secrets re-applied
every pass, Full comparison reporting server defaults as drifts, and a prune blocked by
finalizers silently dropped from the inventory instead of being reported.
"""

from __future__ import annotations

import builtins
import copy
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gitfleet.agent.builtin import BUILTIN_KINDS, crd_kinds, group_of
from gitfleet.agent.client import (
    Conflict,
    Invalid,
    NotFound,
    Obj,
    Propagation,
    ResourceInfo,
    ServerError,
    Throttled,
)
from gitfleet.agent.drift import as_stored
from gitfleet.agent.fields import (
    Path,
    delete_path,
    get_path,
    leaves,
    merge_patch,
    set_path,
    spec_part,
    without_versions,
)
from gitfleet.agent.memory_server import (
    apply_defaults,
    conflict_error,
    invalid_reason,
    managed_fields,
)

Key = tuple[str, str, str, str]
"""(group, kind, namespace or '', name)."""


@dataclass
class _Stored:
    obj: Obj
    owners: dict[str, set[Path]] = field(default_factory=dict)
    operations: dict[str, str] = field(default_factory=dict)
    polls: int = 0


class InMemoryCluster:
    """An in-memory `ClusterClient` (see the module docstring for what it models)."""

    def __init__(self, *, crd_establish_polls: int = 0, now: str = "2026-01-01T00:00:00Z") -> None:
        self.crd_establish_polls = crd_establish_polls
        self.now = now
        self.calls: Counter[str] = Counter()
        self.writes = 0
        self._objects: dict[Key, _Stored] = {}
        self._kinds: dict[tuple[str, str], ResourceInfo] = {
            (i.api_version, i.kind): i for i in BUILTIN_KINDS
        }
        self._rejections: dict[tuple[str, str, str], str] = {}
        self._failures: list[int] = []
        self._crash: tuple[int, BaseException] | None = None
        self._counter = 0

    def reject(self, kind: str, namespace: str | None, name: str, message: str) -> None:
        """Every apply of this object fails as Invalid with `message`."""
        self._rejections[(kind, namespace or "", name)] = message

    def fail_next(self, count: int, status: int = 429) -> None:
        """The next `count` calls (any method) fail with HTTP `status` (429 or 5xx)."""
        self._failures.extend([status] * count)

    def crash_after_writes(self, count: int, error: BaseException) -> None:
        """After `count` more successful writes, the next write raises `error` (once)."""
        self._crash = (count, error)

    def discover(self, api_version: str, kind: str) -> ResourceInfo:
        self._call("discover")
        return self._info(api_version, kind)

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> Obj | None:
        self._call("get")
        stored = self._objects.get((group_of(api_version), kind, namespace or "", name))
        if stored is None:
            return None
        if kind == "CustomResourceDefinition":
            self._poll_crd(stored)
        return self._render(stored)

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[Obj]:
        self._call("list")
        self._info(api_version, kind)
        group, wanted = group_of(api_version), dict(labels or {})
        out = []
        for key in sorted(self._objects):
            if key[0] != group or key[1] != kind or (namespace and key[2] != namespace):
                continue
            stored = self._objects[key]
            have = stored.obj.get("metadata", {}).get("labels") or {}
            if all(have.get(k) == v for k, v in wanted.items()):
                out.append(self._render(stored))
        return out

    def apply(
        self, obj: Mapping[str, Any], *, field_manager: str, force: bool, dry_run: bool
    ) -> Obj:
        self._call("apply")
        config = as_stored(obj)
        key, info = self._check_target(config)
        if not dry_run:
            self._write_fault()
        current = self._objects.get(key)
        self._check_precondition(config, current)
        stored = copy.deepcopy(current) if current else self._new(config, info)
        self._merge_apply(stored, config, field_manager, force)
        if current is not None:
            self._bump(current.obj, stored.obj)
        if dry_run:
            return self._render(stored)
        self._store(key, stored)
        return self._render(stored)

    def patch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        patch: Mapping[str, Any],
        *,
        field_manager: str,
    ) -> Obj:
        self._call("patch")
        key = (group_of(api_version), kind, namespace or "", name)
        current = self._objects.get(key)
        if current is None:
            raise NotFound(f'{kind} "{name}" not found')
        self._write_fault()
        stored = copy.deepcopy(current)
        body = {k: v for k, v in patch.items() if k != "status"}
        stored.obj = as_stored(merge_patch(stored.obj, body))
        stored.obj["status"] = copy.deepcopy(current.obj.get("status"))
        if stored.obj["status"] is None:
            del stored.obj["status"]
        self._take_changed(stored, current.obj, field_manager)
        self._bump(current.obj, stored.obj)
        self._store(key, stored)
        return self._render(stored)

    def delete(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        propagation: Propagation = "Background",
    ) -> None:
        self._call("delete")
        key = (group_of(api_version), kind, namespace or "", name)
        stored = self._objects.get(key)
        if stored is None:
            raise NotFound(f'{kind} "{name}" not found')
        self._write_fault()
        meta = stored.obj["metadata"]
        self.writes += 1
        if meta.get("finalizers"):
            if "deletionTimestamp" not in meta:
                meta["deletionTimestamp"] = self.now
                self._next_version(stored.obj)
            return
        self._remove(key)

    def set_status(
        self, api_version: str, kind: str, namespace: str | None, name: str, status: Obj
    ) -> None:
        """Replace the status subresource (what a controller would do)."""
        stored = self._objects[(group_of(api_version), kind, namespace or "", name)]
        stored.obj["status"] = copy.deepcopy(status)
        self._next_version(stored.obj)

    def objects(self) -> builtins.list[Obj]:
        """Every stored object, sorted by (group, kind, namespace, name)."""
        return [self._render(self._objects[k]) for k in sorted(self._objects)]

    def _call(self, method: str) -> None:
        self.calls[method] += 1
        if self._failures:
            status = self._failures.pop(0)
            if status == 429:
                raise Throttled("the server has received too many requests (429)")
            raise ServerError(f"the server returned HTTP {status}")

    def _write_fault(self) -> None:
        if self._crash is None:
            return
        left, error = self._crash
        if left <= 0:
            self._crash = None
            raise error
        self._crash = (left - 1, error)

    def _info(self, api_version: str, kind: str) -> ResourceInfo:
        info = self._kinds.get((api_version, kind))
        if info is None:
            raise NotFound(
                f'the server could not find the requested resource ({api_version} "{kind}")'
            )
        return info

    def _check_target(self, config: Obj) -> tuple[Key, ResourceInfo]:
        info = self._info(str(config.get("apiVersion", "")), str(config.get("kind", "")))
        meta = config.get("metadata")
        if not isinstance(meta, dict) or not meta.get("name"):
            raise Invalid(f"{info.kind}: metadata.name: Required value: name is required")
        name, namespace = str(meta["name"]), str(meta.get("namespace") or "")
        if info.namespaced:
            if not namespace:
                raise Invalid(f'{info.kind} "{name}": metadata.namespace: Required value')
            self._check_namespace(namespace)
        else:
            meta.pop("namespace", None)
            namespace = ""
        message = self._rejections.get((info.kind, namespace, name)) or invalid_reason(config)
        if message is not None:
            raise Invalid(f'{info.kind} "{name}" is invalid: {message}')
        return (group_of(info.api_version), info.kind, namespace, name), info

    def _check_namespace(self, namespace: str) -> None:
        stored = self._objects.get(("", "Namespace", "", namespace))
        if stored is None:
            raise NotFound(f'namespaces "{namespace}" not found')
        if "deletionTimestamp" in stored.obj["metadata"]:
            raise Invalid(f'namespace "{namespace}" is being terminated')

    @staticmethod
    def _check_precondition(config: Obj, current: _Stored | None) -> None:
        wanted = config["metadata"].pop("resourceVersion", None)
        if wanted is None or current is None:
            return
        if str(wanted) != current.obj["metadata"]["resourceVersion"]:
            raise Conflict(
                "the object has been modified; please apply your changes to the latest version"
            )

    def _new(self, config: Obj, info: ResourceInfo) -> _Stored:
        self._counter += 1
        meta: Obj = {"name": config["metadata"]["name"]}
        if info.namespaced:
            meta["namespace"] = config["metadata"]["namespace"]
        meta.update(uid=f"uid-{self._counter:06d}", creationTimestamp=self.now, generation=1)
        obj: Obj = {"apiVersion": info.api_version, "kind": info.kind, "metadata": meta}
        if info.kind == "Namespace":
            obj["status"] = {"phase": "Active"}
        return _Stored(obj)

    def _merge_apply(self, stored: _Stored, config: Obj, manager: str, force: bool) -> None:
        wanted = dict(leaves(config))
        conflicts: dict[str, list[Path]] = {}
        for other, paths in stored.owners.items():
            if other == manager:
                continue
            for path in sorted(paths & wanted.keys()):
                if get_path(stored.obj, path) != (True, wanted[path]):
                    conflicts.setdefault(other, []).append(path)
        if conflicts and not force:
            raise conflict_error(conflicts, str(stored.obj["apiVersion"]))
        for other, lost in conflicts.items():
            stored.owners[other] -= set(lost)
        shared = set().union(*(p for m, p in stored.owners.items() if m != manager))
        for path in stored.owners.get(manager, set()) - wanted.keys() - shared:
            delete_path(stored.obj, path)
        for path, value in wanted.items():
            set_path(stored.obj, path, value)
        stored.owners[manager] = set(wanted)
        stored.operations[manager] = "Apply"
        stored.owners = {m: p for m, p in stored.owners.items() if p}
        apply_defaults(stored.obj, len(self._objects))

    def _take_changed(self, stored: _Stored, before: Obj, manager: str) -> None:
        old, new = dict(leaves(before)), dict(leaves(stored.obj))
        changed = {p for p, v in new.items() if old.get(p, _MISSING) != v}
        gone = old.keys() - new.keys()
        for other in list(stored.owners):
            stored.owners[other] -= changed | gone
        if changed:
            stored.owners.setdefault(manager, set()).update(changed)
            stored.operations[manager] = stored.operations.get(manager, "Update")
        stored.owners = {m: p for m, p in stored.owners.items() if p}

    def _bump(self, before: Obj, after: Obj) -> None:
        if without_versions(before) == without_versions(after):
            after["metadata"]["resourceVersion"] = before["metadata"]["resourceVersion"]
            return
        self._next_version(after)
        if spec_part(before) != spec_part(after):
            after["metadata"]["generation"] = int(before["metadata"]["generation"]) + 1

    def _next_version(self, obj: Obj) -> None:
        self._counter += 1
        obj["metadata"]["resourceVersion"] = str(self._counter)

    def _store(self, key: Key, stored: _Stored) -> None:
        self.writes += 1
        if "resourceVersion" not in stored.obj["metadata"]:
            self._next_version(stored.obj)
        meta = stored.obj["metadata"]
        if "deletionTimestamp" in meta and not meta.get("finalizers"):
            self._remove(key)
            return
        self._objects[key] = stored
        if stored.obj["kind"] == "CustomResourceDefinition":
            self._poll_crd(stored, count=False)

    def _remove(self, key: Key) -> None:
        stored = self._objects.pop(key)
        if key[1] == "Namespace":
            for other in [k for k in self._objects if k[2] == key[3]]:
                del self._objects[other]
        if key[1] == "CustomResourceDefinition":
            for info in crd_kinds(stored.obj):
                self._kinds.pop((info.api_version, info.kind), None)

    def _poll_crd(self, stored: _Stored, count: bool = True) -> None:
        stored.polls += 1 if count else 0
        status = stored.obj.setdefault("status", {})
        if stored.polls < self.crd_establish_polls or status.get("conditions"):
            return
        status["conditions"] = [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"},
        ]
        for info in crd_kinds(stored.obj):
            self._kinds[(info.api_version, info.kind)] = info

    def _render(self, stored: _Stored) -> Obj:
        obj = copy.deepcopy(stored.obj)
        entries = managed_fields(stored.owners, stored.operations, str(obj["apiVersion"]))
        if entries:  # the API server omits an empty list
            obj["metadata"]["managedFields"] = entries
        return obj


_MISSING = object()

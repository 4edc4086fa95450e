"""What a real API server does to objects, as the in-memory cluster reproduces it: defaulting,
the validation the agent depends on, and the server's conflict message.

- defaults: a Service gets a cluster IP; a Namespace gets the label
  `kubernetes.io/metadata.name` and `spec.finalizers: [kubernetes]` (both seen on kube-apiserver
  v1.36 in `tests/kube/`); these fields are owned by no field manager;
- validation: an `apiextensions.k8s.io/v1` CustomResourceDefinition needs
  `schema.openAPIV3Schema` in every version (the real server refuses it otherwise);
- the conflict message names each manager like the real one (`conflict with "m" using v1:`);
- `metadata.managedFields` entries in the real `fieldsV1` encoding.
Used by `gitfleet.agent.memory` only.
"""

from __future__ import annotations

from collections.abc import Mapping

from gitfleet.agent.client import Conflict, Obj
from gitfleet.agent.fields import Path
from gitfleet.agent.managed import fields_v1


def apply_defaults(obj: Obj, next_ip: int) -> None:
    """Fill in the server-set defaults the agent can observe (in place)."""
    if obj["kind"] == "Namespace":
        meta = obj["metadata"]
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        return
    if obj["kind"] != "Service" or obj.get("spec", {}).get("type") == "ExternalName":
        return
    spec = obj.setdefault("spec", {})
    if not spec.get("clusterIPs"):
        ip = spec.get("clusterIP") or f"10.96.0.{next_ip % 250 + 1}"
        spec["clusterIP"], spec["clusterIPs"] = ip, [ip]


def invalid_reason(config: Obj) -> str | None:
    """Why the real server would refuse `config` (only the rules the agent meets), else None."""
    if config.get("kind") != "CustomResourceDefinition":
        return None
    for i, version in enumerate((config.get("spec") or {}).get("versions") or []):
        schema = version.get("schema") if isinstance(version, Mapping) else None
        if not isinstance(schema, Mapping) or not schema.get("openAPIV3Schema"):
            return (
                f"spec.versions[{i}].schema.openAPIV3Schema: Required value: schemas are required"
            )
    return None


def conflict_error(conflicts: Mapping[str, list[Path]], api_version: str) -> Conflict:
    """The 409 of a server-side apply that would change fields other managers own."""
    count = sum(len(p) for p in conflicts.values())
    parts = [
        f'conflict with "{manager}" using {api_version}: '
        + ", ".join("." + ".".join(p) for p in paths)
        for manager, paths in sorted(conflicts.items())
    ]
    noun = "conflict" if count == 1 else "conflicts"
    return Conflict(
        f"Apply failed with {count} {noun}: " + "; ".join(parts), tuple(sorted(conflicts))
    )


def managed_fields(
    owners: Mapping[str, set[Path]], operations: Mapping[str, str], api_version: str
) -> list[Obj]:
    """`metadata.managedFields` for per-manager leaf paths, sorted by manager."""
    return [
        {
            "manager": manager,
            "operation": operations.get(manager, "Update"),
            "apiVersion": api_version,
            "fieldsType": "FieldsV1",
            "fieldsV1": fields_v1(sorted(owners[manager])),
        }
        for manager in sorted(owners)
        if owners[manager]
    ]

"""Subset content on a pod template: node affinity, tolerations and the strategic-merge patch
(spec/replica-distribution.md §1.8, §6.3).

`patch_problems` lists what makes a subset patch invalid (unsupported directives, list elements
without their merge key); `merge_patch` applies a valid patch to a PodTemplateSpec following the
Kubernetes `core/v1` patch tags; `add_node_affinity` and `add_tolerations` are UnitedDeployment's
`attachNodeAffinity` / `attachTolerations`. Pure functions on plain data, inputs never mutated.
Called by `reconciler.distribute.workload`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

_POD_LISTS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "imagePullSecrets": "name",
    "schedulingGates": "name",
    "resourceClaims": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
}
_CONTAINER_LISTS = {
    "ports": "containerPort",
    "env": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
}
_CONTAINER_KINDS = frozenset({"containers", "initContainers", "ephemeralContainers"})
PATCH = "$patch"


def _merge_key(path: tuple[str, ...]) -> str | None:
    """Merge key of the list at `path` (relative to the pod template), None: replaced."""
    if len(path) == 2 and path[0] == "spec":
        return _POD_LISTS.get(path[1])
    if len(path) == 3 and path[0] == "spec" and path[1] in _CONTAINER_KINDS:
        return _CONTAINER_LISTS.get(path[2])
    return None


def _element_path(path: tuple[str, ...]) -> tuple[str, ...]:
    """Path of the elements of the list at `path` (a container's fields sit under its list)."""
    return path


def _walk_problems(value: Any, path: tuple[str, ...]) -> Iterator[str]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            key = str(key)
            if key.startswith("$") and key != PATCH:
                yield f"patch directive {key} is not supported"
            elif key == PATCH and item not in ("replace", "delete", "merge"):
                yield f"patch directive {PATCH}: {item} is not supported"
            else:
                yield from _walk_problems(item, (*path, key))
    elif isinstance(value, list):
        merge_key = _merge_key(path)
        for element in value:
            if merge_key is None or not isinstance(element, Mapping):
                continue
            if element == {PATCH: "replace"}:
                continue
            if merge_key not in element:
                yield f"patch element without merge key {merge_key} in {'.'.join(path)}"
            yield from _walk_problems(element, _element_path(path))


def patch_problems(patch: Mapping[str, Any]) -> list[str]:
    """Why a subset patch cannot be applied ([] when it can)."""
    extra = sorted(str(k) for k in patch if k not in ("metadata", "spec"))
    if extra:
        return ["patch must be a mapping with keys metadata and/or spec"]
    return list(dict.fromkeys(_walk_problems(patch, ())))


def _merge_map(target: Mapping[str, Any], patch: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    directive = patch.get(PATCH)
    if directive == "delete":
        return None
    body = {k: v for k, v in patch.items() if k != PATCH}
    if directive == "replace":
        return _strip(body)
    out = dict(target)
    for key, value in body.items():
        if value is None:
            out.pop(key, None)
            continue
        merged = _merge(out.get(key), value, (*path, key))
        if merged is None:
            out.pop(key, None)
        else:
            out[key] = merged
    return out


def _merge_list(target: Any, patch: list[Any], path: tuple[str, ...]) -> list[Any]:
    key = _merge_key(path)
    if key is None or not isinstance(target, list):
        return [_strip(v) for v in patch if not _is_replace(v)]
    if any(_is_replace(v) for v in patch):
        return [_strip(v) for v in patch if not _is_replace(v)]
    out = list(target)
    for element in patch:
        index = next(
            (i for i, t in enumerate(out) if isinstance(t, Mapping) and t.get(key) == element[key]),
            None,
        )
        if element.get(PATCH) == "delete":
            if index is not None:
                del out[index]
        elif index is None:
            out.append(_strip(element))
        else:
            out[index] = _merge_map(out[index], element, path)
    return out


def _merge(target: Any, patch: Any, path: tuple[str, ...]) -> Any:
    if isinstance(patch, Mapping):
        return _merge_map(target if isinstance(target, Mapping) else {}, patch, path)
    if isinstance(patch, list):
        if path == ("metadata", "finalizers") and isinstance(target, list):
            return list(dict.fromkeys([*target, *patch]))
        return _merge_list(target, patch, path)
    return patch


def _is_replace(value: Any) -> bool:
    return isinstance(value, Mapping) and dict(value) == {PATCH: "replace"}


def _strip(value: Any) -> Any:
    """A patch value without directives or null-valued keys (what a new element becomes)."""
    if isinstance(value, Mapping):
        return {k: _strip(v) for k, v in value.items() if k != PATCH and v is not None}
    if isinstance(value, list):
        return [_strip(v) for v in value if not _is_replace(v)]
    return value


def merge_patch(template: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """`template` (a PodTemplateSpec) with the subset patch merged in (§6.3)."""
    merged = _merge_map(copy.deepcopy(dict(template)), patch, ())
    return dict(merged or {})


def add_node_affinity(
    template: Mapping[str, Any], expressions: list[dict[str, Any]]
) -> dict[str, Any]:
    """Append `expressions` to every required node-selector term (one term made when none)."""
    out = copy.deepcopy(dict(template))
    spec = out.setdefault("spec", {})
    affinity = spec.setdefault("affinity", {}) or {}
    spec["affinity"] = affinity
    node = affinity.setdefault("nodeAffinity", {}) or {}
    affinity["nodeAffinity"] = node
    required = node.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {}) or {}
    node["requiredDuringSchedulingIgnoredDuringExecution"] = required
    terms = required.get("nodeSelectorTerms") or [{}]
    required["nodeSelectorTerms"] = [
        {**t, "matchExpressions": [*(t.get("matchExpressions") or []), *expressions]} for t in terms
    ]
    return out


def add_tolerations(
    template: Mapping[str, Any], tolerations: list[dict[str, Any]]
) -> dict[str, Any]:
    """Append the subset's tolerations after the pod's own."""
    out = copy.deepcopy(dict(template))
    spec = out.setdefault("spec", {})
    spec["tolerations"] = [*(spec.get("tolerations") or []), *copy.deepcopy(tolerations)]
    return out

"""Leaf paths of JSON-like objects: flatten, read, write and delete by path, merge patches.

A path is a tuple of mapping keys (lists are atomic leaves: this is the simplification of
server-side apply field ownership that `gitfleet.agent.memory` documents). Used by the in-memory
cluster for field ownership, and by the apply pipeline for its "already applied" check.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

Path = tuple[str, ...]

SERVER_FIELDS: frozenset[Path] = frozenset(
    {
        ("apiVersion",),
        ("kind",),
        ("metadata", "name"),
        ("metadata", "namespace"),
        ("metadata", "uid"),
        ("metadata", "resourceVersion"),
        ("metadata", "generation"),
        ("metadata", "creationTimestamp"),
        ("metadata", "deletionTimestamp"),
        ("metadata", "managedFields"),
        ("metadata", "selfLink"),
    }
)
"""Paths set by the server: never owned by a field manager."""


def leaves(obj: Mapping[str, Any], prefix: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every leaf (scalar, list, or empty mapping) with its path; `status` is skipped at the top."""
    for key in sorted(obj):
        path = (*prefix, str(key))
        if not prefix and key == "status":
            continue
        value = obj[key]
        if isinstance(value, Mapping) and value:
            yield from leaves(value, path)
        elif path not in SERVER_FIELDS:
            yield path, value


def get_path(obj: Mapping[str, Any], path: Path) -> tuple[bool, Any]:
    """(found, value) at `path`."""
    node: Any = obj
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return False, None
        node = node[key]
    return True, node


def set_path(obj: dict[str, Any], path: Path, value: Any) -> None:
    """Set `path` to a deep copy of `value`, creating (or replacing non-mapping) parents."""
    node = obj
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[path[-1]] = copy.deepcopy(value)


def delete_path(obj: dict[str, Any], path: Path) -> None:
    """Remove `path` and then every parent mapping the removal left empty."""
    chain: list[dict[str, Any]] = [obj]
    for key in path[:-1]:
        child = chain[-1].get(key)
        if not isinstance(child, dict):
            return
        chain.append(child)
    chain[-1].pop(path[-1], None)
    for depth in range(len(chain) - 1, 0, -1):
        if chain[depth]:
            break
        chain[depth - 1].pop(path[depth - 1], None)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch of `target` by `patch` (returns a new value)."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    out = dict(copy.deepcopy(target)) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def contains(live: Any, wanted: Any) -> bool:
    """Whether `live` has every field of `wanted` with the same value (lists index by index)."""
    if isinstance(wanted, Mapping):
        if not isinstance(live, Mapping):
            return False
        return all(k in live and contains(live[k], v) for k, v in wanted.items())
    if isinstance(wanted, list):
        if not isinstance(live, list) or len(live) != len(wanted):
            return False
        return all(contains(a, b) for a, b in zip(live, wanted, strict=True))
    return (bool(live == wanted) and type(live) is type(wanted)) or _same_number(live, wanted)


def _same_number(left: Any, right: Any) -> bool:
    numbers = (int, float)
    if isinstance(left, bool) or isinstance(right, bool):
        return False
    return isinstance(left, numbers) and isinstance(right, numbers) and left == right


def without_versions(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of an object without metadata.resourceVersion and metadata.generation."""
    out = copy.deepcopy(dict(obj))
    out["metadata"].pop("resourceVersion", None)
    out["metadata"].pop("generation", None)
    return out


def spec_part(obj: Mapping[str, Any]) -> dict[str, Any]:
    """Everything but metadata and status (a change here bumps the generation)."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}

"""Which fields of a live object some field manager set, from its `metadata.managedFields`.

The API server records, per field manager, the fields it set (`fieldsV1`: `f:<key>` for mapping
keys, `k:{...}` / `v:...` / `i:<n>` for list items). Fields the server filled in itself (defaults
such as a Namespace's `spec.finalizers` or a Deployment's `strategy`) are owned by nobody. Full
comparison uses this to tell a field someone added on the member (a drift) from a server default
(not one: the hub manifest, read from Git, was never defaulted by a server). Used by
`gitfleet.agent.drift`; the in-memory cluster renders the same encoding.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

Fields = dict[str, Any]
"""A (merged) fieldsV1 tree."""
ALL: Fields = {"(all)": {}}
"""Marker: everything below is owned (an atomic value someone set as a whole)."""


NOTHING: Fields = {"(nothing)": {}}
"""A root under which nobody set anything."""


def ownership(live: Mapping[str, Any]) -> Fields:
    """The union of every manager's fieldsV1 tree of `live` (the server omits
    `managedFields` when nobody owns anything: then nothing is owned)."""
    meta = live.get("metadata") or {}
    merged: Fields = dict(NOTHING)
    for entry in meta.get("managedFields") or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("fieldsV1"), Mapping):
            _merge(merged, entry["fieldsV1"])
    return merged


def _merge(into: Fields, tree: Mapping[str, Any]) -> None:
    for key, sub in tree.items():
        child = into.setdefault(str(key), {})
        if isinstance(sub, Mapping):
            _merge(child, sub)


def child(node: Fields | None, key: str) -> Fields | None:
    """The ownership node of mapping key `key` below `node` (None: nobody set it)."""
    if node is None:
        return None
    if node is ALL or not node:  # an owned leaf or atomic value: everything below is owned
        return ALL
    found = node.get(f"f:{key}")
    return found if isinstance(found, dict) else None


def item(node: Fields | None, index: int, value: Any) -> Fields | None:
    """The ownership node of list item `index` (whose live value is `value`) below `node`."""
    if node is None:
        return None
    if node is ALL or not node:
        return ALL
    for key, sub in node.items():
        if key == f"i:{index}" or (key.startswith("v:") and _json(key[2:]) == value):
            return sub if isinstance(sub, dict) else ALL
        if key.startswith("k:") and _matches(_json(key[2:]), value):
            return sub if isinstance(sub, dict) else ALL
    return None


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _matches(keys: Any, value: Any) -> bool:
    if not isinstance(keys, Mapping) or not isinstance(value, Mapping):
        return False
    return all(value.get(k) == v for k, v in keys.items())


def fields_v1(paths: Iterable[tuple[str, ...]]) -> Fields:
    """The fieldsV1 tree of leaf paths of mapping keys (lists are atomic leaves)."""
    tree: Fields = {}
    for path in paths:
        node = tree
        for key in path:
            node = node.setdefault(f"f:{key}", {})
    return tree

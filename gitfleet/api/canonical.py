"""The one canonical JSON form of plain data, and the content hash computed from it.

Sorted keys, compact separators, UTF-8 kept, no NaN/infinity. The reconciler hashes resource
selections and rendered objects with it (the hash recorded in `clusters/<c>/index.yaml`), and the
member agent recomputes the same hash to check each object file, so both import it from here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

MAX_REMEMBERED = 100_000
_PLACEMENT_HASHES: dict[tuple[tuple[str, str], ...], str] = {}
"""`placement_content_hash` by its sorted (file, hash) pairs: the hub asks for the same
placement content on many clusters and in every pass (cleared whole at MAX_REMEMBERED)."""


def canonical_json(value: Any) -> str:
    """Raises ValueError / TypeError for data JSON cannot represent (NaN, non-JSON types)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def content_hash(obj: Any) -> str:
    """`sha256:<hex>` of the canonical JSON of `obj`."""
    return "sha256:" + hashlib.sha256(canonical_json(obj).encode()).hexdigest()


def placement_content_hash(objects: Iterable[Mapping[str, Any]]) -> str:
    """The content hash of one placement on one cluster: `sha256:<hex>` over the sorted
    (file, object hash) pairs of its index entry. The hub records it per binding and in the
    index entry; the agent reports it for what it applied, so a report counts only for the exact
    content the hub gave that cluster (an override change at the same snapshot index differs)."""
    return pairs_content_hash(
        tuple(sorted((str(o.get("file", "")), str(o.get("hash", ""))) for o in objects))
    )


def pairs_content_hash(pairs: tuple[tuple[str, str], ...]) -> str:
    """`placement_content_hash` of objects given as their sorted (file, object hash) pairs
    (callers that hold files and hashes, not index entries, skip building the entries)."""
    known = _PLACEMENT_HASHES.get(pairs)
    if known is None:
        if len(_PLACEMENT_HASHES) >= MAX_REMEMBERED:
            _PLACEMENT_HASHES.clear()
        known = _PLACEMENT_HASHES[pairs] = content_hash(pairs)
    return known

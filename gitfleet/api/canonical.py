"""The one canonical JSON form of plain data, and the content hash computed from it.

Sorted keys, compact separators, UTF-8 kept, no NaN/infinity. The reconciler hashes resource
selections and rendered objects with it (the hash recorded in `clusters/<c>/index.yaml`), and the
member agent recomputes the same hash to check each object file, so both import it from here.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Raises ValueError / TypeError for data JSON cannot represent (NaN, non-JSON types)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def content_hash(obj: Any) -> str:
    """`sha256:<hex>` of the canonical JSON of `obj`."""
    return "sha256:" + hashlib.sha256(canonical_json(obj).encode()).hexdigest()

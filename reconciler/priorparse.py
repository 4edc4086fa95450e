"""Parsing the previous output tree, once per distinct file content.

The pass reads back its own earlier files (state, cluster indexes, status conditions). A
long-running hub sees mostly the same bytes every pass, so parsed documents are cached by
content in a least-recently-used cache bounded by the source bytes it holds (parsed objects take
several times that). The returned documents are shared: callers only read them.
Called by `state`, `assemble` and `statusdocs`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import yaml

BUDGET_BYTES = 16 * 1024 * 1024
"""Source bytes of the cached documents; the oldest are dropped beyond it."""
MAX_CACHED_BYTES = 256 * 1024
"""Larger documents (status of a placement on thousands of clusters) are not cached."""

_cache: OrderedDict[bytes, Any] = OrderedDict()
_held = 0


def parse_own(data: bytes) -> Any:
    """A document gitfleet wrote earlier (read-only!). Raises yaml.YAMLError when unreadable."""
    global _held
    if len(data) > MAX_CACHED_BYTES:
        return yaml.load(data, Loader=yaml.CSafeLoader)
    if data in _cache:
        _cache.move_to_end(data)
        return _cache[data]
    doc = yaml.load(data, Loader=yaml.CSafeLoader)
    _cache[data] = doc
    _held += len(data)
    while _held > BUDGET_BYTES:
        old, _ = _cache.popitem(last=False)
        _held -= len(old)
    return doc

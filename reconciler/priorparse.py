"""Parsing the previous output tree, once per distinct file content.

The pass reads back its own earlier files (state, cluster indexes, status conditions). A
long-running hub sees mostly the same bytes every pass, so parsed documents are cached by
content in a least-recently-used cache bounded by the source bytes it holds (parsed objects take
several times that). The returned documents are shared: callers only read them. The output
branch is data like any other (anyone who can push can write it), so it is read with the same
bounded reader as user input (`gitfleet.load.yamlbuild`: safe types only, aliases and depth
bounded), never with a plain YAML loader.
Called by `state`, `assemble` and `statusdocs`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import yaml

from gitfleet.api import DEFAULT_LIMITS
from gitfleet.load.yamlbuild import build_documents

BUDGET_BYTES = 16 * 1024 * 1024
"""Source bytes of the cached documents; the oldest are dropped beyond it."""
MAX_CACHED_BYTES = 256 * 1024
"""Larger documents (status of a placement on thousands of clusters) are not cached."""

_cache: OrderedDict[bytes, Any] = OrderedDict()
_held = 0


_lock = threading.Lock()
"""Hubs may run passes in threads (tests race two in one process): the cache and its byte
count change together under this lock, or the count drifts from what is held."""


def parse_own(data: bytes) -> Any:
    """A document gitfleet wrote earlier (read-only!). Raises yaml.YAMLError when unreadable."""
    global _held
    if len(data) > MAX_CACHED_BYTES:
        return load_bounded(data)
    with _lock:
        if data in _cache:
            _cache.move_to_end(data)
            return _cache[data]
    doc = load_bounded(data)
    with _lock:
        if data not in _cache:
            _cache[data] = doc
            _held += len(data)
        while _held > BUDGET_BYTES and _cache:
            old, _ = _cache.popitem(last=False)
            _held -= len(old)
    return doc


def load_bounded(data: bytes) -> Any:
    """One document of the output tree, freshly built (callers may change it), through the
    bounded reader. Raises yaml.YAMLError when unreadable."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise yaml.YAMLError(f"not valid UTF-8 text (offset {exc.start})") from None
    docs, faults = build_documents(text, DEFAULT_LIMITS)
    if faults:
        fault = faults[0]
        raise yaml.YAMLError(f"line {fault.line}: {fault.field or '(document)'}: {fault.message}")
    if len(docs) > 1:
        raise yaml.YAMLError("more than one document")
    return docs[0].body if docs else None

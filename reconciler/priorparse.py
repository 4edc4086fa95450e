"""Reading the previous output tree: each file parsed once per distinct content, for the hub's life.

The pass reads back its own earlier files (state, cluster indexes, status conditions). What each
reader needs from a file (`derive_own(output, path, tag, derive)`: a PlacementState, a cluster's
index entries, a placement's prior conditions) is cached by (reader tag, git blob id), so a
long-running hub parses a file again only when its content changed: an unchanged file is not
even read when the prior tree can name its blob id (`OidFiles`, the hub's lazy Git view);
otherwise the id is computed from the bytes. The pass also `remember`s what it derives from the
documents it writes, so a long-running hub does not even parse the files it wrote itself
(`remember_at` skips a file whose bytes are the very object it remembered there last pass), and
a reader of the new tree gets a remembered file's blob id without hashing its bytes again.
Values are shared between passes: callers only read them. Repeated parts of values (index object entries, condition lists) are interned
(`shared`), so a thousand clusters holding the same objects cost one copy.
`parse_own` gives a whole parsed document (cached by content, byte-bounded) to readers that
need more. The output branch is data like any other (anyone who can push can write
it), so every file is read with the same bounded reader as user input (`load_bounded`:
`gitfleet.load.yamlbuild`, safe types only, aliases and depth bounded), or, for text in the
emitter's own shape, by `gitfleet.load.blockread`, which gives the same value ~4x faster.
Called by `state`, `assemble`, `statusdocs`, `distributions` and `rollout.cgu`.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping
from contextlib import suppress
from typing import Any, Protocol, TypeVar, runtime_checkable

import yaml

from gitfleet.api import DEFAULT_LIMITS
from gitfleet.load.blockread import UNREAD, read_block
from gitfleet.load.yamlbuild import build_documents
from reconciler.stagememo import StageMemo

T = TypeVar("T")

MAX_DERIVED = 200_000
"""Derived values kept (one per file and reader): more than the files of a 50k-cluster tree."""
MAX_INTERNED = 2_000_000

BUDGET_BYTES = 16 * 1024 * 1024
"""Source bytes of the documents `parse_own` caches; the oldest are dropped beyond it."""
MAX_CACHED_BYTES = 256 * 1024
"""Larger documents are not cached by `parse_own`."""


@runtime_checkable
class OidFiles(Protocol):
    """A prior tree that knows each file's git blob id without reading it."""

    def oid(self, path: str) -> str: ...


_cache: OrderedDict[bytes, Any] = OrderedDict()
_held = 0
_derived: OrderedDict[tuple[str, str], Any] = OrderedDict()
_interned: dict[Hashable, Any] = {}
_MISSING = object()


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


MAX_ID_BYTES = 16 * 1024 * 1024
"""Bytes of the remembered files whose blob ids `_ids` keeps (the oldest dropped beyond it)."""
_ids: OrderedDict[int, tuple[bytes, str]] = OrderedDict()
"""id(bytes) -> (those bytes, held so the id stays theirs; their blob id), for the files
`remember` saw: a stage reading a file the pass just wrote (`derive_own` on the new tree)
does not hash it again."""
_ids_held = 0


def _known_id(data: bytes) -> str:
    """`_blob_id(data)`, kept for this bytes object (`_ids`)."""
    global _ids_held
    found = _ids.get(id(data))
    if found is not None and found[0] is data:
        return found[1]
    oid = _blob_id(data)
    with _lock:
        if _ids.get(id(data)) is None:
            _ids[id(data)] = (data, oid)
            _ids_held += len(data)
        while _ids_held > MAX_ID_BYTES and _ids:
            _ids_held -= len(_ids.popitem(last=False)[1][0])
    return oid


def _id_of(data: bytes) -> str:
    """The blob id of `data`: the kept one when `remember` saw this very object."""
    found = _ids.get(id(data))
    return found[1] if found is not None and found[0] is data else _blob_id(data)


def blob_key(output: Mapping[str, bytes], path: str) -> str:
    """The git blob id of `output[path]` (KeyError when absent), read only when needed."""
    oid = getattr(output, "oid", None)  # an OidFiles (a runtime Protocol check costs more)
    if oid is not None:
        return str(oid(path))
    return _id_of(output[path])


def blob_keys(output: Mapping[str, bytes], paths: Iterable[str]) -> tuple[str, ...] | None:
    """The git blob ids of `output`'s files at `paths`, or None when one is absent: what a
    reader of many small files (shards) compares to skip reading them one by one."""
    try:
        return tuple(blob_key(output, path) for path in paths)
    except KeyError:
        return None


def paths_under(output: Mapping[str, bytes], prefix: str) -> list[str]:
    """The sorted paths of `output` that start with `prefix`: a run of the sorted listing a
    lazy output tree keeps (`TreeFiles.sorted_paths(prefix)`: at least the paths under
    `prefix`), else one scan of the mapping."""
    listing = getattr(output, "sorted_paths", None)
    if listing is None:
        return sorted(p for p in output if p.startswith(prefix))
    paths: list[str] = listing(prefix)
    start = bisect_left(paths, prefix)
    end = bisect_left(paths, prefix + _TOP, start)  # no copy of the listing's rest
    out = paths[start:end]
    while end < len(paths) and paths[end].startswith(prefix):  # a path going on with _TOP
        out.append(paths[end])
        end += 1
    return out


_TOP = chr(sys.maxunicode)
"""The last code point: `prefix + _TOP` sorts after every path under `prefix` but those that
go on with it."""


def derive_own(output: Mapping[str, bytes], path: str, tag: str, derive: Callable[[Any], T]) -> T:
    """`derive(parsed document)` of a file gitfleet wrote earlier, cached by (tag, blob id).
    Raises KeyError when the file is absent, yaml.YAMLError or derive's exceptions (nothing is
    cached then). The result is shared: read it, never change it."""
    key = (tag, blob_key(output, path))
    found = _derived.get(key, _MISSING)
    if found is not _MISSING:
        with suppress(KeyError):  # another hub thread may have dropped it meanwhile
            _derived.move_to_end(key)
        return found  # type: ignore[no-any-return]
    value = derive(load_bounded(output[path]))
    _keep(key, value)
    return value


def remember(data: bytes, tag: str, value: Any) -> Any:
    """Record `value` as what `derive_own(..., tag, ...)` makes of `data`, a file this pass
    writes from the very document `value` was derived from: the next pass does not parse it.
    When the same bytes are already known, the value recorded first stays (it is equal) and is
    returned: unchanged files keep giving the very same object, pass after pass, so later
    stages can compare by identity."""
    key = (tag, _known_id(data))
    found = _derived.get(key, _MISSING)
    if found is not _MISSING:
        with suppress(KeyError):  # another hub thread may have dropped it meanwhile
            _derived.move_to_end(key)
        return found
    _keep(key, value)
    return value


_PLACED: StageMemo[bytes] = StageMemo()
"""(tag, path) -> the bytes object last remembered for that file (held: its id stays its own)."""


def remember_at(path: str, data: bytes, tag: str, value: Any) -> None:
    """`remember` for the file at `path`, skipped when `data` is the very bytes object last
    remembered there (a stage that reuses last pass's bytes for an unchanged file does not hash
    them again; the entry stays known, or is parsed again if it was dropped meanwhile)."""
    last = _PLACED.last((tag, path))
    if last is not None and last[1] is data:
        return
    remember(data, tag, value)
    _PLACED.put((tag, path), (), data)


def _keep(key: tuple[str, str], value: Any) -> None:
    _derived[key] = value
    with suppress(KeyError):
        _derived.move_to_end(key)
        if len(_derived) > MAX_DERIVED:
            _derived.popitem(last=False)


def shared(key: Hashable, make: Callable[[], T]) -> T:
    """One shared instance per `key`: `make()` the first time, the same object afterwards."""
    found = _interned.get(key, _MISSING)
    if found is not _MISSING:
        return found  # type: ignore[no-any-return]
    if len(_interned) >= MAX_INTERNED:
        _interned.clear()
    value = _interned[key] = make()
    return value


def freeze(value: Any) -> Hashable:
    """A hashable stand-in for a parsed YAML value (for `shared`)."""
    if isinstance(value, dict):
        return tuple((k, freeze(v)) for k, v in value.items())
    if isinstance(value, list):
        return ("\0list", *(freeze(v) for v in value))
    if isinstance(value, str) or value is None:
        return value
    return (type(value).__name__, value)  # True == 1 == 1.0: keep the types apart


_lock = threading.Lock()
"""Hubs may run passes in threads (tests race two in one process): the cache and its byte
count change together under this lock, or the count drifts from what is held."""


def parse_own(data: bytes) -> Any:
    """A whole document gitfleet wrote earlier (read-only!), for readers that need more than a
    derived value; cached by content within `BUDGET_BYTES`. Raises yaml.YAMLError."""
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
    value = read_block(text, DEFAULT_LIMITS)  # the emitter's shape, ~4x faster, or UNREAD
    if value is not UNREAD:
        return value
    docs, faults = build_documents(text, DEFAULT_LIMITS)
    if faults:
        fault = faults[0]
        raise yaml.YAMLError(f"line {fault.line}: {fault.field or '(document)'}: {fault.message}")
    if len(docs) > 1:
        raise yaml.YAMLError("more than one document")
    return docs[0].body if docs else None

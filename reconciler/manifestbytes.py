"""Manifests, their bytes and their content hashes: one serialised object as the agent applies it.

`manifest_of` serialises an object once per content (canonical YAML is a function of the
canonical JSON its content hash is taken of: bytes are kept by content hash across passes), and
`source_manifest` once per source object while the loader hands back the same object. Split out
of `reconciler.manifests` (which re-exports these names); called by it, the history of older
snapshots and replica distribution.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from gitfleet.api.canonical import content_hash, pairs_content_hash
from gitfleet.load.identitycache import IdentityCache
from gitfleet.load.yamlio import dump_yaml
from reconciler.once import OnceProperty
from reconciler.output import object_file_name, object_identity

MEMO_BYTES = 256 * 1024 * 1024
"""Serialised bytes kept by content hash across passes (least recently used dropped first)."""
MAX_SOURCES = 200_000
"""Source objects whose manifest is remembered (`source_manifest`)."""

_by_hash: OrderedDict[str, bytes] = OrderedDict()
_held = 0
_by_source: IdentityCache[Manifest] = IdentityCache(MAX_SOURCES)


@dataclass(frozen=True)
class Manifest:
    """One object the agent applies: its file name, bytes, identity and content hash."""

    file: str
    data: bytes
    identity: Mapping[str, str]
    hash: str

    @OnceProperty
    def entry(self) -> dict[str, str]:
        """This object's entry in a cluster's index.yaml."""
        return {**self.identity, "file": self.file, "hash": self.hash}


def manifest_of(obj: Mapping[str, Any]) -> Manifest:
    """`obj` serialised; the bytes of a content seen before (this pass or an earlier one) are
    reused: canonical YAML is a function of the canonical JSON the content hash is taken of."""
    global _held
    digest = content_hash(obj)
    data = _by_hash.get(digest)
    if data is None:
        data = _by_hash[digest] = dump_yaml(obj).encode()
        _held += len(data)
        with suppress(KeyError):  # KeyError: another hub thread emptied it meanwhile
            while _held > MEMO_BYTES:
                _held -= len(_by_hash.popitem(last=False)[1])
    else:
        with suppress(KeyError):
            _by_hash.move_to_end(digest)
    return Manifest(object_file_name(obj), data, object_identity(obj), digest)


def source_manifest(obj: Mapping[str, Any]) -> Manifest:
    """`manifest_of` a source object, remembered per object: the loader hands back the same
    object while its file is unchanged, so an unchanged resource is neither hashed nor
    serialised again. Each entry keeps its object alive (its id cannot be reused meanwhile)."""
    return _by_source.made(obj, manifest_of)


def manifests_content_hash(manifests: tuple[Manifest, ...]) -> str:
    """`placement_content_hash(m.entry for m in manifests)`, without building the entries (the
    pairs made in C: a fleet-wide edit hashes ~1,000 new tuples)."""
    return pairs_content_hash(tuple(sorted(map(_FILE_HASH, manifests))))


_FILE_HASH = attrgetter("file", "hash")
"""A manifest's (file, content hash) pair, made in C."""

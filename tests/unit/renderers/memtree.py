"""An in-memory fleet repository with git blob ids, for the hub loader's tests.

`MemTree` implements the `Tree` and `BlobIds` protocols and `listing()` as `GitTree` does, so
`renderers.hubload.FleetLoader` takes it for a Git commit without running git.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from gitfleet.api.errors import FleetError


def blob_id(data: bytes) -> str:
    """Git's blob id of `data`."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class MemTree:
    """Files in memory, listed with their blob ids (a stand-in for a Git commit)."""

    def __init__(self, files: Mapping[str, str], commit: str = "c0") -> None:
        self._data = {path: text.encode() for path, text in files.items()}
        self._listing = {path: (blob_id(d), len(d)) for path, d in self._data.items()}
        self._commit = commit

    @property
    def commit(self) -> str | None:
        return self._commit

    @property
    def errors(self) -> list[FleetError]:
        return []

    def files(self) -> list[str]:
        return sorted(self._data)

    def read(self, path: str) -> bytes:
        return self._data[path]

    def size(self, path: str) -> int:
        return len(self._data[path])

    def oid(self, path: str) -> str:
        return self._listing[path][0]

    def listing(self) -> Mapping[str, tuple[str, int]]:
        return self._listing

"""Views of Git trees and blobs the hub loop keeps between passes: `TreeFiles`, a lazy
path -> bytes mapping of a tree (blobs read only when accessed, blob ids without reading), and
`BlobIdMemo`, blob ids of output contents remembered per bytes object, `Listing`, a listing kept
as the changes on top of an earlier one (no copy of the whole tree's listing each pass), and
`WrittenOutput`, the output commit the hub wrote last with its files and listing. Called by
`reconciler.loop`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import compress
from operator import is_not
from typing import Any

from gitfleet.repo.gitread import GitTree
from gitfleet.repo.gitwrite import blob_id


class TreeFiles(Mapping[str, bytes]):
    """A lazy path -> bytes view of a Git tree: blobs are read only when accessed."""

    def __init__(self, tree: GitTree) -> None:
        self._tree = tree
        self._files = tree.files()
        self._known = set(self._files)
        self._sorted: list[str] | None = None

    def __getitem__(self, path: str) -> bytes:
        if path not in self._known:
            raise KeyError(path)
        return self._tree.read(path)

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)

    def __contains__(self, path: object) -> bool:
        return path in self._known

    def sorted_paths(self, prefix: str = "") -> list[str]:
        """Every path, sorted (computed once; `reconciler.priorparse.paths_under` bisects it,
        whatever `prefix` it looks for)."""
        if self._sorted is None:
            self._sorted = sorted(self._files)
        return self._sorted

    def oid(self, path: str) -> str:
        """The blob id of `path` without reading it (`reconciler.priorparse.OidFiles`)."""
        return self._tree.oid(path)


Written = tuple[Mapping[str, bytes], Mapping[str, tuple[str, int]]]
"""The files of an output tree and their (blob id, size) listing."""
Entry = tuple[str, int]
"""(blob id, size)."""
FLATTEN_SHARE = 8
"""A `Listing` whose changes outnumber 1/FLATTEN_SHARE of its base is copied into one dict."""


class Listing(Mapping[str, Entry]):
    """path -> (blob id, size): `base` with `changes` on top (None: the path is gone). Neither
    is ever changed once given (the listing of the previous output stays as it was)."""

    __slots__ = ("_base", "_changes", "_len")

    def __init__(self, base: Mapping[str, Entry], changes: dict[str, Entry | None], size: int):
        self._base, self._changes, self._len = base, changes, size

    @classmethod
    def since(
        cls, last: Mapping[str, Entry], changes: dict[str, Entry | None]
    ) -> Mapping[str, Entry]:
        """`last` with `changes` (path -> entry, None: gone): last's base under last's changes
        with these on top, or one dict once the changes outnumber 1/FLATTEN_SHARE of the base
        (lookups stay two at most; the whole listing is copied once in many passes)."""
        size = len(last) + sum(
            (entry is not None) - (path in last) for path, entry in changes.items()
        )
        base: Mapping[str, Entry] = last
        if isinstance(last, Listing):
            base, changes = last._base, {**last._changes, **changes}
        if len(changes) * FLATTEN_SHARE <= len(base):
            return cls(base, changes, size)
        flat = dict(base)
        for path, entry in changes.items():
            if entry is None:
                flat.pop(path, None)
            else:
                flat[path] = entry
        return flat

    def __getitem__(self, path: str) -> Entry:
        entry = self._changes.get(path, _NOT_CHANGED)
        if entry is _NOT_CHANGED:
            return self._base[path]
        if entry is None:
            raise KeyError(path)
        found: Entry = entry
        return found

    def get(self, path: str, default: Any = None) -> Any:
        entry = self._changes.get(path, _NOT_CHANGED)
        if entry is _NOT_CHANGED:
            return self._base.get(path, default)
        return default if entry is None else entry

    def __contains__(self, path: object) -> bool:
        entry = self._changes.get(path, _NOT_CHANGED)  # type: ignore[call-overload]
        return path in self._base if entry is _NOT_CHANGED else entry is not None

    def __iter__(self) -> Iterator[str]:
        changes, base = self._changes, self._base
        for path in base:
            if changes.get(path, _NOT_CHANGED) is not None:
                yield path
        for path, entry in changes.items():
            if entry is not None and path not in base:
                yield path

    def __len__(self) -> int:
        return self._len


_NOT_CHANGED: Any = object()


class BlobIdMemo:
    """Blob ids of output contents, remembered per bytes object: the pass hands back the very
    same bytes for unchanged content (its memos), so only new content is hashed."""

    def __init__(self) -> None:
        self._ids: dict[int, tuple[bytes, tuple[str, int]]] = {}

    def entry(self, data: bytes) -> tuple[str, int]:
        """(blob id, size) of `data`; the same tuple for the same bytes object."""
        hit = self._ids.get(id(data))
        if hit is not None and hit[0] is data:
            return hit[1]
        entry = (blob_id(data), len(data))
        self._ids[id(data)] = (data, entry)
        return entry

    def __call__(self, data: bytes) -> str:
        return self.entry(data)[0]

    def listing_since(
        self, files: Mapping[str, bytes], last: Written | None
    ) -> tuple[Mapping[str, Entry], list[str] | None]:
        """(path -> (blob id, size) of `files`, the paths that may differ from `last`). With
        `last` (the files and listing of the previous output), only paths whose bytes are not
        that pass's very object and differ from it are hashed, and the listing is last's with
        those updated: the paths returned are those plus the ones gone (None without `last`:
        every path). When `files.since` names last's very files and the paths that may differ
        from them, only those paths are looked at."""
        if last is None:
            return self.listing(files), None
        before, listed = last
        since = getattr(files, "since", None)  # `reconciler.output.OutputFiles.since`
        if since is not None and since[0] is before:
            maybe = [p for p in since[1] if before.get(p) is not files.get(p)]
        else:
            maybe = list(compress(files, map(is_not, map(before.get, files), files.values())))
            if len(files) - sum(1 for p in maybe if p not in before) < len(before):
                maybe += [p for p in before if p not in files]
        changes: dict[str, Entry | None] = {}
        for path in maybe:
            data = files.get(path)
            if data is None:
                changes[path] = None
            elif data != before.get(path):  # equal bytes in a new object: not hashed again
                changes[path] = self.entry(data)
        self._forget_unused(files)
        return Listing.since(listed, changes), list(changes)

    def listing(self, files: Mapping[str, bytes]) -> dict[str, tuple[str, int]]:
        """path -> (blob id, size) of `files`. Contents no longer among them are forgotten once
        they outnumber the ones in use."""
        ids, out = self._ids, {}
        for path, data in files.items():
            hit = ids.get(id(data))
            out[path] = hit[1] if hit is not None and hit[0] is data else self.entry(data)
        self._forget_unused(files)
        return out

    def _forget_unused(self, files: Mapping[str, bytes]) -> None:
        """Forget contents not in `files` once they outnumber the ones in use."""
        if len(self._ids) > 2 * len(files):
            ids = self._ids
            self._ids = {id(d): ids[id(d)] for d in files.values() if id(d) in ids}


class WrittenFiles(Mapping[str, bytes]):
    """The files of an output commit this hub wrote, from memory: the very bytes objects its
    pass returned (so later passes compare them by identity), blob ids from its listing, and
    its sorted paths as the files give them (see `sorted_paths`)."""

    def __init__(self, files: Mapping[str, bytes], listing: Mapping[str, tuple[str, int]]) -> None:
        self._files = files
        self._listing = listing
        self._sorted: list[str] | None = None

    @property
    def direct(self) -> Mapping[str, bytes]:
        """The files as the pass returned them (a dict: a caller looking up thousands of paths
        does it in C, not through `__getitem__`). Read it, never change it."""
        return self._files

    def __getitem__(self, path: str) -> bytes:
        return self._files[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)

    def __contains__(self, path: object) -> bool:
        return path in self._files

    def sorted_paths(self, prefix: str = "") -> list[str]:
        """Sorted paths, at least every one that starts with `prefix`
        (`reconciler.priorparse.paths_under` bisects them; never change the list): the files'
        own `sorted_paths(prefix)` when they have one (a pass's `OutputFiles` sorts only the
        few thousand paths outside `clusters/` when the prefix is outside it), else every path,
        sorted once."""
        own = getattr(self._files, "sorted_paths", None)
        if own is not None:
            found: list[str] = own(prefix)
            return found
        if self._sorted is None:
            self._sorted = sorted(self._files)
        return self._sorted

    def oid(self, path: str) -> str:
        return self._listing[path][0]


class WrittenOutput:
    """The output commit a hub last wrote: the files its pass returned and their listing, so
    the next pass hashes and compares only the paths whose bytes are new objects
    (`BlobIdMemo.listing_since`)."""

    def __init__(self) -> None:
        self._ids = BlobIdMemo()
        self._commit: str | None = None
        self._last: Written | None = None

    def listing(self, output: str | None) -> Mapping[str, tuple[str, int]] | None:
        """The listing of `output` when it is the commit written last (else None)."""
        if output is None or output != self._commit or self._last is None:
            return None
        return self._last[1]

    def files(self, output: str | None) -> WrittenFiles | None:
        """The files of `output` from memory when it is the commit written last (else None)."""
        if output is None or output != self._commit or self._last is None:
            return None
        return WrittenFiles(*self._last)

    def changes(
        self, output: str | None, files: Mapping[str, bytes]
    ) -> tuple[Mapping[str, Entry], list[str] | None]:
        """The listing of `files` and the paths that may differ from `output` (None: any)."""
        last = self._last if output is not None and output == self._commit else None
        return self._ids.listing_since(files, last)

    def wrote(
        self, commit: str, files: Mapping[str, bytes], listing: Mapping[str, tuple[str, int]]
    ) -> None:
        self._commit, self._last = commit, (files, listing)

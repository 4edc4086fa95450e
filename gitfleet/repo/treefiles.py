"""Views of Git trees and blobs the hub loop keeps between passes: `TreeFiles`, a lazy
path -> bytes mapping of a tree (blobs read only when accessed, blob ids without reading), and
`BlobIdMemo`, blob ids of output contents remembered per bytes object. Called by
`reconciler.loop`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

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

    def sorted_paths(self) -> list[str]:
        """Every path, sorted (computed once; `reconciler.priorparse.paths_under` bisects it)."""
        if self._sorted is None:
            self._sorted = sorted(self._files)
        return self._sorted

    def oid(self, path: str) -> str:
        """The blob id of `path` without reading it (`reconciler.priorparse.OidFiles`)."""
        return self._tree.oid(path)


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

    def listing(self, files: Mapping[str, bytes]) -> dict[str, tuple[str, int]]:
        """path -> (blob id, size) of `files`. Contents no longer among them are forgotten once
        they outnumber the ones in use."""
        ids, out = self._ids, {}
        for path, data in files.items():
            hit = ids.get(id(data))
            out[path] = hit[1] if hit is not None and hit[0] is data else self.entry(data)
        if len(ids) > 2 * len(files):
            self._ids = {id(data): ids[id(data)] for data in files.values()}
        return out

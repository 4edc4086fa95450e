"""File and directory names of the output tree, and its canonical YAML bytes.

File and directory names are derived from validated names only; anything else is replaced by a
hash-derived token, so no input can steer a path. The layout and documents themselves are the
contract in `gitfleet.api.output`. Content hashes come from
`gitfleet.api.canonical`, the one definition the agent checks them with. Called by the pass.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from contextlib import suppress
from itertools import compress, filterfalse, repeat
from operator import is_not, methodcaller, not_
from typing import Any

from gitfleet.load.yamlio import dump_yaml
from reconciler.stagememo import StageMemo, unheld

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_KIND = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
EMITTED_BYTES = 384 * 1024 * 1024
"""YAML bytes `yaml_bytes` keeps (least recently used dropped first): more than the index and
status documents of a 1,000-cluster output, so a pass over an unchanged fleet emits nothing."""

_emitted: OrderedDict[bytes, bytes] = OrderedDict()
_held = 0


def _token(text: str, pattern: re.Pattern[str], limit: int = 253, stand_in: str = "h-.") -> str:
    """`text` when it is a safe name; otherwise a hash-derived stand-in. The file-name stand-in
    `h-.<hex>` is never a valid kind, DNS label or DNS subdomain ('-.' cannot occur in one), so
    a stand-in never equals a real name's token."""
    if len(text) <= limit and pattern.match(text):
        return text
    return stand_in + hashlib.sha256(text.encode()).hexdigest()[:20]


def placement_key(name: str, namespace: str = "") -> str:
    """Directory name of a placement: `<name>` (CRP) or `<namespace>.<name>` (RP).
    Both parts are validated DNS-1123 labels, so the dot cannot be ambiguous."""
    name_tok = _token(name, _DNS_LABEL, 63, "h-")
    return f"{_token(namespace, _DNS_LABEL, 63, 'h-')}.{name_tok}" if namespace else name_tok


def object_file_name(obj: Mapping[str, Any]) -> str:
    """`<kind>[.<group>]_[<namespace>_]<name>.yaml`, lower-case; '_' never occurs in a part, and
    a hashed stand-in never equals a valid part, so two objects share a file name only when their
    kinds differ in case alone (`reconciler.outputguard` refuses the second)."""
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    kind = _token(str(obj.get("kind", "")), _KIND).lower()
    meta = obj.get("metadata") or {}
    parts = [f"{kind}.{_token(group, _DNS_SUBDOMAIN)}" if group else kind]
    if meta.get("namespace"):
        parts.append(_token(str(meta["namespace"]), _DNS_LABEL, 63))
    parts.append(_token(str(meta.get("name", "")), _DNS_SUBDOMAIN))
    return "_".join(parts) + ".yaml"


def object_identity(obj: Mapping[str, Any]) -> dict[str, str]:
    """apiVersion, kind, namespace (when set) and name of a manifest."""
    meta = obj.get("metadata") or {}
    ident = {"apiVersion": str(obj.get("apiVersion", "")), "kind": str(obj.get("kind", ""))}
    if meta.get("namespace"):
        ident["namespace"] = str(meta["namespace"])
    ident["name"] = str(meta.get("name", ""))
    return ident


def yaml_bytes(doc: Any) -> bytes:
    """The canonical YAML bytes of one document, remembered across passes by the digest of its
    canonical JSON (the emitter sorts keys, so that JSON determines the YAML; documents JSON
    cannot express are not remembered). A long-running hub emits only documents that changed."""
    global _held
    try:
        text = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return dump_yaml(doc).encode()
    key = hashlib.sha256(text.encode()).digest()
    data = _emitted.get(key)
    if data is not None:
        with suppress(KeyError):  # another hub thread may have dropped it meanwhile
            _emitted.move_to_end(key)
        return data
    data = _emitted[key] = dump_yaml(doc).encode()
    _held += len(data)
    with suppress(KeyError):
        while _held > EMITTED_BYTES:
            _held -= len(_emitted.popitem(last=False)[1])
    return data


Since = tuple[Mapping[str, bytes], frozenset[str]] | None
"""(an earlier tree, the paths where a tree may differ from it), when known."""


class OutputFiles(dict[str, bytes]):
    """An output tree as a pass returns it (path -> bytes, in no particular order).
    `sorted_paths` lists its paths sorted (`reconciler.priorparse.paths_under` bisects it when
    the tree is the next pass's prior): for a prefix outside `clusters/` (the next pass asks
    for `decisions/` and `state/` only) those outside `clusters/` only, which in a tree made
    by `of_assembly` are among the files `add` gave (~6,500, not ~470k to sort); a list with
    the same paths as the last one sorted reuses that order (one set comparison instead of a
    sort: most passes keep every path).
    `since`, when known: the last pass's tree and the paths where this one may differ from it
    (the hub then compares only those, `gitfleet.repo.treefiles.BlobIdMemo.listing_since`).
    `of_assembly` makes the tree from the tree two passes back, which only the last tree's
    `since` still names, when no one else holds it (patched on the paths named since), instead
    of copying the assembly: no copy and no freeing of ~470k entries per pass, and a hub holds
    two trees between passes, not three. What `add` added is kept apart too (a small dict), so
    `follow` names the added paths whose bytes are other objects than last pass's only: a pass
    re-adds ~6,000 status and state files, mostly the very bytes of the last one. An assembly
    holds `clusters/` files only: an added file outside `clusters/` is not looked up in the
    assembly (each look-up in ~470k entries misses the cache), and is not removed either: a
    pass adds nearly all of them again, overwriting them in place; `settle` removes those it
    did not add (~4 ms a pass less at fleet-1k than removing ~6,500 and adding them again).
    Before `settle`, paths outside `clusters/` may hold an older tree's bytes."""

    since: Since = None
    _added: dict[str, bytes] | None = None
    _stale: set[str] | None = None
    _assembled = False
    """Made by `of_assembly`: its paths outside `clusters/` are among `_added`'s after `settle`."""
    _outside: list[str] | None = None
    """Its sorted paths outside `clusters/`, once `sorted_paths` made them (None after a change)."""

    @classmethod
    def of_assembly(cls, assembled: Mapping[str, bytes], since: Since) -> OutputFiles:
        """A copy of `assembled` (`since`: as for `follow`), to `add` to and `follow` it: the
        tree two passes back made into it when the last tree followed the assembly `since`
        starts from and its `since` names that older tree (then no one needs that any more:
        the hub compared the last tree with it when it wrote it)."""
        last = _FOLLOWED.last("")
        if last is None or since is None or last[1][1] is not since[0]:
            return cls._assembly(assembled)
        before, _, added = last[1]
        back, before.since = before.since, None
        if back is None:
            return cls._assembly(assembled)
        tree, paths = back
        del back
        if not isinstance(tree, OutputFiles) or not unheld(tree):
            return cls._assembly(assembled)
        now = since[1].union(added)  # made this assembly's below, whatever the last tree had
        patch(tree, paths - now, before)  # `tree` becomes the last tree elsewhere
        outside = list(filterfalse(_IN_CLUSTERS, added))  # in C: ~6,000 status, state files
        patch(tree, now.difference(outside), assembled)  # then the last assembly, this one
        tree.since = tree._added = tree._outside = None
        tree._stale = set(outside)  # never an assembly's: `settle` drops those not added again
        tree._assembled = True
        return tree

    @classmethod
    def _assembly(cls, assembled: Mapping[str, bytes]) -> OutputFiles:
        tree = cls(assembled)
        tree._assembled = True
        return tree

    def add(self, more: Mapping[str, bytes]) -> None:
        """`update`, remembering the files for `follow`."""
        self.update(more)
        self._outside = None
        if self._added is None:
            self._added = {}
        self._added.update(more)
        if self._stale:
            self._stale.difference_update(more)

    def settle(self) -> None:
        """Drop the last tree's files outside `clusters/` that no `add` gave again. Until
        then a path outside `clusters/` may still hold an older tree's bytes: call it before
        reading one (`follow` calls it)."""
        if self._stale:
            list(map(self.pop, self._stale, repeat(None)))
            self._outside = None
        self._stale = None

    def follow(
        self,
        assembled: Mapping[str, bytes],
        since: Since,
    ) -> None:
        """These files are a copy of `assembled` plus what `add` added. With `since` (the last
        assembly and the paths `assembled` may differ from it in), set `self.since` when the
        last tree that followed an assembly followed that one: it differs from this tree only
        in those paths and in the added paths whose bytes are not the very ones added last
        time (`changed_files`). Remembers this tree for the next pass."""
        self.settle()
        added = self._added or {}
        last = _FOLLOWED.last("")
        if since is not None and last is not None and last[1][1] is since[0]:
            before, _, before_added = last[1]
            self.since = (before, since[1] | changed_files(before_added, added))
            before.since = None  # never a chain of every earlier tree (each holds its paths)
        _FOLLOWED.put("", (), (self, assembled, added))

    def sorted_paths(self, prefix: str = "") -> list[str]:
        """Sorted paths, at least every one that starts with `prefix`: those outside
        `clusters/` only when `prefix` is outside it and `of_assembly` made this tree. The
        list is shared: read it, never change it."""
        if self._assembled and not _IN_CLUSTERS(prefix) and not _CLUSTERS.startswith(prefix):
            self.settle()
            if self._outside is None:
                self._outside = _sorted_as_last(
                    1, set(filterfalse(_IN_CLUSTERS, self._added or ()))
                )
            return self._outside
        return _sorted_as_last(0, self.keys())


_CLUSTERS = "clusters/"
_IN_CLUSTERS = methodcaller("startswith", _CLUSTERS)
"""Whether a path is under `clusters/`, where every file of an assembly is."""
_last_order: list[tuple[list[str], frozenset[str]]] = [([], frozenset())] * 2
"""The sorted paths `OutputFiles.sorted_paths` ordered last, and their set: of a whole tree,
and of the paths outside `clusters/`."""


def _sorted_as_last(which: int, paths: AbstractSet[str]) -> list[str]:
    """`paths` sorted: the very list sorted last time (`which` of `_last_order`) when it has
    the same paths."""
    order, known = _last_order[which]
    if paths != known:
        order = sorted(paths)
        _last_order[which] = (order, frozenset(order))
    return order


def patch(files: dict[str, bytes], paths: Iterable[str], source: Mapping[str, bytes]) -> bool:
    """`files` made equal to `source` on `paths`; whether that removed a path from `files`
    (in C, copies and removals alike: a pass patches some thousands, ~6,000 of them status
    and state files that the pass then adds again)."""
    paths = list(paths)
    found: list[Any] = list(map(source.get, paths))
    held = list(map(is_not, found, repeat(None)))
    files.update(zip(compress(paths, held), compress(found, held), strict=True))
    gone = list(map(files.pop, compress(paths, map(not_, held)), repeat(None)))
    return any(map(is_not, gone, repeat(None)))


def changed_files(old: Mapping[str, bytes], new: Mapping[str, bytes]) -> frozenset[str]:
    """The paths whose bytes in `new` are not the very object of `old`, or that only one of
    them has (in C: a pass's ~6,000 added files cost no Python step each)."""
    paths = list(new)
    changed = set(compress(paths, map(is_not, map(old.get, paths), new.values())))
    changed.update(old.keys() - new.keys())
    return frozenset(changed)


_FOLLOWED: StageMemo[tuple[OutputFiles, Mapping[str, bytes], dict[str, bytes]]] = StageMemo()
"""The last tree that followed an assembly: it, that assembly, and the files it added."""

"""A placement's bindings in shard files, `state/bindings/<key>/<i>.yaml` (PlacementBindings).

A placement state file (`reconciler.state`) lists one binding per cluster; with a thousand
clusters that is most of a megabyte, rewritten whenever one cluster joins or leaves. Bindings
that are one a cluster in cluster order, more than `gitfleet.api.shards` puts in one shard (100),
go to `shard_count` shard files instead: a cluster's binding lives in the shard its name hashes
to (`shard_of`), each shard in cluster order with its own `bindingGroups` (the same grouping as
the whole file, within the shard), and every shard is written, an empty one too, so a missing
file is a fault. The state file then says `bindingShards: <count>` and holds no bindings.

`ShardWriter.files` makes a placement's shard files from the ones it made last time: only the
shards of the clusters where the bindings differ by identity are cut again
(`reconciler.shardpatch`), a shard whose bindings are the very same objects keeps its bytes, and a changed one patches its kept
rows and groups (`reconciler.keptgroups`); each new file's bindings are `remember`ed, so the next
pass does not parse it. `read_shards` reads them back (by blob id, `priorparse.derive_own`),
raising `ShardProblem` (naming the file) for a missing or unreadable one. `grouped_parts` is the
grouping both kinds of file share; `bindings_to_yaml` the entries of a state file holding its
bindings. Called by `reconciler.state`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import islice
from operator import attrgetter, lt
from typing import Any

import yaml

from gitfleet.api.grouping import CONTENTS, expand_named, group_named
from gitfleet.api.output import OUTPUT_API_VERSION, binding_shard_path
from gitfleet.api.shards import shard_count
from gitfleet.load.yamlemit import Pieces
from gitfleet.load.yamlio import dump_yaml
from reconciler.binding import Binding, binding_to_yaml, read_bindings
from reconciler.keptgroups import KeptGroups
from reconciler.priorparse import blob_keys, derive_own, remember
from reconciler.shardpatch import SplitKeeper
from reconciler.stagememo import StageMemo
from reconciler.yamlparts import Spliced, keyed_dump

BINDINGS_KIND = "PlacementBindings"
SHARDS_FIELD = "bindingShards"
SHARD_TAG = "placement-bindings"
"""The `priorparse` reader tag of a shard file: its (placement key, shard, bindings)."""
MAX_SHARDS = 1 << 16
_READ_ERRORS = (yaml.YAMLError, AttributeError, KeyError, TypeError, ValueError)
_CLUSTER = attrgetter("cluster")


class ShardProblem(ValueError):
    """A shard file of a placement state is missing or unreadable (the message names it)."""


_Row = tuple[dict[str, Any], list[str], list[Any]]
"""A binding's YAML entry, its grouping text once made, and its emitted lines once written
(`gitfleet.load.yamlemit.PieceEmitter`)."""
_ROWS: StageMemo[dict[Binding, _Row]] = StageMemo()
"""Placement key -> its bindings' entries the last time its state was written: a state that
changed in one binding re-makes and re-emits that binding's entry only."""


def bindings_to_yaml(key: str, bindings: tuple[Binding, ...], pieces: Pieces) -> dict[str, Any]:
    """`bindings` (and `bindingGroups`: clusters whose bindings are identical but for the
    cluster name and content hash, `group_named`: a group lists differing hashes in
    `contents`). Grouping needs the scheduler's (cluster, state) order without repeats, so
    that reading restores the exact tuple. Each kept entry's slot goes in `pieces`."""
    last = _ROWS.last(key)
    before: dict[Binding, _Row] = last[1] if last is not None else {}
    made: dict[Binding, _Row] = {}
    rows: list[dict[str, Any]] = []
    texts: list[list[str]] = []
    for b in bindings:
        found = before.get(b)
        if found is None:
            found = (binding_to_yaml(b), [], [])
        made[b] = found
        rows.append(found[0])
        texts.append(found[1])
        pieces[id(found[0])] = found[2]
    _ROWS.put(key, (), made)
    keys = [(b.cluster, b.state) for b in bindings]
    if keys != sorted(set(keys)):
        return {"bindings": rows}
    singles, groups = group_named(rows, "cluster", "clusters", texts=texts, member=CONTENTS)
    return {"bindings": singles, "bindingGroups": groups} if groups else {"bindings": singles}


def bindings_shards(bindings: tuple[Binding, ...]) -> int:
    """How many shard files `bindings` go to: 1 (none: they stay in the state file) when they
    fit one shard or are not one a cluster in cluster order (the scheduler's order, kept)."""
    count = shard_count(len(bindings))
    if count == 1:
        return 1
    return count if one_a_cluster_in_order(bindings) else 1


def sharded_count(writer: ShardWriter, key: str, bindings: tuple[Binding, ...]) -> int:
    """`bindings_shards(bindings)`, the order checked only where `bindings` differ from the
    ones `writer` last split for `key`."""
    count = shard_count(len(bindings))
    if count == 1:
        return 1
    return count if writer.in_order(key, bindings) else 1


def one_a_cluster_in_order(bindings: tuple[Binding, ...]) -> bool:
    """Whether each binding's cluster name is greater than the one before (one binding a
    cluster, in cluster order): one comparison a pair, in C."""
    clusters = list(map(_CLUSTER, bindings))
    return all(map(lt, clusters, islice(clusters, 1, None)))


def grouped_parts(kept: KeptGroups, spliced: Spliced) -> dict[str, Any]:
    """`bindings` and `bindingGroups` (when some) from kept rows, as `spliced` parts."""
    singles, groups = kept.parts(spliced)
    return {"bindings": singles, "bindingGroups": groups} if groups else {"bindings": singles}


def new_groups() -> KeptGroups:
    """Kept rows and groups of no binding yet."""
    return KeptGroups("cluster", "clusters", _never, CONTENTS)


def _never(_row: Mapping[str, Any]) -> bool:
    return False


@dataclass(frozen=True)
class _Shard:
    """One shard file as written: its bindings, kept rows, bytes and remembered value."""

    bindings: tuple[Binding, ...]
    kept: KeptGroups
    data: bytes
    value: tuple[str, int, tuple[Binding, ...]]


class ShardWriter:
    """Each placement's shard files as last written (one memo entry per placement)."""

    def __init__(self) -> None:
        self._last: StageMemo[tuple[int, tuple[_Shard, ...]]] = StageMemo()
        self._parts: SplitKeeper[Binding] = SplitKeeper(_CLUSTER)

    def in_order(self, key: str, bindings: tuple[Binding, ...]) -> bool:
        """Whether `bindings` are one a cluster in cluster order (`one_a_cluster_in_order`)."""
        return self._parts.in_order(key, bindings)

    def files(
        self, key: str, bindings: tuple[Binding, ...], count: int
    ) -> list[tuple[str, bytes, tuple[Binding, ...]]]:
        """(path, bytes, the bindings a reader gets back) of each of the `count` shards of
        `bindings` (one a cluster in cluster order): an unchanged shard keeps its bytes."""
        parts = self._parts.split(key, bindings, count)
        last = self._last.last(key)
        before = last[1][1] if last is not None and last[1][0] == count else None
        made = []
        for i, part in enumerate(parts):
            old = before[i] if before is not None else None
            if old is not None and (old.bindings is part or old.bindings == part):
                made.append(old)
            else:
                made.append(_made(key, i, part, old))
        self._last.put(key, (), (count, tuple(made)))
        return [(binding_shard_path(key, i), s.data, s.value[2]) for i, s in enumerate(made)]


def _made(key: str, shard: int, bindings: tuple[Binding, ...], old: _Shard | None) -> _Shard:
    kept = old.kept if old is not None else new_groups()
    kept = kept.update(dict(zip(map(_CLUSTER, bindings), bindings, strict=True)), binding_to_yaml)
    spliced = Spliced()
    grouped = grouped_parts(kept, spliced)
    doc = {
        "apiVersion": OUTPUT_API_VERSION,
        "kind": BINDINGS_KIND,
        "metadata": {"name": key},
        "shard": shard,
        **grouped,
    }
    data = keyed_dump(doc, grouped, spliced, _key_text).encode()
    value = remember(data, SHARD_TAG, (key, shard, bindings))
    return _Shard(bindings, kept, data, value)


def _key_text(key: str, value: Any) -> str:
    return dump_yaml({key: value})


def read_binding_rows(doc: Mapping[str, Any]) -> tuple[Binding, ...]:
    """The bindings of a document's `bindings` and `bindingGroups` (grouped ones in cluster
    order: grouping is only done to bindings in that order)."""
    if "bindingGroups" not in doc:
        return read_bindings(doc.get("bindings"))
    groups = doc.get("bindingGroups")
    rows = expand_named(doc.get("bindings"), groups, "cluster", "clusters", CONTENTS)
    return tuple(sorted(read_bindings(rows), key=lambda b: (b.cluster, b.state)))


def parse_shard(doc: Mapping[str, Any]) -> tuple[str, int, tuple[Binding, ...]]:
    """A shard document's (placement key, shard, bindings). Raises on a malformed one."""
    if doc.get("kind") != BINDINGS_KIND:
        raise ValueError(f"kind {doc.get('kind')!r}, not {BINDINGS_KIND}")
    return str(doc["metadata"]["name"]), int(doc["shard"]), read_binding_rows(doc)


def read_shards(files: Mapping[str, bytes], key: str, count: int) -> list[tuple[Binding, ...]]:
    """The bindings of each of the `count` shards of placement `key`. Raises ShardProblem."""
    if not 1 < count <= MAX_SHARDS:
        raise ShardProblem(f"{SHARDS_FIELD}: {count} is not between 2 and {MAX_SHARDS}")
    ids = blob_keys(files, [binding_shard_path(key, shard) for shard in range(count)])
    found = _READ.get(key, (ids,)) if ids is not None else None
    if found is not None:
        return found
    out = []
    for shard in range(count):
        path = binding_shard_path(key, shard)
        if path not in files:
            raise ShardProblem(f"{path}: binding shard {shard} of {count} is missing")
        try:
            name, number, bindings = derive_own(files, path, SHARD_TAG, parse_shard)
        except _READ_ERRORS as exc:
            raise ShardProblem(f"{path}: unreadable binding shard ({type(exc).__name__})") from exc
        if (name, number) != (key, shard):
            raise ShardProblem(f"{path}: holds shard {number} of {name!r}, not {shard} of {key!r}")
        out.append(bindings)
    if ids is not None:
        _READ.put(key, (ids,), out)
    return out


_READ: StageMemo[list[tuple[Binding, ...]]] = StageMemo()
"""Placement key -> its shards' bindings, with the blob ids they were read from (a hub reads
the same shards pass after pass: one blob id lookup each instead of one read each)."""

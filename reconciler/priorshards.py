"""The sharded shape of a placement's `state/prior/` record (`reconciler.priorstate`), for a
placement bound to more than 100 clusters, so that one cluster joining or leaving rewrites one
small file instead of the placement's whole list.

`state/prior/<key>.yaml` is then a ShardedPlacementPrior: the placement-level parts (the index
`header`, the placement's `conditions.placement` and its entries without a cluster name) and
`shards` (`count`, and the shards that hold nothing, `empty`, when any). Each other shard `i`
is `state/prior/<key>/<i>.yaml`, a PlacementPriorShard: the clusters `gitfleet.api.shards
.shard_of(cluster, count)` puts there, with their `index` (`clusters`, `entries`) and their
`conditions` (`perCluster`, `perClusterGroups`, grouped within the shard), the same fields as
the single file. An empty shard writes no file. The kinds differ from the single file's, so
an older hub does not read a part of the record for the whole: it parses the index and status
files instead. `sharded_files` writes a placement's files, re-emitting only the shards whose
clusters changed (`Kept`: last pass's shards; the names, entries and conditions are cut into
shards again only where they changed, `reconciler.shardpatch`); `joined_prior` reads them back
into the very PlacementPrior the single file gives, remembered per placement while its
documents are the same objects; a missing, unreadable or misplaced shard raises (the caller
reads the index and status files). Called by `priorstate`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any

from gitfleet.api import Condition
from gitfleet.api.output import OUTPUT_API_VERSION, placement_prior_shard_path
from gitfleet.api.shards import shard_of
from gitfleet.load.yamlemit import Pieces
from gitfleet.load.yamlio import dump_yaml
from reconciler.priorconds import (
    UNNAMED,
    PriorConditions,
    conditions_section,
    dump_conditions,
    parse_conditions_section,
)
from reconciler.priorparse import blob_keys, derive_own, remember
from reconciler.shardpatch import MappingSplit, SplitKeeper
from reconciler.stagememo import StageMemo
from reconciler.yamlparts import Blocks, Spliced, grouped_parts, items_block

SHARDED_KIND = "ShardedPlacementPrior"
SHARD_KIND = "PlacementPriorShard"
SHARD_TAG = "placement-prior-shard"


@dataclass(frozen=True)
class IndexRecord:
    """A placement's ClusterIndex rows as recorded: implied by bindings, or whole."""

    header: Mapping[str, Any] | None
    clusters: tuple[str, ...]
    entries: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class PlacementPrior:
    """One placement's `state/prior/` record as read (a part is None when it was not recorded)."""

    key: str
    index: IndexRecord | None
    conditions: PriorConditions | None


@dataclass(frozen=True)
class ShardedHead:
    """A ShardedPlacementPrior as read: the placement-level parts (`index`: the header alone,
    `conditions`: the placement's and the unnamed entries'), the shard count and empty shards."""

    key: str
    count: int
    empty: frozenset[int]
    index: IndexRecord | None
    conditions: PriorConditions | None


@dataclass(frozen=True)
class PriorShard:
    """A PlacementPriorShard as read: its clusters' implied names, whole rows and conditions."""

    key: str
    number: int
    count: int
    clusters: tuple[str, ...]
    entries: tuple[Mapping[str, Any], ...]
    conditions: dict[str, tuple[Condition, ...]]


def index_record(section: Mapping[str, Any]) -> IndexRecord:
    return IndexRecord(
        header=section.get("header"),
        clusters=tuple(str(c) for c in section.get("clusters") or ()),
        entries=tuple(section.get("entries") or ()),
    )


BLOCKS = Blocks()
"""The texts of the records' lists of cluster names, for this pass and the last."""


def spliced_part(
    part: str, value: Any, pieces: Pieces, names: Callable[[int], str | None] | None = None
) -> str:
    """`dump_yaml({part: value}, pieces=pieces)`: the section's cluster names (`names`: their
    text, when the caller keeps it), its kept entries and its groups' cluster names written
    from kept texts (`yamlparts.Spliced`)."""
    spliced = Spliced()
    if isinstance(value, dict):
        value = dict(value)
        clusters, entries = value.get("clusters"), value.get("entries")
        if isinstance(clusters, list) and clusters:
            block = names if names is not None else BLOCKS.names(clusters)
            value["clusters"] = spliced.part(clusters, block)
        if isinstance(entries, list) and entries:
            value["entries"] = spliced.part(entries, items_block(entries, pieces))
        if isinstance(value.get("perClusterGroups"), list):
            value["perClusterGroups"] = grouped_parts(
                value["perClusterGroups"], "clusters", spliced, BLOCKS
            )
    return spliced.dump({part: value})


def parse_sharded_head(doc: Any) -> ShardedHead:
    """A ShardedPlacementPrior document. Raises KeyError/ValueError/TypeError."""
    shards = doc["shards"]
    count, empty = int(shards["count"]), frozenset(int(i) for i in shards.get("empty") or ())
    if count < 2 or not empty <= set(range(count)):
        raise ValueError(f"shards: {count} shards, empty {sorted(empty)}")
    index, conds = doc.get("index"), doc.get("conditions")
    conditions = parse_conditions_section(conds) if isinstance(conds, dict) else None
    if conditions is not None and any(not n.startswith(UNNAMED) for n in conditions[1]):
        raise ValueError("a cluster's conditions outside its shard")
    record = index_record(index) if isinstance(index, dict) else None
    if record is not None and (record.clusters or record.entries):
        raise ValueError("index rows outside the shards")
    return ShardedHead(str(doc["metadata"]["name"]), count, empty, record, conditions)


def parse_prior_shard(doc: Any) -> PriorShard:
    """A PlacementPriorShard document; every cluster in it must belong there. Raises
    KeyError/ValueError/TypeError."""
    if doc.get("kind") != SHARD_KIND:
        raise ValueError(f"kind: expected {SHARD_KIND}")
    index, conds = doc.get("index") or {}, doc.get("conditions")
    record = index_record(index)
    placement, named = parse_conditions_section(conds) if isinstance(conds, dict) else ((), {})
    number, count = int(doc["shard"]["number"]), int(doc["shard"]["count"])
    names = chain(record.clusters, (str(e["cluster"]) for e in record.entries), named)
    if placement or any(shard_of(name, count) != number for name in names):
        raise ValueError(f"shard {number}: a part that belongs elsewhere")
    key = str(doc["metadata"]["name"])
    return PriorShard(key, number, count, record.clusters, record.entries, named)


def joined_prior(output: Mapping[str, bytes], head: ShardedHead) -> PlacementPrior:
    """The record of a sharded placement: its head and every non-empty shard. Raises KeyError
    (a shard missing), yaml.YAMLError, ValueError (a shard of another placement or count)."""
    numbers = [n for n in range(head.count) if n not in head.empty]
    ids = blob_keys(output, [placement_prior_shard_path(head.key, n) for n in numbers])
    if ids is not None:
        found = _BY_IDS.get(head.key, (head, ids))
        if found is not None:
            return found
    shards = []
    for number in numbers:
        path = placement_prior_shard_path(head.key, number)
        shard = derive_own(output, path, SHARD_TAG, parse_prior_shard)
        if (shard.key, shard.number, shard.count) != (head.key, number, head.count):
            raise ValueError(f"{path}: shard {shard.number} of {shard.count} of {shard.key}")
        shards.append(shard)
    inputs = (head, *shards)
    found = _JOINED.get(head.key, inputs)
    if found is None:
        found = _joined(head, shards)
        _JOINED.put(head.key, inputs, found)
    if ids is not None:
        _BY_IDS.put(head.key, (head, ids), found)
    return found


def _joined(head: ShardedHead, shards: list[PriorShard]) -> PlacementPrior:
    index = None
    if head.index is not None:
        clusters = tuple(sorted(chain.from_iterable(s.clusters for s in shards)))
        entries = sorted(chain.from_iterable(s.entries for s in shards), key=_entry_cluster)
        index = IndexRecord(head.index.header, clusters, tuple(entries))
    conditions = None
    if head.conditions is not None:
        named: dict[str, tuple[Condition, ...]] = {}
        for shard in shards:
            named.update(shard.conditions)
        per_cluster = {name: named[name] for name in sorted(named)}
        per_cluster.update(head.conditions[1])  # the unnamed entries, last, in order
        conditions = (head.conditions[0], per_cluster)
    return PlacementPrior(head.key, index, conditions)


def _entry_cluster(entry: Mapping[str, Any]) -> str:
    return str(entry["cluster"])


_BY_IDS: StageMemo[PlacementPrior] = StageMemo()
"""Placement key -> its joined record, with its head and its shards' blob ids (a hub reads the
same shards pass after pass: one blob id lookup each instead of one read each)."""
_JOINED: StageMemo[PlacementPrior] = StageMemo()
"""Placement key -> its record joined from its head and shards (the documents it came from):
the pass that writes them puts what it wrote, so the next pass joins nothing."""


@dataclass(frozen=True)
class Kept:
    """A shard as last written: what it was made from, its bytes and its parsed value."""

    made_from: tuple[Any, ...]
    data: bytes
    value: PriorShard


Written = list[tuple[str, bytes, str, Any]]
"""(path, bytes, derive tag, the value `derive_own` gives for them) of each file written."""


def sharded_files(
    key: str,
    count: int,
    section: Mapping[str, Any] | None,
    conditions: PriorConditions | None,
    pieces: Pieces,
    kept: Mapping[int, Kept],
) -> tuple[Written, dict[int, Kept], Any]:
    """A placement's shard files (`section`: its `index` part, None when not recorded;
    `conditions`: None when not recorded), each made again only when its clusters' names, rows
    or conditions differ from `kept`'s; with the shards as kept now and the head's value."""
    clusters = _CLUSTERS.split(key, (section or {}).get("clusters") or (), count)
    entries = _ENTRIES.split(key, (section or {}).get("entries") or (), count)
    per_cluster = conditions[1] if conditions is not None else {}
    conds = _CONDS.split(key, per_cluster, count, _unnamed)
    written: Written = []
    now: dict[int, Kept] = {}
    for number in range(count):
        made_from = (count, clusters[number], entries[number], conds[number])
        if not any(made_from[1:]):
            continue
        found = kept.get(number)
        if found is None or found.made_from != made_from:
            found = _shard(key, number, count, made_from, pieces)
        now[number] = found
        path = placement_prior_shard_path(key, number)
        written.append((path, found.data, SHARD_TAG, found.value))
    named = sum(map(len, conds))  # every cluster's conditions but the unnamed are in a shard
    unnamed = {} if named == len(per_cluster) else dict(filter(_unnamed_item, per_cluster.items()))
    head = _head(key, count, frozenset(range(count)) - set(now), section, conditions, unnamed)
    return written, now, head


_CLUSTERS: SplitKeeper[str] = SplitKeeper(str)
_ENTRIES: SplitKeeper[Mapping[str, Any]] = SplitKeeper(_entry_cluster)
_CONDS: MappingSplit[tuple[Condition, ...]] = MappingSplit()
"""Each placement's last cluster names, entries and conditions cut into shards."""


def _unnamed(name: str) -> bool:
    return name.startswith(UNNAMED)


def _unnamed_item(item: tuple[str, Any]) -> bool:
    return item[0].startswith(UNNAMED)


def _shard(key: str, number: int, count: int, made_from: tuple[Any, ...], pieces: Pieces) -> Kept:
    _, clusters, entries, conds = made_from
    parts = [HEAD]
    if conds:
        section = conditions_section(((), conds), f"{key}/{number}")
        del section["placement"]
        parts.append(spliced_part("conditions", section, pieces).encode())
    index = {k: list(v) for k, v in (("clusters", clusters), ("entries", entries)) if v}
    if index:
        parts.append(spliced_part("index", index, pieces).encode())
    tail = {"kind": SHARD_KIND, "metadata": {"name": key}}
    parts.append(dump_yaml({**tail, "shard": {"count": count, "number": number}}).encode())
    data = b"".join(parts)
    value = PriorShard(key, number, count, tuple(clusters), tuple(entries), conds)
    return Kept(made_from, data, remember(data, SHARD_TAG, value))


HEAD = dump_yaml({"apiVersion": OUTPUT_API_VERSION}).encode()


def _head(
    key: str,
    count: int,
    empty: frozenset[int],
    section: Mapping[str, Any] | None,
    conditions: PriorConditions | None,
    unnamed: dict[str, tuple[Condition, ...]],
) -> tuple[bytes, ShardedHead]:
    """The ShardedPlacementPrior document and its value (`unnamed`: the conditions' entries
    of the unselected names a PickFixed placement could not place, in their order)."""
    doc: dict[str, Any] = {"apiVersion": OUTPUT_API_VERSION, "kind": SHARDED_KIND}
    record, head_conds = None, None
    if section is not None:
        header = section.get("header")
        doc["index"] = {"header": header} if header is not None else {}
        record = IndexRecord(header, (), ())
    if conditions is not None:
        part: dict[str, Any] = {"placement": dump_conditions(conditions[0])}
        if unnamed:
            part["perCluster"] = [{"conditions": dump_conditions(c)} for c in unnamed.values()]
        doc["conditions"] = part
        head_conds = (conditions[0], unnamed)
    doc["metadata"] = {"name": key}
    doc["shards"] = {"count": count, **({"empty": sorted(empty)} if empty else {})}
    data = dump_yaml(doc).encode()
    return data, ShardedHead(key, count, empty, record, head_conds)


def remember_joined(key: str, head: ShardedHead, shards: list[PriorShard], prior: Any) -> None:
    """What `joined_prior` gives for these very documents (the pass that wrote them)."""
    _JOINED.put(key, (head, *shards), prior)

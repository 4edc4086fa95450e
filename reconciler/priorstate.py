"""`state/prior/<key>.yaml`: what a restarted hub needs of the previous output, in `state/`.

A pass reads back, for every placement, its rows of every cluster's ClusterIndex (the rollout
and the assembly keep or compare them) and the condition times of its status file. Parsing all
those files costs a restarted hub more than the pass itself at 1,000 clusters, so the pass also
writes one PlacementPrior a placement:

- `index`: the placement's ClusterIndex rows. A row that is exactly what the cluster's binding
  in `state/placements/<key>.yaml` implies (its snapshot indexes and content hash, with the
  placement's `header`: name, namespace, apply strategy) is just the cluster's name in
  `clusters`; any other row is written whole in `entries`.
- `conditions`: `status.conditions` of the placement's status file and each cluster's
  conditions, clusters with the same conditions grouped (`reconciler.priorconds`).

A placement bound to more than 100 clusters (`gitfleet.api.shards.shard_count` above one) has
its per-cluster parts (the `index` clusters and entries, the clusters' conditions) cut into
shards, `state/prior/<key>/<i>.yaml`, with the placement-level parts and the shard count in
`state/prior/<key>.yaml` (`reconciler.priorshards`): one cluster joining rewrites one shard.
`prior_files` writes them from the new output tree (its documents derived through
`reconciler.priorparse`: a pass does not parse what it wrote itself); `read_placement_prior` and
`implied_rows` read them back (either shape); from memory when the output holds the very files
the last pass wrote (`reconciler.ownprior`). A part or shard that is missing (an output
written before these files, or a row the record cannot hold) makes the readers parse the
index or status files as before.
A part's lists of cluster names and its kept entries are spliced in from kept texts
(`reconciler.yamlparts.Spliced`), the same bytes as emitting the part whole; the `index` part is
`reconciler.priorsection`'s (patched where a cluster's row or binding changed).
Called by `state`, `priorindex` and `statusdocs`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

import yaml

from gitfleet.api.indexrow import read_row
from gitfleet.api.output import (
    OUTPUT_API_VERSION,
    placement_prior_path,
    placement_status_path,
)
from gitfleet.api.shards import shard_count
from gitfleet.load.yamlemit import Pieces
from gitfleet.load.yamlio import dump_yaml
from reconciler.ownprior import OwnFiles
from reconciler.priorconds import (
    PriorConditions,
    conditions_section,
    parse_conditions_section,
    placement_conditions_of,
    status_of,
)
from reconciler.priorparse import blob_key, derive_own, freeze, remember, remember_at, shared
from reconciler.priorsection import BindingLike as BindingLike
from reconciler.priorsection import implied_row as implied_row
from reconciler.priorsection import index_section
from reconciler.priorshards import BLOCKS as _BLOCKS
from reconciler.priorshards import (
    SHARDED_KIND,
    Kept,
    ShardedHead,
    Written,
    joined_prior,
    parse_sharded_head,
    remember_joined,
    sharded_files,
)
from reconciler.priorshards import IndexRecord as IndexRecord
from reconciler.priorshards import PlacementPrior as PlacementPrior
from reconciler.priorshards import index_record as _index_record
from reconciler.priorshards import spliced_part as _spliced_part
from reconciler.stagememo import StageMemo

PRIOR_KIND = "PlacementPrior"
PRIOR_TAG = "placement-prior"
CONDITIONS_TAG = "placement-conditions"
READ_ERRORS = (yaml.YAMLError, AttributeError, KeyError, TypeError, ValueError)


def implied_rows(
    key: str, record: IndexRecord, bindings: Iterable[BindingLike]
) -> dict[str, dict[str, Any]]:
    """cluster -> ClusterIndex row of the placement. Raises KeyError/ValueError when the record
    names a cluster its bindings cannot explain (then the caller reads the index files)."""
    by_cluster = {b.cluster: b for b in bindings}
    rows: dict[str, dict[str, Any]] = {}
    for cluster in record.clusters:
        row = implied_row(key, record.header or {}, by_cluster[cluster])
        if row is None or record.header is None:
            raise ValueError(f"cluster {cluster}: its binding names no content")
        rows[cluster] = row
    for entry in record.entries:
        row = {k: v for k, v in entry.items() if k != "cluster"}
        rows[str(entry["cluster"])] = dict(sorted({**row, "key": key}.items()))
    return rows


def parse_placement_prior(doc: Any) -> PlacementPrior | ShardedHead:
    """Inverse of the documents `prior_files` writes at `state/prior/<key>.yaml` (the head
    alone of a sharded one). Raises KeyError/ValueError/TypeError."""
    if doc.get("kind") == SHARDED_KIND:
        return parse_sharded_head(doc)
    if doc.get("kind") != PRIOR_KIND:
        raise ValueError(f"kind: expected {PRIOR_KIND}")
    index = doc.get("index")
    record = _index_record(index) if isinstance(index, dict) else None
    conds = doc.get("conditions")
    conditions = parse_conditions_section(conds) if isinstance(conds, dict) else None
    return PlacementPrior(str(doc["metadata"]["name"]), record, conditions)


def read_placement_prior(output: Mapping[str, bytes], key: str) -> PlacementPrior | None:
    """The placement's record in the previous output, one file or sharded (None: absent or
    unreadable, or a shard missing or unreadable)."""
    own = _OWN.values(output)
    if own is not None and key in own:
        return own[key]  # the record the last pass wrote, in the very files it wrote
    path = placement_prior_path(key)
    if path not in output:
        return None
    try:
        found = derive_own(output, path, PRIOR_TAG, parse_placement_prior)
        return found if isinstance(found, PlacementPrior) else joined_prior(output, found)
    except READ_ERRORS:
        return None


def own_records(output: Mapping[str, bytes]) -> Mapping[str, PlacementPrior] | None:
    """Placement key -> record of every `state/prior/` record when `output` holds the very
    files the last pass wrote (`ownprior`: nothing is read), else None. Shared: read only."""
    return _OWN.values(output)


def status_conditions(output: Mapping[str, bytes], key: str) -> PriorConditions | None:
    """The prior conditions in the placement's status file (None: missing or unreadable)."""
    path = placement_status_path(key)
    if path not in output:
        return None
    try:
        return derive_own(
            output, path, CONDITIONS_TAG, lambda doc: placement_conditions_of(status_of(doc))
        )
    except READ_ERRORS:
        return None


def index_entries(doc: Any) -> dict[str, dict[str, Any]]:
    """placement key -> row of one parsed ClusterIndex, with the default apply strategy where
    the file leaves it out (`indexrow.read_row`). An older-shape (v1alpha1) row keeps its
    `objects` (shared: the same on every cluster that got the same file)."""
    out: dict[str, dict[str, Any]] = {}
    for entry in (doc or {}).get("placements") or []:
        entry = read_row(entry)
        objects = entry.get("objects")
        if isinstance(objects, list):
            entry = {**entry, "objects": [shared_object(o) for o in objects]}
        out[str(entry["key"])] = entry
    return out


def shared_object(obj: Any) -> Any:
    return shared(("object", freeze(obj)), lambda: obj)


MAX_KEPT = 20_000
_blocks: dict[tuple[str, str], tuple[Any, bytes]] = {}
"""(placement key, part) -> what the part's last YAML block was made from, and its bytes."""


def _block(
    key: str,
    part: str,
    made_from: Any,
    make: Callable[[], Any],
    pieces: Pieces | None = None,
    names: Callable[[int], str | None] | None = None,
) -> bytes:
    """The YAML of `{part: make()}`, serialised only when `made_from` differs from the last
    time. A top-level block mapping is its keys' blocks one after the other (sorted), so a
    document is the concatenation of its parts' blocks."""
    last = _blocks.get((key, part))
    if last is not None and last[0] == made_from:
        return last[1]
    if len(_blocks) >= MAX_KEPT:
        _blocks.clear()
    data = _spliced_part(part, make(), pieces or {}, names).encode()
    _blocks[(key, part)] = (made_from, data)
    return data


def _status_part(output: Mapping[str, bytes], key: str) -> tuple[str, PriorConditions] | None:
    """(status blob id, its prior conditions) of the placement's status file in `output`."""
    conditions = status_conditions(output, key)
    if conditions is None:
        return None
    return blob_key(output, placement_status_path(key)), conditions


def prior_files(
    placements: Mapping[str, Iterable[BindingLike]],
    rows: Mapping[str, Mapping[str, Mapping[str, Any]]] | None,
    output: Mapping[str, bytes],
) -> dict[str, bytes]:
    """`state/prior/<key>.yaml` for every placement (`placements`: key -> its bindings), from
    `rows` (placement key -> cluster -> ClusterIndex row of the new output; None when some row
    cannot be recorded: no `index` is written then) and the status files in `output`; above
    `2 * SHARD_TARGET` bindings with its shards (`reconciler.priorshards`). Each part is
    serialised only when what it is made from changed (the conditions: the status file's blob
    id; a shard: its clusters' names, rows and conditions)."""
    files: dict[str, bytes] = {}
    records: dict[str, PlacementPrior] = {}
    _BLOCKS.next_round()
    if rows is not None and not set(rows) <= set(placements):
        rows = None  # a row of a placement without state: only the index files hold it
    for key, bindings in sorted(placements.items()):
        found_rows = rows.get(key, {}) if rows is not None else None
        binds = tuple(bindings)
        inputs = (binds, found_rows, output.get(placement_status_path(key)))
        made = _PRIORS.get(key, inputs)
        if made is None:  # not the same bindings, rows and status file as last pass
            last = _PRIORS.last(key)
            kept = last[1][1] if last is not None else {}
            made = _placement_files(key, binds, rows, output, kept)
            _PRIORS.put(key, inputs, made)
            for path, data, tag, value in made[0]:
                remember_at(path, data, tag, value)
        for path, data, _, _ in made[0]:  # last pass's files were remembered then
            files[path] = data
        records[key] = made[2]
    _OWN.wrote(files, records)
    return files


def _placement_files(
    key: str,
    bindings: tuple[BindingLike, ...],
    rows: Mapping[str, Mapping[str, Mapping[str, Any]]] | None,
    output: Mapping[str, bytes],
    kept: Mapping[int, Kept],
) -> tuple[Written, dict[int, Kept], PlacementPrior]:
    """A placement's record: one file, or its head and shards (with the shards as kept), and
    what reading them gives."""
    status = _status_part(output, key)
    conditions = status[1] if status is not None else None
    section: dict[str, Any] | None = None
    names, pieces = None, Pieces()
    if rows is not None:
        section, names = index_section(key, rows.get(key, {}), bindings, pieces)
    record = _index_record(section) if section is not None else None
    prior = PlacementPrior(key, record, conditions)
    path = placement_prior_path(key)
    count = shard_count(len(bindings))
    if count == 1:
        parts = [HEAD]
        if status is not None:
            make = partial(conditions_section, status[1], key)
            parts.append(_block(key, "conditions", status[0], make))
        if section is not None:
            parts.append(_block(key, "index", section, partial(dict, section), pieces, names))
        parts += [_KIND, dump_yaml({"metadata": {"name": key}}).encode()]
        data = b"".join(parts)
        prior = remember(data, PRIOR_TAG, prior)
        return [(path, data, PRIOR_TAG, prior)], {}, prior
    shards, now, (data, head) = sharded_files(key, count, section, conditions, pieces, kept)
    head = remember(data, PRIOR_TAG, head)
    remember_joined(key, head, [value for *_, value in shards], prior)
    return [(path, data, PRIOR_TAG, head), *shards], now, prior


HEAD = dump_yaml({"apiVersion": OUTPUT_API_VERSION}).encode()
_KIND = dump_yaml({"kind": PRIOR_KIND}).encode()
_PRIORS: StageMemo[tuple[Written, dict[int, Kept], PlacementPrior]] = StageMemo()
"""Placement key -> its last `state/prior/` files (path, bytes, tag, value), shards and record,
with what they were made from."""
_OWN: OwnFiles[PlacementPrior] = OwnFiles()
"""The `state/prior/` files of the last pass, and placement key -> its record."""

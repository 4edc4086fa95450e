"""The previous output's cluster and placement indexes, as the pass reads them back.

`read_prior_index` gives cluster -> placement key -> index entry (the ClusterIndex row with the
placement's `objects` from its PlacementIndex). The rows come from `state/` when the previous
pass recorded them there (`reconciler.priorstate`: the placement states and their `state/prior/`
records, from memory when the output holds the very files the last pass wrote,
`state.own_states`), else from every cluster's index, each file parsed once per distinct
content (`reconciler.priorparse`); an older-shape (gitfleet.io/v1alpha1) cluster index that
lists the objects itself is read too, so the next pass migrates the branch. The PlacementIndex
files are read by blob id, once per distinct content. The index made from `state/` is patched
from the last one: only the clusters where some placement's rows changed get a new mapping
(`RowsIndex`, which also keeps each placement's rows for `rollmemo`), and a placement whose state
or record changed redoes only the clusters whose binding, name or entry changed (found where
the bindings and names differ by identity, `reconciler.shardpatch`). Called by `pass_`,
`assemble` and the rollout stage.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from gitfleet.api.canonical import placement_content_hash
from gitfleet.api.output import (
    INDEX_FILE,
    PLACEMENT_STATE_PREFIX,
    cluster_index_path,
    placement_index_path,
    split_cluster_path,
)
from reconciler.priorparse import derive_own, paths_under
from reconciler.priorstate import (
    READ_ERRORS,
    IndexRecord,
    PlacementPrior,
    implied_row,
    implied_rows,
    own_records,
    read_placement_prior,
    shared_object,
)
from reconciler.priorstate import index_entries as _index_entries
from reconciler.shardpatch import Keyed, changed_bindings, keyed, names_changed
from reconciler.stagememo import StageMemo, changed_keys
from reconciler.state import OVERRIDES_FILE, PlacementState, own_states, read_placement_state

PriorIndex = dict[str, dict[str, dict[str, Any]]]

INDEX_SUFFIX = "/" + INDEX_FILE


def given_content(entry: Mapping[str, Any] | None) -> str | None:
    """The content hash of a previous index entry: what that cluster's agent reports back."""
    if entry is None:
        return None
    recorded = entry.get("contentHash")
    if isinstance(recorded, str):
        return recorded
    return placement_content_hash(entry.get("objects") or [])


def read_prior_index(output: Mapping[str, bytes]) -> PriorIndex:
    """cluster -> placement key -> index entry (header and `objects`), from the previous output
    tree: the rows recorded in `state/`, or the cluster index and each placement's object index
    of the current contract, or an older-shape cluster index that lists the objects itself
    (read once, to migrate). Clusters without a row may be absent."""
    recorded = recorded_prior_index(output)
    return recorded if recorded is not None else parsed_prior_index(output)


def recorded_prior_index(output: Mapping[str, bytes]) -> PriorIndex | None:
    """`read_prior_index` from the placement states and their `state/prior/` records; None
    when any placement lacks a readable record of its rows (an older output). The result is
    shared: read it, never change it."""
    own = own_states(output)  # the last pass's own files: its states, nothing read
    priors = own_records(output) if own is not None else None
    if own is not None and priors is not None:
        found = _own_index(output, own, priors)
        if found is not _UNKNOWN:
            return found  # type: ignore[return-value]
    records = []
    for path in paths_under(output, PLACEMENT_STATE_PREFIX):
        try:
            ps = own[path] if own is not None else read_placement_state(output, path)
            prior = read_placement_prior(output, ps.key)
        except READ_ERRORS:
            return None
        if prior is None or prior.index is None:
            return None
        records.append((ps, prior))
    if not records:
        return None
    inputs = tuple(records)
    out = _INDEXES.get("", inputs)
    if out is None:
        out = _merged(output, records)
        if out is not None:
            _INDEXES.put("", inputs, out)
    if own is not None and priors is not None and isinstance(out, RowsIndex):
        states = {ps.key: ps for ps, _ in records}
        _OWN_INDEX.put("", (), (states, priors, out))  # the next pass patches it
    return out


_UNKNOWN = object()
_OWN_INDEX: StageMemo[tuple[dict[str, PlacementState], Mapping[str, PlacementPrior], RowsIndex]] = (
    StageMemo()
)
"""The last index made from the last pass's own files: its states and records by key."""


def _own_index(
    output: Mapping[str, bytes],
    own: Mapping[str, Any],
    priors: Mapping[str, PlacementPrior],
) -> PriorIndex | object | None:
    """`recorded_prior_index` from the last pass's own states (path -> state) and records
    (key -> record), patched from the last index made so: only the placements whose state or
    record is another object are looked at (`changed_keys`, in C). `_UNKNOWN` when this cannot
    be said so (another set of placements, a state without a record): the caller reads."""
    states = {ps.key: ps for path, ps in own.items() if path != OVERRIDES_FILE}
    last = _OWN_INDEX.last("")
    if last is None or last[1][0].keys() != states.keys() or not states.keys() <= priors.keys():
        return _UNKNOWN
    before, before_priors, out = last[1]
    changed = changed_keys(before, states)
    changed.update(k for k in changed_keys(before_priors, priors) if k in states)
    if changed:
        by_placement = dict(out.by_placement)
        for key in sorted(changed):
            if priors[key].index is None:
                return None
            try:
                by_placement[key] = _placement_rows(output, states[key], priors[key])
            except READ_ERRORS:
                return None
        patched = _patched(out, by_placement)
        out = patched if patched is not None else _full_merge(by_placement)
        _MERGE.put("", (), out)
    _OWN_INDEX.put("", (), (states, priors, out))
    return out


_INDEXES: StageMemo[PriorIndex] = StageMemo()
"""The last prior index, with the (state, record) pairs it was made from."""
_ROWS: StageMemo[_Rows] = StageMemo()
"""Placement key -> its implied rows and its rows with objects, with the (state, record) they
came from."""


class RowsIndex(dict[str, dict[str, dict[str, Any]]]):
    """A prior index merged from per-placement rows; `by_placement` keeps those rows (placement
    key -> cluster -> row, the very objects the index holds), so a reader of one placement's
    rows (`rollmemo`) can compare them by identity instead of walking every cluster."""

    by_placement: dict[str, dict[str, dict[str, Any]]]


_MERGE: StageMemo[RowsIndex] = StageMemo()
"""The last merged index (its `by_placement` rows are what the next merge starts from)."""
MAX_PATCHED = 0.5
"""Above this share of changed placements a merge starts afresh instead of patching."""


def _row_order(row: Mapping[str, Any]) -> tuple[Any, Any]:
    return (row.get("namespace", ""), row["name"])


def _merged(
    output: Mapping[str, bytes], records: list[tuple[PlacementState, PlacementPrior]]
) -> PriorIndex | None:
    """cluster -> key -> row of every record. Patched from the last merge when few
    placements' rows changed (`_patched`: the same index as a full merge, see its test)."""
    by_placement: dict[str, dict[str, dict[str, Any]]] = {}
    for ps, prior in records:
        try:
            by_placement[ps.key] = _placement_rows(output, ps, prior)
        except READ_ERRORS:
            return None
    last = _MERGE.last("")
    out = _patched(last[1], by_placement) if last is not None else None
    if out is None:
        out = _full_merge(by_placement)
    _MERGE.put("", (), out)
    return out


def _full_merge(by_placement: dict[str, dict[str, dict[str, Any]]]) -> RowsIndex:
    rows: dict[str, list[dict[str, Any]]] = {}
    for found in by_placement.values():
        for cluster, row in found.items():
            rows.setdefault(cluster, []).append(row)
    out = RowsIndex()
    for cluster in sorted(rows, key=cluster_index_path):  # the order of the index files
        ordered = sorted(rows[cluster], key=_row_order)
        out[cluster] = {str(row["key"]): row for row in ordered}
    out.by_placement = by_placement
    return out


def _patched(
    last: RowsIndex, by_placement: dict[str, dict[str, dict[str, Any]]]
) -> RowsIndex | None:
    """`_full_merge(by_placement)` made from `last` by redoing only the clusters where a
    placement's row changed (rows by identity, `changed_keys`: unchanged placements give the
    same objects, a changed one mostly the same rows); None when too much changed or a
    replaced row does not name its placement."""
    before = last.by_placement
    changed = [k for k, rows in by_placement.items() if before.get(k) is not rows]
    changed += [k for k in before if k not in by_placement]
    if len(changed) > MAX_PATCHED * max(len(by_placement), 1):
        return None
    touched: dict[str, list[str]] = {}
    for key in changed:
        old = before.get(key, {})
        for cluster in changed_keys(old, by_placement.get(key, {})):
            if cluster in old and str(old[cluster]["key"]) != key:
                return None
            touched.setdefault(cluster, []).append(key)
    out = RowsIndex(last)
    reorder = False
    for cluster, keys in touched.items():
        inner, resort = dict(out.get(cluster, {})), False
        for key in keys:
            row = by_placement.get(key, {}).get(cluster)
            if row is None:
                inner.pop(key, None)
                continue
            if str(row["key"]) != key:
                return None
            resort = resort or key not in inner
            inner[key] = row
        if resort:
            inner = {k: inner[k] for k in sorted(inner, key=lambda k: _row_order(inner[k]))}
        if not inner:
            out.pop(cluster, None)
            continue
        reorder = reorder or cluster not in out
        out[cluster] = inner
    if reorder:
        out = RowsIndex({c: out[c] for c in sorted(out, key=cluster_index_path)})
    out.by_placement = by_placement
    return out


@dataclass(frozen=True)
class _Rows:
    """A placement's rows as last made: from which bindings (by cluster) and record."""

    bindings: Keyed
    record: IndexRecord
    entries: dict[str, Mapping[str, Any]]
    implied: dict[str, dict[str, Any]]
    rows: dict[str, dict[str, Any]]


def _placement_rows(
    output: Mapping[str, bytes], ps: PlacementState, prior: PlacementPrior
) -> dict[str, dict[str, Any]]:
    """cluster -> the placement's row with its objects. The same state and record imply the
    same rows, and a row's content hash fixes its PlacementIndex (the pass writes both from one
    object list), so they are reused across passes; when the state or record changed (a
    cluster bound or unbound), only the clusters whose binding, record name or entry changed
    are looked at (`_patched_rows`), and one whose implied row is equal keeps its row object."""
    inputs = (ps, prior)
    found = _ROWS.get(ps.key, inputs)
    if found is not None:
        return found.rows
    assert prior.index is not None
    record = prior.index
    entries = {str(entry["cluster"]): entry for entry in record.entries}
    last = _ROWS.last(ps.key)
    before = last[1] if last is not None else None
    if before is not None and before.record.header == record.header:
        moved, bindings = changed_bindings(before.bindings, ps.bindings)
        changed = moved | changed_keys(before.entries, entries)
        changed |= names_changed(before.record.clusters, record.clusters)
        lookup = bindings.lookup()
        implied = _patched_implied(ps.key, record, lookup, entries, before.implied, changed)
    else:
        bindings = keyed(ps.bindings)
        implied, changed = implied_rows(ps.key, record, ps.bindings), None
    rows = _rows_with_objects(output, implied, before, changed)
    _ROWS.put(ps.key, inputs, _Rows(bindings, record, entries, implied, rows))
    return rows


def _patched_implied(
    key: str,
    record: IndexRecord,
    bindings: Mapping[str, Any],
    entries: Mapping[str, Mapping[str, Any]],
    implied_before: Mapping[str, dict[str, Any]],
    changed: set[str],
) -> dict[str, dict[str, Any]]:
    """`implied_rows(key, record, bindings)` made from the last one by redoing the `changed`
    clusters only (an entry wins over the cluster's name, as there). Raises as it does."""
    implied = dict(implied_before)
    named = set(record.clusters) & changed
    header = record.header or {}
    for cluster in sorted(changed):
        entry = entries.get(cluster)
        if entry is not None:
            row = {k: v for k, v in entry.items() if k != "cluster"}
            implied[cluster] = dict(sorted({**row, "key": key}.items()))
        elif cluster in named:
            made = implied_row(key, header, bindings[cluster])
            if made is None or record.header is None:
                raise ValueError(f"cluster {cluster}: its binding names no content")
            implied[cluster] = made
        else:
            implied.pop(cluster, None)
    return implied


def _rows_with_objects(
    output: Mapping[str, bytes],
    implied: Mapping[str, dict[str, Any]],
    before: _Rows | None,
    changed: set[str] | None,
) -> dict[str, dict[str, Any]]:
    """The implied rows with their objects: the last rows where the implied row is equal,
    looked at only for the `changed` clusters (None: all)."""
    implied_before, rows_before = (before.implied, before.rows) if before else ({}, {})
    if changed is None:
        rows: dict[str, dict[str, Any]] = {}
        looked: Any = implied
    else:
        rows = dict(rows_before)
        for cluster in changed:
            rows.pop(cluster, None)
        looked = [c for c in sorted(changed) if c in implied]
    for cluster in looked:
        row = implied[cluster]
        kept = rows_before.get(cluster)
        if kept is None or implied_before.get(cluster) != row:
            kept = _with_objects(output, cluster, row)
        rows[cluster] = kept
    return rows


def parsed_prior_index(output: Mapping[str, bytes]) -> PriorIndex:
    """`read_prior_index` from the cluster and placement index files."""
    out: PriorIndex = {}
    for path in output:
        if not path.endswith(INDEX_SUFFIX) or path.count("/") != 2:
            continue  # only clusters/<c>/index.yaml (the tree holds every object file too)
        where = split_cluster_path(path)
        if where is None or where.what != "cluster-index":
            continue
        try:
            headers = derive_own(output, path, "cluster-index", _index_entries)
        except (yaml.YAMLError, KeyError, TypeError, AttributeError):
            continue
        out[where.cluster] = {
            key: entry if "objects" in entry else _with_objects(output, where.cluster, entry)
            for key, entry in headers.items()
        }
    return out


def _with_objects(
    output: Mapping[str, bytes], cluster: str, header: dict[str, Any]
) -> dict[str, Any]:
    path = placement_index_path(cluster, str(header["key"]))
    try:
        objects = derive_own(output, path, "placement-index", placement_objects)
    except (yaml.YAMLError, KeyError, TypeError, AttributeError):
        objects = []
    return {**header, "objects": objects}


def placement_objects(doc: Any) -> list[Any]:
    objects = (doc or {}).get("objects")
    return [shared_object(o) for o in objects] if isinstance(objects, list) else []

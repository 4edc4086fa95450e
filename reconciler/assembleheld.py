"""The kept part of the assembly: files and index rows a placement keeps from the previous output.

A held placement (its inputs failed to load, or its work raised) keeps its previous entry and
files on every cluster; a rolling placement keeps them on the clusters its rollout has not
moved yet (`rollout_kept`: the previous entry with the apply strategy of now). During a rollout
that is most of a big placement's clusters, pass after pass, so both are remembered: a kept
cluster whose previous entry is the very object of the last pass (the prior index hands an
unchanged row as the same object) and whose apply strategy is equal keeps last pass's row
object, and a unit whose rows are all last pass's very objects keeps last pass's files, rows
mapping and sizes (the very objects: the index rows, the index files, the composition and the
size totals then skip it by identity, `reconciler.indexrows`, `reconciler.unitfiles`) once every
file is checked to be the very bytes object in the previous output (an identity check a file,
in C). A rolling placement's kept rows are listed with its live rows (`merge_rolling`), and a
cluster kept where it was laid out last pass keeps that very row (and its list), so a rollout
that moves some clusters and stops at others changes only their rows. Called by `assemble`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import compress
from operator import is_, not_
from typing import Any

from gitfleet.api.output import object_path
from reconciler.clustersizes import Parts
from reconciler.indexfiles import same_listing
from reconciler.indexrows import Rows
from reconciler.ownprior import same_files
from reconciler.placement import PlacementPlan
from reconciler.rollkept import frozen
from reconciler.schedule.clusters import ClusterView
from reconciler.stagememo import StageMemo, changed_keys
from reconciler.unitfiles import Units

PriorIndex = dict[str, dict[str, dict[str, Any]]]


def rollout_kept(
    plan: PlacementPlan,
    prior_index: PriorIndex,
    views: Mapping[str, ClusterView],
    laid: Rows | None = None,
) -> dict[str, dict[str, Any]]:
    """Clusters the rollout has not reached keep their previous entry (naming the previous
    snapshot) and files; only the apply strategy follows the placement at once (§2.2 step 1;
    External placements: the strategy recorded when a driver last moved the cluster). A
    cluster whose previous entry is last pass's very object and whose strategy is equal gets
    last pass's very row; else the row the placement had there last pass (`laid`: its rows of
    the last assembly) when it lists the same (`same_listing`: it then writes the same index
    files; a cluster the rollout stopped at keeps the very row it was laid out with)."""
    last = _ROWS.last(plan.key)
    before = last[1] if last is not None else {}
    out: dict[str, dict[str, Any]] = {}
    made: dict[str, tuple[dict[str, Any], Mapping[str, Any], dict[str, Any]]] = {}
    for cluster in kept_clusters(plan):
        entry = prior_index.get(cluster, {}).get(plan.key)
        if entry is None or cluster not in views:
            continue
        strategy = plan.apply_strategy_for(cluster)
        found = before.get(cluster)
        if found is not None and found[0] is entry and found[1] == strategy:
            made[cluster] = found
        else:
            row = {**entry, "applyStrategy": dict(strategy)}
            was = laid.get(cluster) if laid else None
            if was is not None and len(was) == 1 and same_listing(was[0], row):
                row = was[0]
            made[cluster] = (entry, strategy, row)
        out[cluster] = made[cluster][2]
    if made:
        _ROWS.put(plan.key, (), made)
    else:
        _ROWS.drop(plan.key)
    return out


_ROWS: StageMemo[dict[str, tuple[dict[str, Any], Mapping[str, Any], dict[str, Any]]]] = StageMemo()
"""Placement key -> cluster -> (the previous entry, the apply strategy, the kept row made of
them) of the last pass."""


def kept_clusters(plan: PlacementPlan) -> list[str]:
    """`plan.kept_clusters()`, remembered with everything it reads."""
    inputs = (plan.state, plan.target_index, frozen(plan.desired), dict(plan.moved_to))
    found = KEPT.get(plan.key, inputs)
    if found is None:
        found = plan.kept_clusters()
        KEPT.put(plan.key, inputs, found)
    return found


KEPT: StageMemo[list[str]] = StageMemo()
"""Placement key -> the clusters its rollout has not moved yet, with what they were read from."""


def held_entries(
    key: str, prior_index: PriorIndex, views: Mapping[str, ClusterView]
) -> dict[str, dict[str, Any]]:
    """The previous entry of placement `key` on every cluster that is still declared."""
    return {c: e[key] for c, e in prior_index.items() if key in e and c in views}


Kept = tuple[dict[str, list[dict[str, Any]]], dict[str, bytes], dict[str, int], bool]
"""A unit's index rows, files, bytes per cluster, and whether every object listed had a file."""


def write_held(
    held: Mapping[str, dict[str, dict[str, Any]]],
    output: Mapping[str, bytes],
    units: Units,
    parts: dict[str, Rows],
    sizes: Parts,
    unit: str = "held/",
) -> None:
    """Held placements keep exactly the files and index entries of the previous `output` (one
    unit per placement, named `unit` + its key, and its bytes per cluster in `sizes`; its
    index rows in `parts`): last pass's very objects when its rows are the very same and its
    files are the very bytes in `output`."""
    found = _UNITS.last(unit)
    before = found[1] if found is not None else {}
    now: dict[str, tuple[Mapping[str, dict[str, Any]], Kept]] = {}
    for key, per_cluster in sorted(held.items()):
        name = unit + key
        last = before.get(name)
        kept = last[1] if last is not None and _same(last, per_cluster, output) else None
        if kept is None:
            kept = _kept_files(key, per_cluster, output)
        now[name] = (per_cluster, kept)
        parts[name] = kept[0]
        if kept[1]:
            units[name] = kept[1]
            sizes[name] = kept[2]
    _UNITS.put(unit, (), now)


def _same(
    last: tuple[Mapping[str, dict[str, Any]], Kept],
    per_cluster: Mapping[str, dict[str, Any]],
    output: Mapping[str, bytes],
) -> bool:
    """Last pass's unit holds for `per_cluster`: the very rows, in the same order, every
    object listed had a file, and each file is the very bytes object of `output`."""
    before, (_, files, _, whole) = last
    return (
        whole
        and list(before) == list(per_cluster)
        and not changed_keys(before, per_cluster)
        and same_files(output, tuple(files), tuple(files.values()))
    )


def _kept_files(
    key: str, per_cluster: Mapping[str, dict[str, Any]], output: Mapping[str, bytes]
) -> Kept:
    rows = {cluster: [entry] for cluster, entry in per_cluster.items()}
    files: dict[str, bytes] = {}
    mine: dict[str, int] = {}
    whole = True
    for cluster, entry in per_cluster.items():
        for obj in entry.get("objects") or []:
            path = object_path(cluster, key, str(obj["file"]))
            if path in output:
                data = files[path] = output[path]
                mine[cluster] = mine.get(cluster, 0) + len(data)
            else:
                whole = False
    return rows, files, mine, whole


_UNITS: StageMemo[dict[str, tuple[Mapping[str, dict[str, Any]], Kept]]] = StageMemo()
"""Unit prefix (`held/`, `failed/`) -> each unit of the last pass: the rows per cluster it was
made from, and its rows, files and sizes."""


def merge_rolling(keys: list[str], parts: dict[str, Rows], laid: Mapping[str, Rows]) -> None:
    """A rolling placement's kept rows join its live rows under one name (`live/<key>`): a
    cluster the rollout moves, or stops at, changes its row in one mapping, and a row kept
    where it was laid out last pass is that very row (`rollout_kept`), so the joined rows and
    the index files skip it by identity. Rows of one placement on one cluster list the same
    whichever mapping holds them (the ClusterIndex orders rows by name); a cluster both kept and
    written (never made by the assembly) keeps two mappings. `laid`: last pass's `parts`."""
    merged_names = set()
    for key in keys:
        kept, live = parts.get("held/" + key), parts.get("live/" + key)
        if kept is None or live is None or kept.keys() & live.keys():
            continue
        del parts["held/" + key]
        merged_names.add("live/" + key)
        last = _MERGED.last(key)
        if last is not None and last[0][0] is kept and last[0][1] is live:
            parts["live/" + key] = last[1]
            continue
        merged = _same_lists({**kept, **live}, laid.get("live/" + key))
        _MERGED.put(key, (kept, live), merged)
        parts["live/" + key] = merged
    ended = _NAMES.last("")  # names merged last pass: a rollout that ended lays all out now
    for name in sorted(ended[1] - merged_names) if ended is not None else ():
        rows, before = parts.get(name), laid.get(name)
        if rows is not None and before is not None and rows is not before:
            parts[name] = _same_lists(rows, before)
    _NAMES.put("", (), frozenset(merged_names))


def _same_lists(rows: Rows, before: Rows | None) -> Rows:
    """`rows` with a cluster's list of last pass (`before`) where it holds the very rows (a
    cluster kept one pass and laid out the next, or the other way, has its very row in a new
    list): the joined rows compare the lists by identity. The clusters whose list is another
    object are found in C."""
    if not before:
        return rows
    out: dict[str, Sequence[dict[str, Any]]] | None = None
    clusters = list(rows)
    other = map(not_, map(is_, map(before.get, clusters), rows.values()))
    for cluster in compress(clusters, other):
        was, now = before.get(cluster), rows[cluster]
        if was is not None and len(was) == len(now) and all(map(is_, was, now)):
            if out is None:
                out = dict(rows)
            out[cluster] = was
    return rows if out is None else out


_PARTS: StageMemo[dict[str, Rows]] = StageMemo()
"""The index rows of each unit of the last assembly (`live/<key>`: the placement's rows, kept
ones included)."""
_MERGED: StageMemo[Rows] = StageMemo()
"""Placement key -> its kept and live rows of the last pass (the very mappings), merged."""
_NAMES: StageMemo[frozenset[str]] = StageMemo()
"""The names merged last pass."""


def last_parts() -> dict[str, Rows]:
    """The index rows of each unit of the last assembly (`remember_parts`)."""
    last = _PARTS.last("")
    return last[1] if last is not None else {}


def remember_parts(parts: dict[str, Rows]) -> None:
    _PARTS.put("", (), parts)

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
in C). Called by `assemble`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitfleet.api.output import object_path
from reconciler.clustersizes import Parts
from reconciler.indexrows import Rows
from reconciler.ownprior import same_files
from reconciler.placement import PlacementPlan
from reconciler.rollkept import frozen
from reconciler.schedule.clusters import ClusterView
from reconciler.stagememo import StageMemo, changed_keys
from reconciler.unitfiles import Units

PriorIndex = dict[str, dict[str, dict[str, Any]]]


def rollout_kept(
    plan: PlacementPlan, prior_index: PriorIndex, views: Mapping[str, ClusterView]
) -> dict[str, dict[str, Any]]:
    """Clusters the rollout has not reached keep their previous entry (naming the previous
    snapshot) and files; only the apply strategy follows the placement at once (§2.2 step 1;
    External placements: the strategy recorded when a driver last moved the cluster). A
    cluster whose previous entry is last pass's very object and whose strategy is equal gets
    last pass's very row."""
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
            made[cluster] = (entry, strategy, {**entry, "applyStrategy": dict(strategy)})
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

"""Per-cluster output: manifest files, each cluster's ClusterIndex and each placement's
PlacementIndex (`gitfleet.api.output`; a placement index is serialised once per distinct object
list, so clusters that get the same objects share its bytes).

Lays out what each placement wants on each bound cluster (a placement whose inputs changed on
some clusters only is patched there, `reconciler.layoutdiff`), keeps the previous files of held
placements (their inputs failed to load: nothing is pruned) and of the clusters a rollout has
not reached (`reconciler.assembleheld`: last pass's very units while unchanged), and resolves
two placements that produce the same object for one cluster: the placement that already owned
it keeps it, else the first by name; the other gets a WorkSynchronized failure naming both.
Called by `pass_`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitfleet.api.canonical import content_hash, placement_content_hash
from gitfleet.api.limits import DEFAULT_LIMITS, Limits
from gitfleet.api.output import cluster_dir, object_path
from reconciler.assembleheld import (
    held_entries,
    last_parts,
    merge_rolling,
    remember_parts,
    rollout_kept,
    write_held,
)
from reconciler.clustersizes import Parts, summed
from reconciler.conflicts import Claim, find_owners, ident_key
from reconciler.indexfiles import write_indexes
from reconciler.indexrows import Rows, joined_rows
from reconciler.isolate import hold
from reconciler.layoutcells import Checked, CleanLayouts, checked_once
from reconciler.layoutcells import next_round as next_check_round
from reconciler.layoutdiff import fixed_inputs, relaid
from reconciler.layoutdiff import forget as forget_layout
from reconciler.layoutdiff import remember as remember_layout
from reconciler.output import Since
from reconciler.outputguard import cluster_over_cap, clusters_over_cap, describe
from reconciler.placement import PlacementPlan
from reconciler.priorindex import read_prior_index
from reconciler.priorparse import parse_own, paths_under
from reconciler.rollkept import frozen
from reconciler.schedule.clusters import ClusterView
from reconciler.stagememo import StageMemo
from reconciler.state import PlacementState, State
from reconciler.unitfiles import Units, compose, drop_base, keep_base


def _live_entry(plan: PlacementPlan, index: int | None = None) -> dict[str, Any]:
    """The index entry header of a placement on a cluster (`index`: an older snapshot the
    cluster was moved to, else the placement's target)."""
    entry: dict[str, Any] = {"key": plan.key, "name": plan.name}
    if plan.namespace:
        entry["namespace"] = plan.namespace
    latest = plan.target()
    policy = plan.state.latest_policy()
    entry["resourceSnapshotIndex"] = index if index is not None else (latest.index if latest else 0)
    entry["policySnapshotIndex"] = policy.index if policy else 0
    entry["applyStrategy"] = dict(plan.apply_strategy)
    return entry


def _describe(identity: Mapping[str, str]) -> str:
    ns = identity.get("namespace")
    return f"{identity['kind']} {ns + '/' if ns else ''}{identity['name']}"


def _keep_failed(
    key: str,
    cluster: str,
    failed: tuple[tuple[str, str], ...],
    prior: State,
    prior_index: dict[str, dict[str, dict[str, Any]]],
    files: dict[str, bytes],
) -> list[dict[str, Any]]:
    """Objects whose overrides failed keep their previous file (never half-patched, never
    pruned because of an error); returns their previous index entries."""
    previous = {
        str(o.get("file")): o
        for o in prior_index.get(cluster, {}).get(key, {}).get("objects") or []
    }
    kept = []
    for name, _message in failed:
        path = object_path(cluster, key, name)
        if name in previous and path in prior.output:
            files[path] = prior.output[path]
            kept.append({**previous[name], "hash": content_hash(parse_own(prior.output[path]))})
    return kept


def _write_live(
    plans: Mapping[str, PlacementPlan],
    owners: Mapping[Claim, str],
    prior: State,
    prior_index: dict[str, dict[str, dict[str, Any]]],
    units: Units,
    parts: dict[str, Rows],
    limits: Limits,
    sizes: Parts,
) -> dict[tuple[str, str, str], list[str]]:
    """Files (one unit per placement, `live/<key>`) and index rows (`parts`) of placements that
    render now (their bytes per cluster in `sizes`, per unit); returns the conflicts lost. A placement
    whose layout raises is held instead (`reconciler.isolate`)."""
    lost: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for _, plan in sorted(plans.items()):
        if plan.held:
            continue
        inputs = () if owners else layout_inputs(plan, limits)  # conflicts: never reused
        found = _LAYOUTS.get(plan.key, inputs) if inputs else None
        fixed = fixed_inputs(plan, _live_entry(plan), limits) if inputs and not found else ()
        if found is None and inputs:  # only some clusters changed: patch last pass's layout
            found = relaid(plan, fixed, limits)
            if found is not None:
                _LAYOUTS.put(plan.key, inputs, found)
        if found is not None:
            if found[0]:
                units["live/" + plan.key] = found[0]
            parts["live/" + plan.key] = found[1]  # the very mapping of the last pass
            sizes["live/" + plan.key] = found[2]
            continue
        mine: dict[str, bytes] = {}
        entries: dict[str, list[dict[str, Any]]] = defaultdict(list)
        losses: dict[tuple[str, str, str], list[str]] = defaultdict(list)
        errors = len(plan.errors)
        layouts = CleanLayouts(plan.key)
        try:
            written: dict[str, int] = {}
            pure = _write_one(
                plan, owners, prior, prior_index, (mine, written), entries, losses, limits, layouts
            )
        except Exception as exc:  # one placement's fault fails it alone
            plan.sync_errors.clear()
            hold(plan, "laying out the files of", exc)
            forget_layout(plan.key)
            continue
        rows = dict(entries)
        if inputs and pure and len(plan.errors) == errors:
            _LAYOUTS.put(plan.key, inputs, (mine, rows, written))
            remember_layout(plan, fixed, layouts.laid, (mine, rows, written))
        else:
            _LAYOUTS.drop(plan.key)
            forget_layout(plan.key)
        if mine:
            units["live/" + plan.key] = mine
        sizes["live/" + plan.key] = written
        parts["live/" + plan.key] = rows
        for what, clusters in losses.items():
            lost[what] += clusters
    return lost


def _write_one(
    plan: PlacementPlan,
    owners: Mapping[Claim, str],
    prior: State,
    prior_index: dict[str, dict[str, dict[str, Any]]],
    out: tuple[dict[str, bytes], dict[str, int]],
    index: dict[str, list[dict[str, Any]]],
    lost: dict[tuple[str, str, str], list[str]],
    limits: Limits,
    layouts: CleanLayouts,
) -> bool:
    """Lays out one placement into `out` (its files, and their bytes per cluster); False when
    it kept previous files (its result then depends on the previous output, not only on the
    plan). `layouts`: the placement's clean layouts (`layouts.laid` after the call)."""
    key, base = plan.key, _live_entry(plan)
    files, sizes = out
    pure = True
    refused: dict[str, str] = {}
    checked: dict[int, Checked] = {}  # per distinct manifest tuple (shared by most clusters)
    for cluster in plan.written_clusters():
        older = plan.renders.get(plan.moved_to.get(cluster, -1))
        header = base if older is None else _live_entry(plan, older.index)
        objects = []
        custom = older.cluster(cluster) if older is not None else plan.cluster(cluster)
        mine = older.manifests_for(cluster) if older is not None else plan.manifests_for(cluster)
        if id(mine) not in checked:
            checked[id(mine)] = checked_once(mine, limits)
        ck = checked[id(mine)]
        prefix = object_path(cluster, key, "")
        strategy = dict(plan.apply_strategy_for(cluster))
        if ck.clean is not None and not owners and not custom.failures:
            row, paths, size = layouts.layout(cluster, mine, header, strategy, ck)
            files.update(zip(paths, [m.data for m in mine], strict=True))
            index[cluster].append(row)
            if paths:
                sizes[cluster] = size
            continue
        local: dict[str, bytes] = {}  # this cluster's files
        for m, problem in ck.rows(mine):
            if problem is not None:
                refused.setdefault(describe(m.identity), problem[0])
                if problem[1]:
                    pure = False
                    objects += _keep_failed(
                        key, cluster, ((m.file, problem[0]),), prior, prior_index, local
                    )
                continue
            winner = owners.get((cluster, ident_key(m.identity)), key) if owners else key
            if winner != key:
                what = _describe(m.identity)
                lost[(key, winner, what)].append(cluster)
                plan.sync_errors[cluster] = (
                    f"{what} is also placed by placement {winner} on this cluster"
                )
                continue
            local[prefix + m.file] = m.data
            objects.append(m.entry)
        failed = custom.failures
        if failed:
            pure = False
            objects += _keep_failed(key, cluster, failed, prior, prior_index, local)
        content = placement_content_hash(objects)
        entry = {**header, "applyStrategy": strategy, "contentHash": content, "objects": objects}
        index[cluster].append(entry)
        files.update(local)
        if local:
            sizes[cluster] = sum(map(len, local.values()))
    layouts.done()
    plan.errors += [("spec.resourceSelectors", f"{what}: {why}") for what, why in refused.items()]
    return pure


def _report_conflicts(
    plans: Mapping[str, PlacementPlan], lost: Mapping[tuple[str, str, str], list[str]]
) -> None:
    for (key, winner, what), clusters in sorted(lost.items()):
        names = ", ".join(sorted(clusters)[:5]) + (", ..." if len(clusters) > 5 else "")
        plans[key].errors.append(
            (
                "spec.resourceSelectors",
                f"conflict: {what} is also placed by placement {winner} on "
                f"{len(clusters)} cluster(s) ({names}); it stays with {winner}",
            )
        )


def assemble_clusters(
    plans: Mapping[str, PlacementPlan],
    kept: Mapping[str, PlacementState],
    prior: State,
    views: Mapping[str, ClusterView],
    prior_index: dict[str, dict[str, dict[str, Any]]] | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> AssembledClusters:
    """Every `clusters/...` file of the new output tree (`prior_index`: `read_prior_index` of
    the prior output, when the caller already has it). A cluster whose files would exceed
    `limits.maxRenderedBytesPerCluster` keeps its previous files (an error on each placement
    bound to it)."""
    next_check_round()
    held_keys = sorted({k for k, p in plans.items() if p.held} | set(kept))
    if prior_index is None:
        prior_index = read_prior_index(prior.output) if prior.output else {}
    held = {k: held_entries(k, prior_index, views) for k in held_keys}
    laid = last_parts()
    rolling = []
    for key, plan in plans.items():
        if not plan.held:
            kept_rows = rollout_kept(plan, prior_index, views, laid.get("live/" + key))
            if kept_rows:
                held[key] = kept_rows
                rolling.append(key)
    owners = find_owners(plans, held, prior_index)
    units: Units = {}  # disjoint parts of `clusters/`, in the order they were once written
    parts: dict[str, Rows] = {}  # each unit's index rows, in the order they are listed
    sizes: Parts = {}  # bytes per cluster of each unit, summed below
    write_held(held, prior.output, units, parts, sizes)
    lost = _write_live(plans, owners, prior, prior_index, units, parts, limits, sizes)
    _report_conflicts(plans, lost)
    failed = {k for k, p in plans.items() if p.held and k not in held}
    failed_entries = {k: held_entries(k, prior_index, views) for k in sorted(failed)}
    write_held(failed_entries, prior.output, units, parts, sizes, "failed/")
    merge_rolling(rolling, parts, laid)
    remember_parts(parts)
    index = joined_rows(parts)
    # Every declared cluster gets an index, even an empty one: an empty index tells its agent to
    # prune what it applied, while a missing index makes the agent keep its last state.
    clusters = sorted(set(index) | set(views))
    sizes["index"] = write_indexes(clusters, index, units)
    totals = summed(sizes)
    composed = compose(units)
    over = clusters_over_cap(clusters, totals, limits)
    if not over:
        keep_base(composed, units)
        return AssembledClusters(composed.files, clusters, composed.since)
    drop_base()  # the files differ from the units' union: never a base
    files = dict(composed.files)
    for cluster in over:
        _enforce_cap(cluster, totals.get(cluster, 0), files, prior, plans, limits)
    return AssembledClusters(files, clusters, None)


@dataclass(frozen=True)
class AssembledClusters:
    """Every `clusters/...` file (kept as the next pass's base: copy it, never change it), the
    clusters that have an index file among them, and (when known) the files of the last
    assembly with the paths that may differ from them (`unitfiles.Composed.since`)."""

    files: dict[str, bytes]
    indexed: list[str]
    since: Since = None


_LAYOUTS: StageMemo[tuple[dict[str, bytes], dict[str, list[dict[str, Any]]], dict[str, int]]] = (
    StageMemo()
)
"""Placement key -> its files, index rows and bytes per cluster, with what they were laid out
from."""


def layout_inputs(plan: PlacementPlan, limits: Limits) -> tuple[Any, ...]:
    """Everything `_write_one` reads of a plan, for `_LAYOUTS` (dicts copied, but a frozen
    one, `rollkept.frozen`: the very dict of the last pass, found by identity)."""
    return (
        plan.key,
        plan.name,
        plan.namespace,
        plan.state,
        plan.target_index,
        frozen(plan.desired),
        dict(plan.moved_to),
        plan.manifests,
        frozen(plan.per_cluster),
        dict(plan.renders),
        plan.apply_strategy,
        frozen(plan.cluster_apply_strategies),
        limits,
    )


def _enforce_cap(
    cluster: str,
    total: int,
    files: dict[str, bytes],
    prior: State,
    plans: Mapping[str, PlacementPlan],
    limits: Limits,
) -> None:
    problem = cluster_over_cap(total, cluster, limits)
    if problem is None:
        return
    prefix = cluster_dir(cluster)
    for path in [p for p in files if p.startswith(prefix)]:
        del files[path]
    files.update({p: prior.output[p] for p in paths_under(prior.output, prefix)})
    for plan in plans.values():
        if cluster in plan.bound_clusters():
            plan.errors.append(("", problem))

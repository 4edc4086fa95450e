"""One placement's files, index rows and bytes per cluster, patched from last pass's when only
some of its clusters changed.

`assemble._write_one` lays out every cluster a placement writes. A placement that `place`
recomputed because one cluster joined, left or was relabelled hands every other cluster the
very same inputs as last pass: the same manifest tuple (`rollmemo.same_manifests`), the same
override result (`manifestmemo`) and apply strategy, under an equal index header. `relaid`
finds the clusters whose inputs differ - clusters that started or stopped being written (set
difference), and clusters whose override result or apply strategy is another object - and
lays out those only, patching copies of last pass's rows and sizes; the placement's new files
unit names the paths it touched (`unitfiles.patched_unit`), so composing the output tree costs
those paths only. So adding one cluster lays out one cluster per placement that binds it.

Only a clean layout is patched: no conflict between placements, no cluster moved to an older
snapshot, every cluster's objects written as rendered (no refusal, no failed override). Anything
else is laid out in full, and `remember` keeps a full layout when it was clean. One entry per
placement (the last pass's), like every `StageMemo`. Called by `reconciler.assemble`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitfleet.api.limits import Limits
from reconciler.layoutcells import Layout, checked_once, clean_layout
from reconciler.manifests import ClusterManifests, Manifest
from reconciler.placement import PlacementPlan
from reconciler.stagememo import StageMemo
from reconciler.unitfiles import patched_unit

Rows = dict[str, list[dict[str, Any]]]
"""cluster -> the placement's index rows on it (one)."""


@dataclass(frozen=True)
class Laid:
    """A clean layout of one placement, with what it was made from."""

    fixed: tuple[Any, ...]
    """What every cluster's layout reads: the index header, the default manifests, the
    placement's apply strategy and the limits (`fixed_inputs`)."""
    custom: dict[str, ClusterManifests]
    """The plan's `per_cluster` (override results) it was made from."""
    strategies: dict[str, Mapping[str, Any]]
    """The plan's `cluster_apply_strategies` it was made from."""
    layouts: dict[str, Layout]
    """Every written cluster's layout (its row, paths and bytes)."""
    files: dict[str, bytes]
    rows: Rows
    sizes: dict[str, int]


_LAID: StageMemo[Laid] = StageMemo()
"""Placement key -> its last clean layout."""


def fixed_inputs(plan: PlacementPlan, header: Mapping[str, Any], limits: Limits) -> tuple[Any, ...]:
    """What every cluster's layout reads besides its own override result and apply strategy
    (`header`: the placement's index header, `assemble._live_entry`)."""
    return (dict(header), plan.manifests, dict(plan.apply_strategy), limits)


def remember(
    plan: PlacementPlan,
    fixed: tuple[Any, ...],
    layouts: Mapping[str, Layout],
    laid: tuple[dict[str, bytes], Rows, dict[str, int]],
) -> None:
    """Keep a full layout of `plan` (`layouts`: each written cluster's clean layout) as the
    base of the next pass's patch, when every written cluster was laid out clean."""
    files, rows, sizes = laid
    if plan.moved_to or len(layouts) != len(rows) or layouts.keys() != rows.keys():
        _LAID.drop(plan.key)
        return
    custom, strategies = dict(plan.per_cluster), dict(plan.cluster_apply_strategies)
    _LAID.put(plan.key, (), Laid(fixed, custom, strategies, dict(layouts), files, rows, sizes))


def _changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> set[str]:
    """Keys whose value is another object (or not equal, for plain values), added or gone."""
    out = {k for k, v in new.items() if k not in old or (old[k] is not v and old[k] != v)}
    out.update(old.keys() - new.keys())
    return out


def relaid(
    plan: PlacementPlan, fixed: tuple[Any, ...], limits: Limits
) -> tuple[dict[str, bytes], Rows, dict[str, int]] | None:
    """`plan`'s files, rows and bytes per cluster patched from its last clean layout, or None
    when it cannot be patched (lay it out in full then)."""
    last = _LAID.last(plan.key)
    if last is None or plan.moved_to:
        return None
    was = last[1]
    if was.fixed != fixed:
        return None
    clusters = plan.written_clusters()
    changed = _changed(was.custom, plan.per_cluster)
    changed |= _changed(was.strategies, plan.cluster_apply_strategies)
    changed |= was.layouts.keys() ^ set(clusters)
    header = fixed[0]
    made: dict[str, tuple[Layout, tuple[Manifest, ...]]] = {}
    for cluster in sorted(changed.intersection(clusters)):
        custom = plan.cluster(cluster)
        mine = plan.manifests_for(cluster)
        checked = checked_once(mine, limits)
        if checked.clean is None or custom.failures:
            return None  # refused objects or failed overrides: laid out in full
        strategy = dict(plan.apply_strategy_for(cluster))
        made[cluster] = (clean_layout(plan.key, cluster, mine, header, strategy, checked), mine)
    return _patch(plan, was, changed, made, fixed)


def _patch(
    plan: PlacementPlan,
    was: Laid,
    changed: set[str],
    made: dict[str, tuple[Layout, tuple[Manifest, ...]]],
    fixed: tuple[Any, ...],
) -> tuple[dict[str, bytes], Rows, dict[str, int]]:
    """`was` with the layouts of `changed` clusters replaced by `made` (with the manifests
    each was laid out from; gone when absent); the result is remembered as the next pass's
    base."""
    layouts, rows, sizes = dict(was.layouts), dict(was.rows), dict(was.sizes)
    changes: dict[str, bytes | None] = {}
    for cluster in sorted(changed):
        old = layouts.pop(cluster, None)
        if old is not None:
            changes.update(dict.fromkeys(old[1]))
            del rows[cluster]
            sizes.pop(cluster, None)
        new = made.get(cluster)
        if new is None:
            continue
        (row, paths, size), mine = new
        layouts[cluster] = new[0]
        changes.update(zip(paths, [m.data for m in mine], strict=True))
        rows[cluster] = [row]
        if paths:
            sizes[cluster] = size
    files = patched_unit(was.files, changes)
    custom, strategies = dict(plan.per_cluster), dict(plan.cluster_apply_strategies)
    _LAID.put(plan.key, (), Laid(fixed, custom, strategies, layouts, files, rows, sizes))
    return files, rows, sizes


def forget(key: str) -> None:
    """`key` was laid out unclean (or not at all): nothing to patch next pass."""
    _LAID.drop(key)

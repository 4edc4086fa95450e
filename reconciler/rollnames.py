"""The override snapshot names each cluster of a placement renders with, per renderable
snapshot index, as the drivers see them (`PlacementView.override_snapshots`).

The target's names come from the plan's override results at once (a dict per cluster). An
older snapshot still being rendered (`plan.renders`) asks its renderer once per cluster, which
matches every override's rules again; only a staged update reads those names (when it starts a
run or moves a cluster), so they are made on first read and kept: `OverrideNames` is a
`Mapping` that holds what it reads of the plan when made, so a later read gives what an
eager one would have. Called by `rollview.placement_view`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from itertools import repeat

from reconciler.history import SnapshotRender
from reconciler.manifests import NO_OVERRIDES
from reconciler.placement import PlacementPlan
from reconciler.rollout.model import UNSCHEDULED

Names = tuple[tuple[str, ...], tuple[str, ...]]
"""(ClusterResourceOverride, ResourceOverride) snapshot names."""
NO_NAMES: Names = (NO_OVERRIDES.cluster_overrides, NO_OVERRIDES.resource_overrides)


class OverrideNames(Mapping[int, Mapping[str, Names]]):
    """Snapshot index -> cluster -> its names; an older render's names made on first read."""

    def __init__(
        self,
        keys: list[int],
        made: dict[int, Mapping[str, Names]],
        renders: dict[int, SnapshotRender],
        clusters: list[str],
    ) -> None:
        self._keys = keys
        self._made = made
        self._renders = renders
        self._clusters = clusters
        self._lock = threading.Lock()

    def __getitem__(self, index: int) -> Mapping[str, Names]:
        found = self._made.get(index)
        if found is None:
            render = self._renders[index]  # KeyError: no such index
            with self._lock:
                found = self._made.get(index)
                if found is None:
                    found = self._made[index] = {c: render.names(c) for c in self._clusters}
        return found

    def __iter__(self) -> Iterator[int]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def override_names(plan: PlacementPlan) -> OverrideNames:
    """Per renderable index and selected cluster: the override snapshot names it renders with
    (an older render of the target's index wins; renders are read when a driver first asks
    for their index)."""
    clusters = [b.cluster for b in plan.state.bindings if b.state != UNSCHEDULED]
    keys: list[int] = []
    made: dict[int, Mapping[str, Names]] = {}
    latest = plan.target()
    if latest is not None:
        keys.append(latest.index)
    if latest is not None and latest.index not in plan.renders:
        # most clusters have no overrides: one shared pair of no names
        mine = {c: (m.cluster_overrides, m.resource_overrides) for c, m in plan.per_cluster.items()}
        names = map(mine.get, clusters, repeat(NO_NAMES))
        made[latest.index] = dict(zip(clusters, names, strict=True))
    keys += [i for i in plan.renders if i not in keys]
    return OverrideNames(keys, made, dict(plan.renders), clusters)

"""The override snapshot names each cluster of a placement renders with, per renderable
snapshot index, as the drivers see them (`PlacementView.override_snapshots`).

Only a staged update reads them (when it starts a run or moves a cluster), while every
re-observed placement gets a view: `OverrideNames` is a `Mapping` that keeps what it reads of
the plan when made (its bindings, override results and older renders) and makes an index's
names on first read - the target's from the plan's override results, an older snapshot's by
asking its renderer per cluster - so a later read gives what an eager one would have. Called
by `rollview.placement_view`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from itertools import repeat

from reconciler.history import SnapshotRender
from reconciler.manifests import NO_OVERRIDES, ClusterManifests
from reconciler.placement import PlacementPlan
from reconciler.rollout.model import UNSCHEDULED
from reconciler.state import Binding

Names = tuple[tuple[str, ...], tuple[str, ...]]
"""(ClusterResourceOverride, ResourceOverride) snapshot names."""
NO_NAMES: Names = (NO_OVERRIDES.cluster_overrides, NO_OVERRIDES.resource_overrides)


class OverrideNames(Mapping[int, Mapping[str, Names]]):
    """Snapshot index -> selected cluster -> its names, each index made on first read."""

    def __init__(
        self,
        target: int | None,
        bindings: tuple[Binding, ...],
        per_cluster: dict[str, ClusterManifests],
        renders: dict[int, SnapshotRender],
    ) -> None:
        self._target = target  # an older render of the target's index wins
        self._bindings = bindings
        self._per_cluster = per_cluster
        self._renders = renders
        self._keys = [target] if target is not None else []
        self._keys += [i for i in renders if i != target]
        self._made: dict[int, Mapping[str, Names]] = {}
        self._lock = threading.Lock()

    def __getitem__(self, index: int) -> Mapping[str, Names]:
        found = self._made.get(index)
        if found is None:
            if index not in self._renders and index != self._target:
                raise KeyError(index)
            with self._lock:
                found = self._made.get(index)
                if found is None:
                    found = self._made[index] = self._names(index)
        return found

    def _names(self, index: int) -> dict[str, Names]:
        clusters = [b.cluster for b in self._bindings if b.state != UNSCHEDULED]
        render = self._renders.get(index)
        if render is not None:
            return {c: render.names(c) for c in clusters}
        # most clusters have no overrides: one shared pair of no names
        mine = {
            c: (m.cluster_overrides, m.resource_overrides) for c, m in self._per_cluster.items()
        }
        return dict(zip(clusters, map(mine.get, clusters, repeat(NO_NAMES)), strict=True))

    def __iter__(self) -> Iterator[int]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def override_names(plan: PlacementPlan) -> OverrideNames:
    """Per renderable index and selected cluster: the override snapshot names it renders with
    (made when a driver first asks for an index)."""
    latest = plan.target()
    target = latest.index if latest is not None else None
    return OverrideNames(target, plan.state.bindings, dict(plan.per_cluster), dict(plan.renders))

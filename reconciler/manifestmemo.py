"""Reuse of a placement's per-cluster override results across passes, cluster by cluster.

`OverrideRenderer.for_cluster(selection, view)` reads of the cluster only its name and labels
(rule selectors and `${MEMBER-CLUSTER-*}` variables); everything else it reads is the placement's
selection, the overrides serving it with their snapshot names, the CRD scope table (envelopes)
and the patch-op limit. `RememberedRenderer` keeps each cluster's last result under those
placement-wide inputs and hands it back while the cluster's labels are unchanged, so a placement
recomputed because one cluster was added, removed or relabelled (or because its schedule moved)
re-applies overrides on that cluster only. Called by `placement.place`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.manifests import ClusterManifests, OverrideRenderer
from reconciler.override import PlacementOverrides
from reconciler.schedule.clusters import ClusterView
from reconciler.select import ResourceIndex, Selection
from reconciler.stagememo import StageMemo

Results = dict[str, tuple[Mapping[str, str], ClusterManifests]]
"""Cluster -> (its labels, its result)."""
_RESULTS: StageMemo[Results] = StageMemo()
"""Placement key -> every cluster's last result, with the placement-wide inputs they came from."""


class RememberedRenderer:
    """An `OverrideRenderer` that reuses last pass's result for a cluster whose labels and
    whose placement-wide inputs are unchanged."""

    def __init__(
        self,
        key: str,
        overrides: PlacementOverrides,
        selection: Selection,
        index: ResourceIndex,
        names: Mapping[str, str],
    ) -> None:
        self._renderer = OverrideRenderer(overrides, index, names)
        inputs = _inputs(overrides, selection, index, names)
        last = _RESULTS.last(key)
        self._before: Results = last[1] if last is not None and last[0] == inputs else {}
        self._now: Results = {}
        _RESULTS.put(key, inputs, self._now)  # filled cluster by cluster, each result whole

    def for_cluster(self, selection: Selection, view: ClusterView) -> ClusterManifests:
        labels = view.labels
        found = self._before.get(view.name)
        if found is not None and found[0] == labels:
            result = found[1]
        else:
            result = self._renderer.for_cluster(selection, view)
        self._now[view.name] = (labels, result)
        return result


def _inputs(
    overrides: PlacementOverrides,
    selection: Selection,
    index: ResourceIndex,
    names: Mapping[str, str],
) -> tuple[Any, ...]:
    """Everything but the cluster that `OverrideRenderer.for_cluster` reads."""
    serving = overrides.overrides
    return (
        selection.hash,
        selection.resources,
        tuple((o.key, o.hash, o.snapshot, o.origin) for o in serving),
        tuple(names.get(o.key) for o in serving),
        index.scopes.content,
        overrides.cache.max_ops,
    )

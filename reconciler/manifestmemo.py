"""Reuse of a placement's per-cluster override results across passes, cluster by cluster.

`OverrideRenderer.for_cluster(selection, view)` reads of the cluster only its name and labels
(rule selectors and `${MEMBER-CLUSTER-*}` variables); everything else it reads is the placement's
selection, the overrides serving it with their snapshot names, the CRD scope table (envelopes)
and the patch-op limit. `RememberedRenderer` keeps each cluster's last result under those
placement-wide inputs and hands it back while the cluster's labels are unchanged, so a placement
recomputed because one cluster was added, removed or relabelled (or because its schedule moved)
re-applies overrides on that cluster only. `all_clusters` does so for every targeted cluster
at once: when the same clusters are targeted as in the last run, none of whose results failed,
only the clusters whose labels are other objects than then (found in C: a long-running hub keeps
an unchanged MemberCluster, and so its labels) are looked at, and the others' results are last
run's very objects. Called by `placement.place`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import compress
from operator import attrgetter, is_, not_
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
Overridden = dict[str, ClusterManifests]
"""Cluster -> its result, for the clusters where overrides apply."""
Bulk = tuple[list[Mapping[str, str]], Overridden]
_BULK: StageMemo[Bulk] = StageMemo()
"""Placement key -> the labels of each cluster of its last `all_clusters` run (by the clusters
it looked at) and the results where overrides apply, when none failed (dropped as a run starts,
put when it ends: never the results of other inputs)."""
_LABELS = attrgetter("labels")
MAX_RELOOKED = 0.25
"""Above this share of clusters with other label objects, every cluster is looked at."""


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
        self._key, self._inputs = key, inputs
        _RESULTS.put(key, inputs, self._now)  # filled cluster by cluster, each result whole
        bulk = _BULK.last(key)
        _BULK.drop(key)
        self._bulk = bulk if bulk is not None and self._before else None

    def for_cluster(self, selection: Selection, view: ClusterView) -> ClusterManifests:
        labels = view.labels
        found = self._before.get(view.name)
        if found is None or (found[0] is not labels and found[0] != labels):
            found = (labels, self._renderer.for_cluster(selection, view))
        self._now[view.name] = found
        return found[1]

    def all_clusters(
        self, selection: Selection, views: Mapping[str, ClusterView], targeted: Sequence[str]
    ) -> tuple[Overridden, list[tuple[str, ClusterManifests]]]:
        """The results of the `targeted` clusters that are in `views` where overrides apply,
        in that order, and the (cluster, result) of those that failed."""
        names = [c for c in targeted if c in views]
        labels = list(map(_LABELS, map(views.__getitem__, names)))
        bulk, self._bulk = self._bulk, None
        if bulk is not None and bulk[0][0] == names:
            found = self._relooked(selection, views, names, labels, bulk[1])
            if found is not None:
                return found
        out: Overridden = {}
        failing = []
        for name in names:
            result = self.for_cluster(selection, views[name])
            if result.overridden:
                out[name] = result
            if result.faults or result.failures:
                failing.append((name, result))
        self._done(names, labels, out, failing)
        return out, failing

    def _relooked(
        self,
        selection: Selection,
        views: Mapping[str, ClusterView],
        names: list[str],
        labels: list[Mapping[str, str]],
        last: Bulk,
    ) -> tuple[Overridden, list[tuple[str, ClusterManifests]]] | None:
        """`all_clusters` from last run's results (the same clusters, none failed): only the
        clusters whose labels are other objects are looked at; None when too many are."""
        before, results = last
        changed = list(compress(names, map(not_, map(is_, before, labels))))
        if len(changed) > MAX_RELOOKED * len(names):
            return None
        self._now = self._before  # last run's results, changed below where needed
        _RESULTS.put(self._key, self._inputs, self._now)
        made = {name: self.for_cluster(selection, views[name]) for name in changed}
        failing = [(n, r) for n, r in made.items() if r.faults or r.failures]
        out = results
        if made:
            both = ((n, made.get(n) or results.get(n)) for n in names)
            out = {n: r for n, r in both if r is not None and r.overridden}
        self._done(names, labels, out, failing)
        return out, failing

    def _done(
        self,
        names: list[str],
        labels: list[Mapping[str, str]],
        out: Overridden,
        failing: list[tuple[str, ClusterManifests]],
    ) -> None:
        if not failing:
            _BULK.put(self._key, (names,), (labels, out))


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

"""`gitfleet plan`'s rollout lines (`gitfleet.service._waves`): which clusters a placement's
change reaches in its first wave, counted from the two passes' cluster indexes."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from gitfleet.api.output import cluster_index_path
from gitfleet.service import _waves


class _Plan:
    """The parts of a PlacementPlan `_waves` reads; counts the calls of `live_clusters`, which
    makes a new list each time."""

    def __init__(self, clusters: list[str], reached: int) -> None:
        self.clusters, self.calls = clusters, 0
        self.waits = {c: "waiting: maxUnavailable 25% reached" for c in clusters[reached:]}
        self.rolling = SimpleNamespace(max_unavailable="25%")
        self.rollout_note = None

    def bound_clusters(self) -> list[str]:
        return list(self.clusters)

    def live_clusters(self) -> list[str]:
        self.calls += 1
        return list(self.clusters)


def test_the_first_wave_is_counted_asking_for_the_live_clusters_once() -> None:
    clusters = [f"c-{i:04d}" for i in range(2000)]
    plan = _Plan(clusters, reached=500)
    before: dict[str, Any] = {cluster_index_path(c): b"old" for c in clusters}
    first = dict(before) | {cluster_index_path(c): b"new" for c in clusters[:500]}
    lines = _waves(
        SimpleNamespace(files=before),  # type: ignore[arg-type]
        SimpleNamespace(plans={"web": plan}, files=first),  # type: ignore[arg-type]
    )
    assert lines == ("web: wave 1: 500 of 2000 clusters (maxUnavailable 25%)",)
    assert plan.calls == 1

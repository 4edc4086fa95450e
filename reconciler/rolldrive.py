"""The rollout's drivers and evictions: between observing every placement's bindings and moving
them, each rollout driver (`reconciler.rollout.drivers`: staged update runs, cluster group
upgrades, ...) and the evictions (`reconciler.rollout.eviction`) read a `PlacementView` of every
placement and give back files, errors, updates of External placements, wakeups and trailers. A
driver that raises keeps its previous documents and becomes an error; the other drivers run.
Pure; called by `reconciler.rollstage.roll_out`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from gitfleet.load.model import FleetSnapshot
from reconciler.rollout.drivers import OUTPUTS, Driver
from reconciler.rollout.eviction import EvictionOutcome, process_evictions
from reconciler.rollout.guard import driver_fault, kept_under
from reconciler.rollout.model import DriverResult, PlacementView, RolloutInputs


class ClusterLabels(Mapping[str, Mapping[str, str]]):
    """Every declared cluster's labels as the drivers read them, each copied when first read:
    most passes have no staged run or cluster group upgrade, so none is."""

    def __init__(self, fleet: FleetSnapshot) -> None:
        self._clusters = fleet.clusters
        self._made: dict[str, dict[str, str]] = {}

    def __getitem__(self, name: str) -> Mapping[str, str]:
        found = self._made.get(name)
        if found is None:
            found = self._made[name] = dict(self._clusters[name].metadata.labels or {})
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._clusters)

    def __len__(self) -> int:
        return len(self._clusters)


@dataclass(frozen=True)
class Driven:
    """What the drivers (in their order) and the evictions decided this pass."""

    results: list[DriverResult]
    evicted: EvictionOutcome


def drive(
    drivers: Sequence[Driver],
    fleet: FleetSnapshot,
    views: Mapping[str, PlacementView],
    prior_output: Mapping[str, bytes],
    now: datetime,
) -> Driven:
    """Every driver's result, then the evictions', on the views of every placement."""
    inputs = RolloutInputs(placements=views, cluster_labels=ClusterLabels(fleet), now=now)
    results = _run_drivers(drivers, fleet, inputs, prior_output)
    return Driven(results, process_evictions(fleet, views, prior_output, now))


def _run_drivers(
    drivers: Sequence[Driver],
    fleet: FleetSnapshot,
    inputs: RolloutInputs,
    prior_output: Mapping[str, bytes],
) -> list[DriverResult]:
    """Every driver's result; a driver that raises (outside the per-run guard each driver keeps,
    `reconciler.rollout.guard`) keeps its previous documents and becomes an error."""
    results = []
    for driver in drivers:
        try:
            results.append(driver(fleet, inputs, prior_output))
        except Exception as exc:  # one driver's fault fails it alone
            name = getattr(driver, "__name__", type(driver).__name__)
            files = kept_under(prior_output, OUTPUTS.get(driver, ()))
            results.append(
                DriverResult(files=files, errors=(("", None, "", driver_fault(name, exc)),))
            )
    return results

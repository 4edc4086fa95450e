"""The external rollout drivers the pass calls: the hook External placements are moved through.

A driver is a pure callable `(fleet, inputs, prior_output) -> DriverResult`: it reads its own
objects from the `FleetSnapshot`, every placement after scheduling from `RolloutInputs`
(`PlacementView`s with KubeFleet's binding views) and its own previous documents from the prior
output tree, and returns `ExternalUpdate`s (which clusters of an External placement move to which
resource snapshot index now), its status/state files, errors, a wakeup time and commit trailers.
The pass (`reconciler.rollstage`) applies the updates, adds the files to the output tree, merges
wakeups and trailers, and turns errors into fleet errors.

Registered drivers, in call order: staged update runs (`(Cluster)StagedUpdateRun`, helper
`staged`) and cluster group upgrades (`ClusterGroupUpgrade`, helper `cgu`) register here by
adding their entry point to `DRIVERS`. Called by `reconciler.pass_`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from gitfleet.load.model import FleetSnapshot
from reconciler.rollout.cgu import drive_cluster_group_upgrades
from reconciler.rollout.model import DriverResult, RolloutInputs
from reconciler.rollout.staged import drive_staged_runs

Driver = Callable[[FleetSnapshot, RolloutInputs, Mapping[str, bytes]], DriverResult]

DRIVERS: tuple[Driver, ...] = (drive_staged_runs, drive_cluster_group_upgrades)
"""Every registered external driver, in call order."""

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
adding their entry point to `DRIVERS`, and the output folders they own to `OUTPUTS` (a driver
that fails outside any one run keeps them as they were, see `reconciler.rollout.guard`). Called by
`reconciler.pass_` and `reconciler.rollstage`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from gitfleet.load.model import FleetSnapshot
from reconciler.rollout.cgu import STATE_PREFIX, STATUS_PREFIX, drive_cluster_group_upgrades
from reconciler.rollout.model import DriverResult, RolloutInputs
from reconciler.rollout.staged import drive_staged_runs
from reconciler.rollout.stagedstatus import APPROVAL_PREFIX, RUN_STATUS_PREFIX

Driver = Callable[[FleetSnapshot, RolloutInputs, Mapping[str, bytes]], DriverResult]

DRIVERS: tuple[Driver, ...] = (drive_staged_runs, drive_cluster_group_upgrades)
"""Every registered external driver, in call order."""

OUTPUTS: Mapping[Driver, tuple[str, ...]] = {
    drive_staged_runs: (RUN_STATUS_PREFIX, APPROVAL_PREFIX),
    drive_cluster_group_upgrades: (STATE_PREFIX, STATUS_PREFIX),
}
"""The output folders each registered driver writes (its status and state documents)."""

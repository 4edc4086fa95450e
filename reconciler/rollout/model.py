"""The rollout stage's shared vocabulary: what a binding looks like to a rollout, and what an
external driver (a staged update run, a cluster group upgrade) asks of an External placement.

Every rollout driver is a pure function from these frozen values to frozen results:
- the rolling-update controller (spec/kubefleet.md §2) decides which `BindingView`s move to
  the placement's latest content this pass;
- staged update runs (§4) and ClusterGroupUpgrades (spec/cluster-group-upgrade.md) return
  `ExternalUpdate`s naming the clusters of an External placement to move now, and to which
  resource snapshot index;
- evictions (§5) read the same views to judge budgets.
`BindingView.failed`, `.diff_reported` and `.ready` are KubeFleet's definitions (§2.3), so every
driver judges a cluster the same way. Conditions here are the hub's view of the agent's report
for the content the hub gave that cluster (a report about other content never becomes one).
Called by `reconciler.rollout.*` and the pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from reconciler.once import OnceProperty
from reconciler.state import BindingCondition

SCHEDULED = "Scheduled"
BOUND = "Bound"
UNSCHEDULED = "Unscheduled"

# §2.3: a False condition with one of these reasons is "not yet", not "failed".
NOT_FAILED_REASONS = frozenset(
    {"OverriddenPending", "WorkNotSynchronizedYet", "ApplyPending", "ResourceNotAvailableYet"}
)
FAILURE_CONDITION_TYPES = ("Overridden", "WorkSynchronized", "Applied", "Available")
UNTRACKABLE_REASONS = frozenset({"NotAllWorkAreAvailabilityTrackable", "WorkNotTrackable"})


ObservedCondition = BindingCondition
"""One binding condition as the hub holds it: the same record the state keeps
(`reconciler.state.BindingCondition`; its time is the hub's own, never an agent's)."""


@dataclass(frozen=True)
class BindingView:
    """One cluster's binding of one placement, as every rollout driver sees it."""

    cluster: str
    state: str
    """Scheduled, Bound or Unscheduled (KubeFleet's binding states)."""
    resource_index: int | None = None
    """The resource snapshot index this cluster currently has (None: nothing rolled yet)."""
    content: str | None = None
    """Hash of the files the hub gave this cluster for this placement (None: nothing yet)."""
    desired_content: str | None = None
    """Hash of the files the cluster would get at the latest snapshot with today's overrides."""
    previous_state: str | None = None
    deleting: bool = False
    conditions: tuple[ObservedCondition, ...] = ()
    desired_resource_index: int | None = None
    """The latest resource snapshot index (None: compare content only)."""

    def condition(self, type_: str) -> ObservedCondition | None:
        return next((c for c in self.conditions if c.type == type_), None)

    @OnceProperty
    def failed(self) -> bool:
        """§2.3 HasBindingFailed: a failure condition False with a reason outside the list
        (computed once per view: the rollout stage reuses views across passes)."""
        return any(
            c.type in FAILURE_CONDITION_TYPES
            and c.status == "False"
            and c.reason not in NOT_FAILED_REASONS
            for c in self.conditions
        )

    @OnceProperty
    def diff_reported(self) -> bool:
        return self.condition("DiffReported") is not None

    @OnceProperty
    def up_to_date(self) -> bool:
        """The cluster already has exactly the content it should have now (and the latest
        snapshot index, when `desired_resource_index` is given); computed once per view."""
        wanted = self.desired_resource_index
        if wanted is not None and self.resource_index != wanted:
            return False
        return self.content is not None and self.content == self.desired_content

    def ready(self, now: datetime, unavailable_period: timedelta) -> tuple[bool, timedelta | None]:
        """§2.3 isBindingReady: (ready, time until it will be) — the wait is None when no timer
        can make it ready (it waits for a report instead)."""
        ready, since = self._readiness
        if ready or since is None:
            return ready, None
        due = since + unavailable_period
        if due <= now:
            return True, None
        return False, due - now

    @property
    def readiness(self) -> tuple[bool, datetime | None]:
        """What `ready` reads apart from the clock: (ready at any time, else since when its
        objects are available but untrackable, or None)."""
        return self._readiness

    @OnceProperty
    def _readiness(self) -> tuple[bool, datetime | None]:
        """(ready at any time, else since when its objects are available but untrackable:
        None when no timer can make it ready) - the part of `ready` the clock cannot change."""
        diff = self.condition("DiffReported")
        if diff is not None and diff.status == "True":
            return True, None
        available = self.condition("Available")
        if available is None or available.status != "True":
            return False, None
        if available.reason not in UNTRACKABLE_REASONS:
            return True, None
        return False, available.last_transition_time


@dataclass(frozen=True)
class ExternalUpdate:
    """What one external driver asks of one External placement this pass."""

    placement: str
    """The placement key (`<name>` or `<namespace>.<name>`)."""
    source: str
    """Who asks, for status and commit messages: `ClusterStagedUpdateRun/<name>`,
    `ClusterGroupUpgrade/<namespace>/<name>`."""
    clusters: Mapping[str, int] = field(default_factory=dict)
    """cluster -> resource snapshot index to roll to now."""
    delete: frozenset[str] = frozenset()
    """Clusters whose Unscheduled bindings may be removed now (their objects pruned)."""
    apply_strategy: Mapping[str, object] | None = None
    """The apply strategy the driver recorded (a staged run's `status.applyStrategy`)."""


@dataclass(frozen=True)
class Wait:
    """Why a cluster is not moving yet, in plain words, and when the hub should look again."""

    cluster: str
    message: str
    due: datetime | None = None


@dataclass(frozen=True)
class PlacementView:
    """One placement after scheduling, as an external driver sees it."""

    key: str
    kind: str
    """ClusterResourcePlacement or ResourcePlacement."""
    name: str
    namespace: str
    strategy_type: str
    """RollingUpdate or External."""
    placement_type: str
    """PickAll, PickN or PickFixed."""
    number_of_clusters: int | None
    cluster_names: tuple[str, ...]
    apply_strategy: Mapping[str, object]
    policy_index: int
    policy_fulfilled: bool
    """The latest policy snapshot's Scheduled condition is True (§4.2 step 2)."""
    latest_resource_index: int | None
    resource_indexes: tuple[int, ...]
    """Resource snapshot indexes still in the history (a run may deploy any of them)."""
    bindings: tuple[BindingView, ...]
    resource_commits: Mapping[int, str] = field(default_factory=dict)
    """Resource snapshot index -> the source commit recorded for it (where known)."""
    unavailable: Mapping[int, str] = field(default_factory=dict)
    """Older resource snapshot indexes that cannot be rendered from their recorded commit, and
    why (a complete sentence); a driver must not move clusters to them."""
    override_snapshots: Mapping[int, Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]] = field(
        default_factory=dict
    )
    """resource snapshot index -> cluster -> (ClusterResourceOverride, ResourceOverride)
    snapshot names that index is rendered with on that cluster now (the latest and every
    renderable older index; a staged run freezes them at initialization, §4.2 step 8)."""


@dataclass(frozen=True)
class RolloutInputs:
    """Everything a driver reads besides its own objects and its own previous state."""

    placements: Mapping[str, PlacementView]
    """By placement key."""
    cluster_labels: Mapping[str, Mapping[str, str]]
    """Every declared MemberCluster's labels (stage and batch selectors match these)."""
    now: datetime


@dataclass(frozen=True)
class DriverResult:
    """What one driver (all staged runs, or all cluster group upgrades) returns for a pass."""

    updates: tuple[ExternalUpdate, ...] = ()
    files: Mapping[str, bytes] = field(default_factory=dict)
    """Its status and state documents for the output tree (`status/updateruns/...`, ...)."""
    errors: tuple[tuple[str, int | None, str, str], ...] = ()
    """(file, line, field path, message) user errors about the driver's own objects."""
    wakeup: datetime | None = None
    """The earliest time a timer of this driver is due (the hub wakes up then)."""
    trailers: tuple[tuple[str, str], ...] = ()
    """Commit trailers for the output commit (e.g. `Gitfleet-Approved-By`)."""

"""KubeFleet-shaped placement status: per-cluster statuses and placement conditions (spec §8).

`cluster_status` builds one `perClusterPlacementStatuses` entry from a binding and what the pass
did for it; `placement_conditions` aggregates them in KubeFleet's order (Unknown before False,
types after the stopping point removed). Condition times come from the prior pass so that a
no-op pass writes identical bytes; equal conditions built under one pass clock are one object
(`timed`: a fleet's clusters mostly share theirs). Called by `reconciler.pass_`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, cast

from gitfleet.api import Condition
from gitfleet.api.conditions import format_time

Status = Literal["True", "False", "Unknown"]

TRUE, FALSE, UNKNOWN = "True", "False", "Unknown"
ROLLOUT_TYPES = ("RolloutStarted", "Overridden", "WorkSynchronized", "Applied", "Available")


@dataclass(frozen=True)
class Cond:
    """A condition before it is timed: type, status, reason, message."""

    type: str
    status: str
    reason: str
    message: str


# Per-cluster (binding) reasons and messages, spec §8.2.
_CLUSTER_TRUE = {
    "RolloutStarted": (
        "RolloutStarted",
        "Detected the new changes on the resources and started the rollout process",
    ),
    "Overridden": (
        "NoOverrideSpecified",
        "No override rules are configured for the selected resources",
    ),
    "WorkSynchronized": ("AllWorkSynced", "All of the works are synchronized to the latest"),
}
_CLUSTER_UNKNOWN = {
    "RolloutStarted": (
        "RolloutStartedUnknown",
        "In the process of deciding whether to roll out the latest resources or not",
    ),
    "Applied": ("ApplyPending", "The resources are pending to be applied by the member agent"),
    "Available": (
        "ResourceAvailableUnknown",
        "The availability of the resources is not reported yet",
    ),
    "DiffReported": (
        "DiffReportingPending",
        "The diff of the resources is pending to be reported by the member agent",
    ),
}
# Placement-level reasons per status, spec §8.2; messages take the cluster count.
_PLACEMENT = {
    ("RolloutStarted", TRUE): (
        "RolloutStarted",
        "All {n} cluster(s) start rolling out the latest resource",
    ),
    ("RolloutStarted", FALSE): (
        "RolloutNotStartedYet",
        "The rollout is being blocked by the rollout strategy in {n} cluster(s)",
    ),
    ("RolloutStarted", UNKNOWN): (
        "RolloutStartedUnknown",
        "There are still {n} cluster(s) in the process of deciding whether to roll out the latest resources or not",
    ),
    ("Overridden", TRUE): (
        "OverriddenSucceeded",
        "The selected resources are successfully overridden in {n} cluster(s)",
    ),
    ("Overridden", FALSE): ("OverriddenFailed", "Failed to override resources in {n} cluster(s)"),
    ("Overridden", UNKNOWN): (
        "OverriddenPending",
        "There are still {n} cluster(s) in the process of deciding whether to override the resources or not",
    ),
    ("WorkSynchronized", TRUE): (
        "WorkSynchronized",
        "Works(s) are succcesfully created or updated in {n} target cluster(s)' namespaces",
    ),
    ("WorkSynchronized", FALSE): (
        "WorkNotSynchronizedYet",
        "There are {n} cluster(s) which have not finished creating or updating work(s) yet",
    ),
    ("WorkSynchronized", UNKNOWN): (
        "WorkSynchronizedUnknown",
        "There are still {n} cluster(s) in the process of creating or updating work(s)",
    ),
    ("Applied", TRUE): (
        "ApplySucceeded",
        "The selected resources are successfully applied to {n} cluster(s)",
    ),
    ("Applied", FALSE): (
        "ApplyFailed",
        "Failed to apply resources to {n} cluster(s), please check the `failedPlacements` status",
    ),
    ("Applied", UNKNOWN): (
        "ApplyPending",
        "Works need to be applied in {n} cluster(s) or are pending to be applied",
    ),
    ("Available", TRUE): (
        "ResourceAvailable",
        "The selected resources in {n} cluster(s) are available now",
    ),
    ("Available", FALSE): (
        "ResourceNotAvailableYet",
        "The selected resources in {n} cluster(s) are still not available yet",
    ),
    ("DiffReported", TRUE): (
        "DiffReportingCompleted",
        "Diff reporting in {n} cluster(s) has been completed",
    ),
    ("DiffReported", FALSE): (
        "DiffReportingIncompleteOrFailed",
        "Diff reporting in {n} cluster(s) is incomplete or has failed",
    ),
    ("DiffReported", UNKNOWN): (
        "DiffReportingPending",
        "There are still {n} cluster(s) in the process of reporting diffs",
    ),
    ("Available", UNKNOWN): (
        "ResourceAvailableUnknown",
        "There are still {n} cluster(s) in the process of checking the availability of the resources",
    ),
}
NO_OVERRIDE = ("NoOverrideSpecified", "No override rules are configured for the selected resources")


def overridden_condition(overridden: bool, failure: str | None) -> Cond:
    """Per-cluster Overridden (spec §3.4.6): failed, succeeded, or no override applies."""
    if failure is not None:
        return Cond("Overridden", FALSE, "OverriddenFailed", failure)
    if overridden:
        return Cond(
            "Overridden",
            TRUE,
            "OverriddenSucceeded",
            "Successfully applied the override rules on the resources",
        )
    return Cond("Overridden", TRUE, *_CLUSTER_TRUE["Overridden"])


def cluster_rollout_conditions(
    on_latest: bool,
    sync_error: str | None,
    reported: Sequence[Cond] = (),
    report_diff: bool = False,
    overridden: Cond | None = None,
) -> list[Cond]:
    """The rollout conditions of one selected cluster (after Scheduled), stopping after the
    first one that is not True (spec §8.3). `reported` are the agent's Applied/Available (or
    DiffReported for ReportDiff placements) about the snapshot the cluster is bound to."""
    if not on_latest:
        reason, message = _CLUSTER_UNKNOWN["RolloutStarted"]
        return [Cond("RolloutStarted", UNKNOWN, reason, message)]
    override = overridden or overridden_condition(False, None)
    conds = [Cond("RolloutStarted", TRUE, *_CLUSTER_TRUE["RolloutStarted"]), override]
    if override.status != TRUE:
        return conds
    if sync_error is not None:
        return [*conds, Cond("WorkSynchronized", FALSE, "SyncWorkFailed", sync_error)]
    conds.append(Cond("WorkSynchronized", TRUE, *_CLUSTER_TRUE["WorkSynchronized"]))
    by_type = {c.type: c for c in reported}
    for ctype in ("DiffReported",) if report_diff else ("Applied", "Available"):
        cond = by_type.get(ctype) or Cond(ctype, UNKNOWN, *_CLUSTER_UNKNOWN[ctype])
        conds.append(cond)
        if cond.status != TRUE:
            break
    return conds


ALL_TYPES = (*ROLLOUT_TYPES, "DiffReported")
Summary = tuple[tuple[str | None, str | None], ...]
"""What the placement conditions read of one cluster's conditions: per type of `ALL_TYPES`,
the status of its first condition of that type (None: none) and, for Overridden, its reason."""


def condition_summary(conds: Sequence[Cond]) -> Summary:
    """`Summary` of one cluster's conditions (clusters with equal summaries count alike): the
    first condition of each type found in one walk (a fleet-wide edit summarises ~1,000
    clusters, a restart every cluster of every placement)."""
    first: dict[str, Cond] = {}
    for c in conds:
        first.setdefault(c.type, c)
    out = [_NONE] * len(ALL_TYPES)
    for i, ctype in enumerate(ALL_TYPES):
        found = first.get(ctype)
        if found is not None:
            out[i] = (found.status, found.reason if ctype == "Overridden" else None)
    return tuple(out)


_NONE: tuple[str | None, str | None] = (None, None)


def placement_conditions(
    prefix: str, scheduled: Cond, per_cluster: Sequence[Sequence[Cond]], report_diff: bool = False
) -> list[Cond]:
    """Placement-level conditions (spec §8.3): Scheduled, then each rollout type aggregated."""
    summaries = Counter(condition_summary(cl) for cl in per_cluster)
    return summarized_conditions(prefix, scheduled, summaries, report_diff)


def summarized_conditions(
    prefix: str, scheduled: Cond, summaries: Counter[Summary], report_diff: bool = False
) -> list[Cond]:
    """`placement_conditions` from how many clusters have each `condition_summary`."""
    conds = [Cond(prefix + scheduled.type, scheduled.status, scheduled.reason, scheduled.message)]
    clusters = summaries.total()
    if scheduled.status == UNKNOWN or not clusters:
        return conds
    types = (*ROLLOUT_TYPES[:3], "DiffReported") if report_diff else ROLLOUT_TYPES
    for ctype in types:
        j = ALL_TYPES.index(ctype)
        found = [(summary[j], n) for summary, n in summaries.items()]
        unknown = sum(n for (status, _), n in found if status is None or status == UNKNOWN)
        false = sum(n for (status, _), n in found if status == FALSE)
        status, count = (
            (UNKNOWN, unknown) if unknown else (FALSE, false) if false else (TRUE, clusters)
        )
        reason, message = _PLACEMENT[(ctype, status)]
        if (
            ctype == "Overridden"
            and status == TRUE
            and not any(reason == "OverriddenSucceeded" for (_, reason), _ in found)
        ):
            reason, message = NO_OVERRIDE
        conds.append(Cond(prefix + ctype, status, reason, message.format(n=count)))
        if status != TRUE:
            break
    return conds


def keeps_time(previous: Condition | None, c: Cond | Condition) -> bool:
    """`previous`'s transition time carries over to `c` (`set_condition`'s rule: the same
    status, reason and message, and a time to keep)."""
    return (
        previous is not None
        and previous.last_transition_time is not None
        and (previous.status, previous.reason, previous.message) == (c.status, c.reason, c.message)
    )


def timed(
    conds: Sequence[Cond], prior: Sequence[Condition], generation: int, now: datetime
) -> tuple[Condition, ...]:
    """Conditions with lastTransitionTime kept from `prior` unless status/reason/message changed
    (`keeps_time`), each condition built once."""
    out: tuple[Condition, ...] = ()
    prior_by_type = {c.type: c for c in prior}
    for c in conds:
        previous = prior_by_type.get(c.type)
        kept = keeps_time(previous, c)
        if kept and previous is not None and previous.observed_generation == generation:
            out += (previous,)  # exactly what it would build
            continue
        stamp = previous.last_transition_time if kept and previous is not None else None
        out += (_built(c, generation, stamp or stamp_of(now), now),)
    return out


def _built(c: Cond, generation: int, stamp: str, now: datetime) -> Condition:
    """The Condition of `c` at `generation` and `stamp`: one object for equal ones built under
    one pass clock (a fleet's clusters mostly share their conditions; only the ones that name
    the cluster differ), so a cold pass builds and holds a few per placement, not one per
    cluster (a Condition is frozen: sharing it is safe)."""
    key = (c.type, c.status, c.reason, c.message, generation, stamp)
    table = _BUILT[1] if _BUILT and _BUILT[0] == now else _new_table(now)
    found = table.get(key)
    if found is None:
        if len(table) >= _MAX_BUILT:
            table.clear()
        found = table[key] = Condition(
            type=c.type,
            status=cast(Status, c.status),
            reason=c.reason,
            message=c.message,
            observed_generation=generation,
            last_transition_time=stamp,
        )
    return found


def _new_table(now: datetime) -> dict[tuple[str, str, str, str, int, str], Condition]:
    table: dict[tuple[str, str, str, str, int, str], Condition] = {}
    _BUILT[:] = [now, table]
    return table


_BUILT: list[Any] = []
"""[the pass clock, (type, status, reason, message, generation, time) -> the Condition built
under it]: the last clock's only, so a running hub holds one pass's conditions at most."""
_MAX_BUILT = 1 << 20
_STAMP: list[tuple[datetime, str]] = []


def stamp_of(now: datetime) -> str:
    """`format_time(now)`, formatted once per pass clock (the last one is kept)."""
    last = _STAMP[-1] if _STAMP else None
    if last is not None and last[0] is now:
        return last[1]
    text = format_time(now)
    _STAMP[:] = [(now, text)]
    return text


def deleting_message(cluster: str, objects: int) -> str:
    """Why a removed cluster still counts for the rollout (a gitfleet addition)."""
    return (
        f"deleting: waiting for cluster {cluster} to remove {objects} "
        f"object{'' if objects == 1 else 's'}"
    )

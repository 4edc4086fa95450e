"""The mass-deletion guard: a source change that removes too much of a placement is held.

`Fleet.spec.deletionBudget` (an integer or a percentage, default 20%) bounds what one change
may remove from a placement: the objects it places on a cluster, or the clusters it reaches,
whichever is exceeded first. Deleting a placement removes all its objects from all its clusters.
Over the budget, the placement keeps its previous output and reports a `DeletionHeld`
condition with the counts, until a change approves it: a commit trailer
`Gitfleet-Allow-Deletion: <placement key>` (or `*`) on one of the change's new commits, or a
`DeletionApproval` the change adds or changes (the shell decides which are new; see
`FleetSnapshot.allowed_deletions`).

What is counted is the placement's intent, before and after: the objects it selected and the
clusters it targeted in the previous pass against this pass's. A rollout that then removes
clusters step by step is not counted again. Clusters that left the inventory (there is no
output left to keep for them) and clusters an eviction names (an explicit removal) are not
counted. Percentages round up (one object is never a mass
deletion), except that a percentage below 100% never allows removing all of them.
Pure; called by `reconciler.placement` and `reconciler.pass_`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime

import yaml

from gitfleet.api.conditions import Condition
from gitfleet.api.intstr import ceil_scale
from gitfleet.load.model import FleetSnapshot
from gitfleet.repo.branches import ALLOW_DELETION_TRAILER
from reconciler.output import yaml_bytes
from reconciler.priorparse import load_bounded
from reconciler.schedule.cycle import UNSCHEDULED
from reconciler.state import Binding, PlacementState
from reconciler.status import Cond, timed

ALL = "*"
TRAILER = ALLOW_DELETION_TRAILER
HELD_TRAILER = "Gitfleet-Deletion-Held"
CONDITION = "DeletionHeld"
REASON = "DeletionBudgetExceeded"


def allowed_removals(budget: int | str, total: int) -> int:
    """How many of `total` items one change may remove under `budget`."""
    if isinstance(budget, int):
        return budget
    if budget == "100%":
        return total
    return max(0, min(ceil_scale(budget, total), total - 1))


@dataclass(frozen=True)
class DeletionHold:
    """A placement's removal that exceeds the budget, with the counts."""

    key: str
    removed_objects: int
    total_objects: int
    removed_clusters: int
    total_clusters: int
    budget: int | str
    deleted: bool = False
    """The placement itself was deleted from the fleet repository."""

    def message(self) -> str:
        what = "deleting the placement" if self.deleted else "this change"
        allows_objects = allowed_removals(self.budget, self.total_objects)
        allows_clusters = allowed_removals(self.budget, self.total_clusters)
        return (
            f"{what} would remove {self.removed_objects} of {self.total_objects} object(s) on a "
            f"cluster and {self.removed_clusters} of {self.total_clusters} cluster(s); "
            f"deletionBudget {self.budget} allows {allows_objects} object(s) and "
            f"{allows_clusters} cluster(s). The previous output is kept until a commit carries "
            f"the trailer `{TRAILER}: {self.key}` or adds a DeletionApproval for it"
        )


def deletion_hold(
    key: str,
    budget: int | str,
    objects: tuple[Collection[str], Collection[str]],
    clusters: tuple[Collection[str], Collection[str]],
    deleted: bool = False,
) -> DeletionHold | None:
    """The hold for a placement going from `objects[0]` to `objects[1]` (resource ids) and from
    `clusters[0]` to `clusters[1]`; None when within the budget."""
    before_obj, after_obj = set(objects[0]), set(objects[1])
    before_cl, after_cl = set(clusters[0]), set(clusters[1])
    gone_obj, gone_cl = len(before_obj - after_obj), len(before_cl - after_cl)
    over_objects = gone_obj > allowed_removals(budget, len(before_obj)) and bool(before_cl)
    over_clusters = gone_cl > allowed_removals(budget, len(before_cl)) and bool(before_obj)
    if not (over_objects or over_clusters):
        return None
    return DeletionHold(key, gone_obj, len(before_obj), gone_cl, len(before_cl), budget, deleted)


def approved_keys(fleet: FleetSnapshot) -> frozenset[str]:
    """Placement keys (or `*`) whose held deletion this change approves."""
    if fleet.allowed_deletions is not None:
        return fleet.allowed_deletions
    return frozenset(p for a in fleet.deletion_approvals.values() for p in a.spec.placements)


def is_approved(approved: Collection[str], key: str) -> bool:
    return ALL in approved or key in approved


def targeted(bindings: Collection[Binding], clusters: Collection[str]) -> list[str]:
    """Clusters a placement's bindings target (Scheduled or Bound) that are still declared, in
    the bindings' order: every reader counts or sorts them, and a placement scheduled again
    after a cluster joined is checked with its ~500-1,000 names twice (sorting them took ~20 ms
    of an add-a-cluster pass under cProfile)."""
    return [b.cluster for b in bindings if b.state != UNSCHEDULED and b.cluster in clusters]


def deleted_holds(
    fleet: FleetSnapshot,
    prior: Mapping[str, PlacementState],
    present: Collection[str],
    clusters: Collection[str],
) -> dict[str, DeletionHold]:
    """Placements deleted from the fleet (not just unreadable) whose removal is over budget."""
    approved = approved_keys(fleet)
    budget = fleet.fleet.spec.deletion_budget
    out = {}
    for key, ps in sorted(prior.items()):
        if key in present or ps.origin_file in fleet.error_files or is_approved(approved, key):
            continue
        objects = ({rid for rid, _ in ps.selected}, ())
        hold = deletion_hold(key, budget, objects, (targeted(ps.bindings, clusters), ()), True)
        if hold is not None:
            out[key] = hold
    return out


def held_status_file(data: bytes | None, hold: DeletionHold, now: datetime) -> bytes | None:
    """A deleted placement's previous status file with a `DeletionHeld` condition (its time
    kept while the message stays the same)."""
    if data is None:
        return None
    try:
        doc = load_bounded(data)
        status = doc.setdefault("status", {})
        conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    except (yaml.YAMLError, AttributeError, TypeError, ValueError):
        return data
    previous = [Condition.model_validate(c) for c in conditions if c.get("type") == CONDITION]
    generation = int((doc.get("metadata") or {}).get("generation") or 0)
    cond = Cond(CONDITION, "True", REASON, hold.message())
    new = timed([cond], previous, generation, now)
    dumped = [c.model_dump(by_alias=True, exclude_none=True, mode="json") for c in new]
    status["conditions"] = [c for c in conditions if c.get("type") != CONDITION] + dumped
    return yaml_bytes(doc)

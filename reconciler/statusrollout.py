"""A selected cluster's conditions after Scheduled in its placement status entry (spec §8.3),
timed, dumped, summarized and written as JSON once per distinct set of them (`rollout`): a
fleet's clusters mostly share theirs, so a cold pass makes a few per placement, not one per
cluster; only the Scheduled condition, which names the cluster, is each cluster's own.
Conditions are dumped once per condition object (`dumped`). Called by `reconciler.statusentries`
(and `reconciler.statusdocs`: `report_diff`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from gitfleet.api import Condition
from gitfleet.api.canonical import canonical_json
from reconciler.manifests import ClusterManifests
from reconciler.placement import PlacementPlan
from reconciler.priorconds import dump_conditions
from reconciler.rollout.rolling import STALE_REASON
from reconciler.stagememo import IdentityMemo
from reconciler.state import Binding
from reconciler.status import (
    Cond,
    Summary,
    cluster_rollout_conditions,
    condition_summary,
    overridden_condition,
    timed,
)

BLOCKED_MESSAGE = "The rollout is being blocked by the rollout strategy"


def rollout_conds(
    plan: PlacementPlan,
    binding: Binding | None,
    on_latest: bool,
    custom: ClusterManifests,
    sync_error: str | None,
) -> tuple[Cond, ...]:
    """A selected cluster's conditions after Scheduled, untimed (spec §8.3)."""
    if not on_latest or binding is None:
        return (_not_started(plan, binding),)
    failure = "; ".join(m for _, m in custom.failures[:3]) or None
    return tuple(
        cluster_rollout_conditions(
            True,
            sync_error,
            _hub_reported(binding),
            report_diff(plan),
            overridden_condition(custom.overridden, failure),
        )
    )


class Rollout(NamedTuple):
    """A cluster's rollout conditions timed, their dumped dicts and their summary."""

    timed: tuple[Condition, ...]
    dumped: tuple[dict[str, Any], ...]
    summary: Summary
    text: str
    """The canonical JSON of the dumped dicts, each after a comma (`statusgroups.entry_text`)."""


def rollout(
    conds: tuple[Cond, ...], prior: tuple[Condition, ...], gen: int, now: datetime
) -> Rollout:
    """`Rollout` of `conds`, made once per distinct conditions, generation, clock and prior
    conditions read (`_ROLLOUTS`: a placement's clusters mostly share them; the prior ones
    too, `status.timed` keeps a condition object while it holds)."""
    read = _read(conds, prior)
    key = (conds, gen, now, tuple(map(id, read)))
    found = _ROLLOUTS.get(key)
    if found is None:
        timed_conds = timed(conds, prior, gen, now)
        summary = condition_summary(conds)
        if len(_SUMMARIES) >= 1024:  # a few dozen kinds in a fleet: never in practice
            _SUMMARIES.clear()
        summary = _SUMMARIES.setdefault(summary, summary)
        dicts = tuple(map(dumped, timed_conds))
        text = "".join(["," + dumped_json(c) for c in timed_conds])
        found = (Rollout(timed_conds, dicts, summary, text), read)
        if len(_ROLLOUTS) >= 4096:
            _ROLLOUTS.clear()
        _ROLLOUTS[key] = found
    return found[0]


def _read(conds: tuple[Cond, ...], prior: tuple[Condition, ...]) -> tuple[Condition | None, ...]:
    """The prior conditions `timed(conds, prior, ...)` reads: for each of `conds`, the last
    prior condition of its type (None: none)."""
    if not prior:
        return (None,) * len(conds)
    by_type = {c.type: c for c in prior}
    return tuple(map(by_type.get, [c.type for c in conds]))


_ROLLOUTS: dict[
    tuple[tuple[Cond, ...], int, datetime, tuple[int, ...]],
    tuple[Rollout, tuple[Condition | None, ...]],
] = {}
"""Untimed rollout conditions, generation, clock and the ids of the prior conditions read ->
their `Rollout`, with those prior conditions (held: their ids stay theirs while they key it);
cleared each pass (`next_round`)."""
_SUMMARIES: dict[Summary, Summary] = {}
"""Each distinct summary as one object, so that `_counted` counts them by identity."""


def dumped(cond: Condition) -> dict[str, Any]:
    """`dump_conditions` of one condition, made once per condition object (`_DUMPS`): the
    clusters of a placement mostly share their conditions (`status.timed`), and so their
    entries share these dicts (nothing changes an entry in place)."""
    return _dumps(cond).data


def dumped_json(cond: Condition) -> str:
    """The canonical JSON of `dumped(cond)`, made once per condition object likewise (an
    entry's grouping text is made from its conditions' texts: `statusentries`)."""
    found = _dumps(cond)
    if found.text is None:
        found.text = canonical_json(found.data)
    return found.text


class _Dumped:
    """A condition's dumped dict, and that dict's canonical JSON once asked for."""

    __slots__ = ("data", "text")

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.text: str | None = None


def _dumps(cond: Condition) -> _Dumped:
    found = _DUMPS.get(cond)
    if found is None:
        found = _Dumped(dump_conditions((cond,))[0])
        _DUMPS.put(cond, found)
    return found


_DUMPS: IdentityMemo[_Dumped] = IdentityMemo()
"""A condition -> its dumped dict (and JSON), for the last two passes (`next_round`)."""


def next_round() -> None:
    """Start a pass: what the last two passes did not use is dropped."""
    _DUMPS.next_round()
    _ROLLOUTS.clear()


def _not_started(plan: PlacementPlan, binding: Binding | None) -> Cond:
    """RolloutStarted of a selected cluster that does not have the latest content (§8.3)."""
    if plan.strategy_type == "External":
        return Cond(
            "RolloutStarted",
            "Unknown",
            "RolloutControlledByExternalController",
            "The rollout is controlled by an external controller (an update run)",
        )
    started = binding.condition("RolloutStarted") if binding is not None else None
    if started is not None and started.status == "False":
        return Cond("RolloutStarted", "False", STALE_REASON, BLOCKED_MESSAGE)
    return cluster_rollout_conditions(False, None)[0]


def _hub_reported(binding: Binding) -> list[Cond]:
    """The agent's conditions the hub recorded for exactly this binding's content."""
    return [
        Cond(c.type, c.status, c.reason, c.message)
        for c in binding.conditions
        if c.type in ("Applied", "Available", "DiffReported")
    ]


def report_diff(plan: PlacementPlan) -> bool:
    return plan.apply_strategy.get("type") == "ReportDiff"

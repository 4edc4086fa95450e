"""Turns one pass's object results into the `AgentReport`, and compares reports.

Per placement: KubeFleet's binding-level conditions (§8.2) — Applied (AllWorkHaveBeenApplied /
NotAllWorkHaveBeenApplied), then, only when applied, Available (AllWorkAreAvailable /
NotAllWorkAreAvailabilityTrackable / NotAllWorkAreAvailable); ReportDiff placements get only
DiffReported (AllWorkHaveDiffReported / NotAllWorkHaveDiffReported). failedPlacements,
driftedPlacements and diffedPlacements are sorted by identity and capped at 100; "first observed"
times and condition transition times carry over from the previous report while unchanged.
`report_changed` ignores heartbeat and observation times. Called by `gitfleet.agent.run`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from gitfleet.agent.apply import DIFF_REASONS, ObjectResult
from gitfleet.agent.builtin import group_of
from gitfleet.api import (
    AgentReport,
    Condition,
    DiffedResourcePlacement,
    DriftedResourcePlacement,
    FailedResourcePlacement,
    PlacementReport,
    find_condition,
    format_time,
    set_condition,
)
from gitfleet.api.output import IndexPlacement
from gitfleet.api.report import MAX_ENTRIES

_IGNORED = frozenset({"heartbeatTime", "observationTime"})


def placement_report(
    placement: IndexPlacement,
    results: Sequence[ObjectResult],
    previous: PlacementReport | None,
    now: datetime,
) -> PlacementReport:
    """The report entry of one placement from its objects' results."""
    stamp = format_time(now)
    conditions = carry_conditions(
        previous.conditions if previous else [], _conditions(placement, results), now
    )
    return PlacementReport(
        key=placement.key,
        name=placement.name,
        namespace=placement.namespace,
        resource_snapshot_index=placement.resource_snapshot_index,
        policy_snapshot_index=placement.policy_snapshot_index,
        content_hash=placement.content_hash,
        conditions=conditions,
        failed_placements=_capped(_failed(r) for r in results),
        drifted_placements=_capped(_drifted(r, previous, stamp) for r in results),
        diffed_placements=_capped(_diffed(r, previous, stamp) for r in results),
    )


def carry_conditions(
    old: Sequence[Condition], new: Iterable[Condition], now: datetime
) -> list[Condition]:
    """`new` with each lastTransitionTime kept from `old` when status, reason, message match."""
    out: list[Condition] = []
    for condition in new:
        prior = find_condition(old, condition.type)
        out.append(set_condition([prior] if prior else [], condition, now)[0])
    return out


def _conditions(placement: IndexPlacement, results: Sequence[ObjectResult]) -> list[Condition]:
    total = len(results)
    if placement.apply_strategy.type == "ReportDiff":
        bad = [r for r in results if r.reason not in DIFF_REASONS]
        if bad:
            message = f"Failed to report the diff of {len(bad)} of {total} object(s)"
            return [
                Condition(
                    type="DiffReported",
                    status="False",
                    reason="NotAllWorkHaveDiffReported",
                    message=message,
                )
            ]
        message = f"The diff of all {total} object(s) is reported"
        return [
            Condition(
                type="DiffReported",
                status="True",
                reason="AllWorkHaveDiffReported",
                message=message,
            )
        ]
    failed = [r for r in results if not r.applied]
    if failed:
        message = f"Failed to apply {len(failed)} of {total} object(s), please check the `failedPlacements` status"
        return [
            Condition(
                type="Applied", status="False", reason="NotAllWorkHaveBeenApplied", message=message
            )
        ]
    applied = Condition(
        type="Applied",
        status="True",
        reason="AllWorkHaveBeenApplied",
        message=f"All {total} object(s) are applied",
    )
    waiting = [r for r in results if r.availability == "NotYetAvailable"]
    if waiting:
        message = f"{len(waiting)} of {total} object(s) are not available yet, please check the `failedPlacements` status"
        return [
            applied,
            Condition(
                type="Available", status="False", reason="NotAllWorkAreAvailable", message=message
            ),
        ]
    untracked = [r for r in results if r.availability == "NotTrackable"]
    if untracked:
        message = f"All {total} object(s) are available; {len(untracked)} of them cannot be tracked"
        return [
            applied,
            Condition(
                type="Available",
                status="True",
                reason="NotAllWorkAreAvailabilityTrackable",
                message=message,
            ),
        ]
    message = f"All {total} object(s) are available"
    return [
        applied,
        Condition(type="Available", status="True", reason="AllWorkAreAvailable", message=message),
    ]


def _identity(result: ObjectResult) -> dict[str, Any]:
    entry = result.desired.entry
    version = entry.api_version.rsplit("/", 1)[-1]
    ident: dict[str, Any] = {
        "group": group_of(entry.api_version),
        "version": version,
        "kind": entry.kind,
        "name": entry.name,
    }
    if entry.namespace:
        ident["namespace"] = entry.namespace
    return ident


def _failed(result: ObjectResult) -> FailedResourcePlacement | None:
    if result.report_diff:
        if result.reason in DIFF_REASONS:
            return None
        cond = Condition(
            type="DiffReported", status="False", reason=result.reason, message=result.message
        )
    elif not result.applied:
        cond = Condition(
            type="Applied", status="False", reason=result.reason, message=result.message
        )
    elif result.availability == "NotYetAvailable":
        cond = Condition(
            type="Available",
            status="False",
            reason="ManifestNotAvailableYet",
            message=result.availability_message,
        )
    else:
        return None
    return FailedResourcePlacement(**_identity(result), condition=cond)


def _first_seen(
    previous: PlacementReport | None, result: ObjectResult, attr: str, stamp: str
) -> str:
    if previous is None:
        return stamp
    ident = _identity(result)
    for entry in getattr(previous, attr):
        if (
            entry.model_dump(
                by_alias=True,
                include={"group", "version", "kind", "name", "namespace"},
                exclude_none=True,
            )
            == ident
        ):
            field = (
                "first_drifted_observed_time"
                if attr == "drifted_placements"
                else "first_diffed_observed_time"
            )
            return str(getattr(entry, field))
    return stamp


def _drifted(
    result: ObjectResult, previous: PlacementReport | None, stamp: str
) -> DriftedResourcePlacement | None:
    if not result.drifts:
        return None
    return DriftedResourcePlacement(
        **_identity(result),
        observation_time=stamp,
        target_cluster_observed_generation=result.generation or 0,
        first_drifted_observed_time=_first_seen(previous, result, "drifted_placements", stamp),
        observed_drifts=list(result.drifts),
    )


def _diffed(
    result: ObjectResult, previous: PlacementReport | None, stamp: str
) -> DiffedResourcePlacement | None:
    if not result.diffs:
        return None
    return DiffedResourcePlacement(
        **_identity(result),
        observation_time=stamp,
        target_cluster_observed_generation=result.generation,
        first_diffed_observed_time=_first_seen(previous, result, "diffed_placements", stamp),
        observed_diffs=list(result.diffs),
    )


def _capped(items: Iterable[Any]) -> list[Any]:
    kept = [i for i in items if i is not None]
    kept.sort(key=lambda e: (e.group, e.version, e.kind, e.namespace or "", e.name))
    return kept[:MAX_ENTRIES]


def report_changed(old: AgentReport | None, new: AgentReport) -> bool:
    """Whether `new` says something `old` did not (heartbeat and observation times ignored)."""
    if old is None:
        return True
    return bool(_strip(old.dump()) != _strip(new.dump()))


def _strip(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _strip(v) for k, v in value.items() if k not in _IGNORED}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value

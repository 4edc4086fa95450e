"""One placement's unexpected failure is that placement's error, never the pass's.

Any exception raised while one placement is placed, laid out, or given its status and decision
files (a bug, or input no rule foresaw) is caught around that placement's work alone: the
placement keeps its previous output (nothing is pruned), gets a status condition naming its
file and the failed stage, and a `FleetError`; every other placement renders normally. The
message names the exception type and the innermost code location only — exception text can
carry input values, and those may be secret. Called by `reconciler.pass_`, `reconciler.assemble`,
`reconciler.statusdocs`, `reconciler.publish` and `reconciler.rollstage`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from gitfleet.api.errors import describe_exception
from reconciler.placement import AnyPlacement, PlacementPlan
from reconciler.state import PlacementState
from reconciler.status import Cond

REASON = "InternalError"


def internal_error(stage: str, exc: BaseException, file: str = "") -> str:
    """`internal error while <stage> (<file>): <Type> at <module>:<line> (<function>)`."""
    source = f" {file}" if file else ""
    return (
        f"internal error while {stage} placement{source}: {describe_exception(exc)}; "
        "it keeps its previous output"
    )


def hold(plan: PlacementPlan, stage: str, exc: BaseException) -> None:
    """Turn `plan` into a held plan that reports `exc` (stage = what was being done)."""
    message = internal_error(stage, exc, plan.state.origin_file or "")
    plan.held = True
    plan.errors.append(("", message))
    plan.scheduled = Cond("Scheduled", "Unknown", REASON, message)


def failed_plan(
    key: str, placement: AnyPlacement, prior: PlacementState, file: str, exc: BaseException
) -> PlacementPlan:
    """The plan of a placement whose `place` step raised: held on its prior state."""
    plan = PlacementPlan(key=key, state=prior, scheduled=Cond("Scheduled", "Unknown", REASON, ""))
    plan.name = placement.metadata.name
    plan.namespace = placement.metadata.namespace or ""
    plan.kind = placement.kind
    plan.state = replace(prior, origin_file=file) if file else prior
    try:
        declared = placement.model_dump(by_alias=True, exclude_none=True, mode="json")
        declared.pop("status", None)
        plan.declared = declared
    except Exception:  # the status then shows identity only
        plan.declared = {"apiVersion": placement.api_version, "kind": placement.kind}
    hold(plan, "computing", exc)
    return plan


def guarded(plan: PlacementPlan, stage: str, work: Callable[[], object]) -> bool:
    """Run one placement's `work`; on an exception hold the plan (see `hold`) and return False."""
    try:
        work()
    except Exception as exc:  # one placement's fault fails it alone
        hold(plan, stage, exc)
        return False
    return True

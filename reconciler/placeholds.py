"""Why a placement keeps its previous output instead of its new selection (`hold_reasons`):
objects it placed before are invalid now, files it selected from failed to load, or it selects
more objects than the per-placement limit; and `resource_id`, the version-independent identity
both this and the placement memo key objects by. Split out of `reconciler.placement` (which
re-exports `resource_id`); called by it.
"""

from __future__ import annotations

from gitfleet.load.model import Resource
from reconciler.select import SelectedResource, Selection
from reconciler.state import PlacementState


def resource_id(res: SelectedResource | Resource) -> str:
    """`group/kind/namespace/name` of a resource (version-independent)."""
    return f"{res.group}/{res.kind}/{res.namespace}/{res.name}"


def hold_reasons(
    selection: Selection, prior: PlacementState, broken: frozenset[str], max_objects: int
) -> list[str]:
    """Why this placement must keep its previous output instead of the new selection."""
    reasons = []
    before = {rid for rid, _ in prior.selected}
    invalid = sorted(
        {i.origin.file for i in selection.invalid if resource_id(i.resource) in before}
    )
    if invalid:
        # It placed these objects before and they are invalid now: keep the last good output.
        # Objects that were never placed are only reported (the index lists them as errors).
        reasons.append(
            f"keeps its previous output: selected objects are invalid in {', '.join(invalid)}"
        )
    now = {resource_id(s) for s in selection.resources}
    failed = sorted({f for rid, f in prior.selected if rid not in now and f in broken})
    if failed:
        files = ", ".join(failed)
        reasons.append(f"keeps its previous output: files it selected from failed to load: {files}")
    if len(selection.resources) > max_objects:
        reasons.append(
            f"keeps its previous output: selects {len(selection.resources)} objects, "
            f"more than the limit of {max_objects} per placement"
        )
    return reasons

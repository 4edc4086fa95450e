"""A ClusterIndex row as written and as read back: the apply strategy is left out when it is
the default, and every reader gets it back.

The default is `ApplyStrategy()`'s, the one definition the agent's model (`IndexPlacement`)
also defaults to, so a row without `applyStrategy` means the same to the agent, the hub's
prior-index readers and `gitfleet status`. An older row that spells the default out reads the
same. Called by `gitfleet.api.output` (`cluster_index_doc`), `reconciler.indexfiles` (writing)
and `reconciler.priorstate`, `gitfleet.outputread` (reading).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from gitfleet.api.placement import ApplyStrategy

APPLY_STRATEGY_FIELD = "applyStrategy"

DEFAULT_APPLY_STRATEGY: Mapping[str, Any] = ApplyStrategy().model_dump(
    by_alias=True, exclude_none=True, mode="json"
)
"""The default apply strategy as the hub holds it in a row (`model_dump` as the placement
stage makes `PlacementPlan.apply_strategy`): never changed, copied by `read_row`."""


def written_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """`row` as the ClusterIndex lists it: without its `objects` (they are in the
    PlacementIndex) and without an apply strategy equal to the default."""
    return {
        k: v
        for k, v in row.items()
        if k != "objects" and not (k == APPLY_STRATEGY_FIELD and v == DEFAULT_APPLY_STRATEGY)
    }


def read_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A ClusterIndex row as read: with the default apply strategy when it has none (keys in
    order, as the emitter writes them). A row that has one is returned as it is (the very
    object when it is a dict: parsed rows are shared and never changed)."""
    if APPLY_STRATEGY_FIELD in row:
        return row if isinstance(row, dict) else dict(row)
    full = {**row, APPLY_STRATEGY_FIELD: copy.deepcopy(dict(DEFAULT_APPLY_STRATEGY))}
    return dict(sorted(full.items()))

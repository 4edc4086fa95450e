"""The governance check of one placement after selection and scheduling.

`Governance` bundles the pass-wide inputs (tenants, deletion budget, approvals, evictions);
`check_placement` returns the tenant rules the placement breaks, else the deletion hold it
needs (None: it may render). Called by `reconciler.placement.place`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from reconciler.govern.deletion import DeletionHold, deletion_hold, is_approved, targeted
from reconciler.govern.tenancy import NO_TENANCY, Tenancy, placement_problems
from reconciler.state import Binding, PlacementState


@dataclass(frozen=True)
class Governance:
    """Pass-wide governance inputs."""

    tenancy: Tenancy = NO_TENANCY
    deletion_budget: int | str = "20%"
    allowed_deletions: frozenset[str] = frozenset()
    """Placement keys (or `*`) whose held deletion this change approves."""
    evicted: frozenset[tuple[str, str]] = field(default_factory=frozenset)
    """(placement key, cluster) of every eviction: an explicit removal the guard does not count."""


NO_GOVERNANCE = Governance()


def _resource_id(res: Any) -> str:
    """`group/kind/namespace/name`, as `reconciler.placement.resource_id` spells it."""
    return f"{res.group}/{res.kind}/{res.namespace}/{res.name}"


class Labelled(Protocol):
    """A declared cluster as `check_placement` reads it (a `ClusterView`)."""

    @property
    def labels(self) -> Mapping[str, str]: ...


class _LabelsOf(Mapping[str, Mapping[str, str]]):
    """Cluster name -> its labels, read from the declared clusters when asked (tenant rules
    read a few; nothing builds a dict of all of them per placement)."""

    def __init__(self, clusters: Mapping[str, Labelled]) -> None:
        self._clusters = clusters

    def __getitem__(self, name: str) -> Mapping[str, str]:
        return self._clusters[name].labels

    def __iter__(self) -> Iterator[str]:
        return iter(self._clusters)

    def __len__(self) -> int:
        return len(self._clusters)


def check_placement(
    rules: Governance,
    key: str,
    prior: PlacementState,
    selected: Sequence[Any],
    bindings: Collection[Binding],
    clusters: Mapping[str, Labelled],
) -> tuple[list[tuple[str, str]], DeletionHold | None]:
    """(tenant problems, deletion hold) of a placement selecting `selected` (its
    SelectedResources) with `bindings`; `clusters`: every declared cluster by name (only those
    these or the previous bindings name are read)."""
    now = targeted(bindings, clusters)
    problems = placement_problems(rules.tenancy, key, selected, now, _LabelsOf(clusters))
    if problems or is_approved(rules.allowed_deletions, key):
        return problems, None
    evicted = {c for k, c in rules.evicted if k == key}
    before = [c for c in targeted(prior.bindings, clusters) if c not in evicted]
    objects = ({rid for rid, _ in prior.selected}, {_resource_id(s) for s in selected})
    return [], deletion_hold(key, rules.deletion_budget, objects, (before, now))

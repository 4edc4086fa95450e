"""ClusterResourcePlacementEviction and ClusterResourcePlacementDisruptionBudget (§5.1).

An eviction names a placement and a cluster; a budget (named like its placement) limits
voluntary disruptions with either maxUnavailable or minAvailable. `check_budget_for_placement`
is KubeFleet's webhook rule that needs the placement (PickAll supports only an integer
minAvailable). `reconciler.rollout` processes evictions with these models.
"""

from __future__ import annotations

from typing import Any, Literal

from gitfleet.api.base import KubeModel, check_object_name
from gitfleet.api.errors import FieldIssue
from gitfleet.api.intstr import BUDGET_PERCENT_PATTERN, IntOrString, is_budget_value
from gitfleet.api.meta import KubeObject
from gitfleet.api.placement import ClusterResourcePlacement


class EvictionSpec(KubeModel):
    """Which placement to evict from which cluster."""

    placement_name: str
    cluster_name: str


class ClusterResourcePlacementEviction(KubeObject):
    """A request to remove a placement's resources from one cluster."""

    api_version: Literal[
        "placement.kubernetes-fleet.io/v1beta1", "placement.kubernetes-fleet.io/v1alpha1"
    ]
    kind: Literal["ClusterResourcePlacementEviction"]
    spec: EvictionSpec
    status: dict[str, Any] | None = None

    def validate_rules(self) -> list[FieldIssue]:
        """KubeFleet's eviction webhook rules; the name becomes a status file name."""
        issues = super().validate_rules() + check_object_name(self.name, file_name=True)
        for field, value, label in (
            ("spec.placementName", self.spec.placement_name, "cluster resource placement name"),
            ("spec.clusterName", self.spec.cluster_name, "cluster name"),
        ):
            if not value:
                issues.append(FieldIssue(field, f"{label} is required"))
            elif len(value) > 255:
                issues.append(FieldIssue(field, f"{label} {value[:64]}... is too long"))
        return issues


class PlacementDisruptionBudgetSpec(KubeModel):
    """At most one of maxUnavailable and minAvailable."""

    max_unavailable: IntOrString | None = None
    min_available: IntOrString | None = None


def _budget_value_issue(field: str, value: int | str | None) -> list[FieldIssue]:
    if value is None or is_budget_value(value):
        return []
    if isinstance(value, int):
        return [FieldIssue(field, "must be greater than or equal to 0")]
    return [FieldIssue(field, f"should match '{BUDGET_PERCENT_PATTERN}' or be an integer")]


class ClusterResourcePlacementDisruptionBudget(KubeObject):
    """Disruption budget of the placement with the same name."""

    api_version: Literal[
        "placement.kubernetes-fleet.io/v1beta1", "placement.kubernetes-fleet.io/v1alpha1"
    ]
    kind: Literal["ClusterResourcePlacementDisruptionBudget"]
    spec: PlacementDisruptionBudgetSpec
    status: dict[str, Any] | None = None

    def validate_rules(self) -> list[FieldIssue]:
        """Only one of the two fields; values are integers >= 0 or 0%..100%."""
        issues = super().validate_rules() + check_object_name(self.name, file_name=True)
        if self.spec.max_unavailable is not None and self.spec.min_available is not None:
            issues.append(
                FieldIssue("spec", "Both MaxUnavailable and MinAvailable cannot be specified")
            )
        issues += _budget_value_issue("spec.maxUnavailable", self.spec.max_unavailable)
        issues += _budget_value_issue("spec.minAvailable", self.spec.min_available)
        return issues


def check_budget_for_placement(
    budget: ClusterResourcePlacementDisruptionBudget, placement: ClusterResourcePlacement
) -> list[FieldIssue]:
    """KubeFleet's rule tying a budget to its placement (issues are on the budget)."""
    if placement.spec.placement_type != "PickAll":
        return []
    issues: list[FieldIssue] = []
    if budget.spec.max_unavailable is not None:
        issues.append(
            FieldIssue(
                "spec.maxUnavailable",
                "cluster resource placement policy type "
                "PickAll is not supported with any specified max unavailable "
                f"{budget.spec.max_unavailable}",
            )
        )
    if isinstance(budget.spec.min_available, str):
        issues.append(
            FieldIssue(
                "spec.minAvailable",
                "cluster resource placement policy type "
                "PickAll is not supported with min available as a percentage "
                f"{budget.spec.min_available}",
            )
        )
    return issues

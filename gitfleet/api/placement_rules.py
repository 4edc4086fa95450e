"""KubeFleet's admission-webhook rules for placement specs (§1.8, §1.3.4, §2.1, §6.1).

`validate_placement_spec` is called by `ClusterResourcePlacement.validate_rules` and
`ResourcePlacement.validate_rules`; messages are KubeFleet's (`pkg/utils/validator/placement.go`)
and every issue carries the camelCase field path it concerns. Differences: PickFixed cluster names
must be DNS-1123 labels (KubeFleet: subdomains of at most 63 characters) because gitfleet turns
them into directory names; resource-scope checks that need an API discovery (RESTMapper) are left
to resource selection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitfleet.api.base import prefix
from gitfleet.api.errors import FieldIssue
from gitfleet.api.intstr import ROLLOUT_PATTERN, IntOrStringError, ceil_scale, matches
from gitfleet.api.names import dns_label_message, is_dns1123_label
from gitfleet.api.taints import validate_tolerations

if TYPE_CHECKING:
    from gitfleet.api.placement import (
        ClusterAffinity,
        PlacementPolicy,
        PlacementSpec,
        ResourceSelectorTerm,
        RolloutStrategy,
    )

_REQUIRED = "affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution"


def validate_placement_spec(spec: PlacementSpec, *, cluster_scoped: bool) -> list[FieldIssue]:
    """All webhook rules of a CRP (cluster_scoped) or RP spec, paths rooted at `spec`."""
    issues: list[FieldIssue] = []
    for i, term in enumerate(spec.resource_selectors):
        issues += prefix(f"spec.resourceSelectors[{i}]", _selector_rules(term, cluster_scoped))
    if cluster_scoped and spec.status_reporting_scope == "NamespaceAccessible":
        namespaces = [t for t in spec.resource_selectors if t.kind == "Namespace"]
        if len(namespaces) != 1:
            issues.append(
                FieldIssue(
                    "spec.statusReportingScope",
                    "when statusReportingScope is NamespaceAccessible, exactly one "
                    "resourceSelector with kind 'Namespace' is required",
                )
            )
    issues += prefix("spec.policy", validate_policy(spec.policy))
    issues += prefix("spec.strategy", validate_strategy(spec.strategy))
    return issues


def _selector_rules(term: ResourceSelectorTerm, cluster_scoped: bool) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    if term.label_selector is not None:
        if term.name:
            issues.append(
                FieldIssue(
                    "",
                    "the labelSelector and name fields are mutually exclusive in selector "
                    + term.go_repr(),
                )
            )
        issues += prefix("labelSelector", term.label_selector.validate_rules())
    if not cluster_scoped and term.is_namespace():
        issues.append(
            FieldIssue(
                "kind",
                "the resource is not found in schema (please retry) or it is a cluster "
                "scoped resource: /v1, Kind=Namespace",
            )
        )
    return issues


def validate_policy(policy: PlacementPolicy) -> list[FieldIssue]:
    """Rules per placement type; paths relative to `spec.policy`."""
    if policy.placement_type == "PickFixed":
        return _pick_fixed(policy)
    issues = _not_pick_fixed(policy)
    affinity = policy.cluster_affinity()
    if affinity is not None:
        issues += _cluster_affinity(affinity, policy.placement_type == "PickAll")
    topology = policy.topology_spread_constraints or []
    if policy.placement_type == "PickAll" and topology:
        issues.append(
            FieldIssue(
                "topologySpreadConstraints",
                "topology spread constraints needs to be empty for "
                "policy type PickAll, only valid for PickN policy type",
            )
        )
    issues += prefix("tolerations", validate_tolerations(policy.tolerations or []))
    return issues


def _pick_fixed(policy: PlacementPolicy) -> list[FieldIssue]:
    names = policy.cluster_names or []
    issues: list[FieldIssue] = []
    if not names:
        issues.append(
            FieldIssue("clusterNames", "cluster names cannot be empty for policy type PickFixed")
        )
    seen: set[str] = set()
    for i, name in enumerate(names):
        if is_dns1123_label(name):
            issues.append(FieldIssue(f"clusterNames[{i}]", dns_label_message(name)))
        if name in seen:
            issues.append(
                FieldIssue(
                    f"clusterNames[{i}]", "cluster names must be unique for policy type PickFixed"
                )
            )
        seen.add(name)
    forbidden = [
        (
            policy.number_of_clusters is not None,
            "numberOfClusters",
            "number of clusters must be "
            "nil for policy type PickFixed, only valid for PickN placement policy type",
        ),
        (
            policy.affinity is not None,
            "affinity",
            "affinity must be nil for policy type "
            "PickFixed, only valid for PickAll/PickN placement policy types",
        ),
        (
            bool(policy.topology_spread_constraints),
            "topologySpreadConstraints",
            "topology spread "
            "constraints needs to be empty for policy type PickFixed, only valid for PickN policy "
            "type",
        ),
        (
            policy.tolerations is not None,
            "tolerations",
            "tolerations needs to be empty for policy type PickFixed, only valid for PickAll/PickN",
        ),
    ]
    return issues + [FieldIssue(field, msg) for bad, field, msg in forbidden if bad]


def _not_pick_fixed(policy: PlacementPolicy) -> list[FieldIssue]:
    kind = policy.placement_type
    issues: list[FieldIssue] = []
    if policy.cluster_names:
        issues.append(
            FieldIssue(
                "clusterNames",
                f"cluster names needs to be empty for policy "
                f"type {kind}, only valid for PickFixed policy type",
            )
        )
    count = policy.number_of_clusters
    if kind == "PickAll" and count is not None:
        issues.append(
            FieldIssue(
                "numberOfClusters",
                "number of clusters must be nil for policy "
                "type PickAll, only valid for PickN placement policy type",
            )
        )
    if kind == "PickN" and count is None:
        issues.append(
            FieldIssue("numberOfClusters", "number of cluster cannot be nil for policy type PickN")
        )
    if kind == "PickN" and count is not None and count < 0:
        issues.append(
            FieldIssue(
                "numberOfClusters", f"number of clusters cannot be {count} for policy type PickN"
            )
        )
    return issues


def _cluster_affinity(affinity: ClusterAffinity, pick_all: bool) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    required = affinity.required_during_scheduling_ignored_during_execution
    for i, term in enumerate(required.cluster_selector_terms if required else []):
        where = f"{_REQUIRED}.clusterSelectorTerms[{i}]"
        if term.label_selector is not None:
            issues += prefix(f"{where}.labelSelector", term.label_selector.validate_rules())
        if term.property_sorter is not None:
            issues.append(
                FieldIssue(
                    f"{where}.propertySorter",
                    "PropertySorter is not allowed "
                    "for RequiredDuringSchedulingIgnoredDuringExecution affinity",
                )
            )
        if term.property_selector is not None:
            issues += prefix(f"{where}.propertySelector", term.property_selector.validate_rules())
    preferred = affinity.preferred_during_scheduling_ignored_during_execution or []
    if pick_all and preferred:
        message = (
            "PreferredDuringSchedulingIgnoredDuringExecution "
            "will be ignored for placement policy type PickAll"
        )
        return [*issues, FieldIssue(_PREFERRED, message)]
    for i, pref in enumerate(preferred):
        where = f"{_PREFERRED}[{i}].preference"
        term = pref.preference
        if term.label_selector is not None:
            issues += prefix(f"{where}.labelSelector", term.label_selector.validate_rules())
        if term.property_selector is not None:
            issues.append(
                FieldIssue(
                    f"{where}.propertySelector",
                    "PropertySelector is not "
                    "allowed for PreferredDuringSchedulingIgnoredDuringExecution "
                    "affinity",
                )
            )
        if term.property_sorter is not None:
            issues += prefix(f"{where}.propertySorter", term.property_sorter.validate_rules())
    return issues


def _intstr_rules(field: str, value: int | str) -> list[FieldIssue]:
    """CRD pattern plus the webhook's GetScaledValueFromIntOrPercent check."""
    if isinstance(value, str) and not matches(ROLLOUT_PATTERN, value):
        return [FieldIssue(field, f"should match '{ROLLOUT_PATTERN}'")]
    try:
        scaled = ceil_scale(value, 10)
    except IntOrStringError as exc:
        return [FieldIssue(field, f'{field} "{value}" is invalid: {exc}')]
    if scaled < 0:
        return [FieldIssue(field, f"{field} must be greater than or equal to 0, got `{value}`")]
    return []


def validate_strategy(strategy: RolloutStrategy) -> list[FieldIssue]:
    """Rollout and apply strategy rules; paths relative to `spec.strategy`."""
    issues: list[FieldIssue] = []
    rolling = strategy.rolling_update
    if rolling is not None:
        if strategy.type == "External":
            issues.append(
                FieldIssue(
                    "rollingUpdate",
                    "rollingUpdateConifg is not valid for ExternalRollout strategy type",
                )
            )
        if rolling.unavailable_period_seconds < 0:
            issues.append(
                FieldIssue(
                    "rollingUpdate.unavailablePeriodSeconds",
                    "unavailablePeriodSeconds must be "
                    f"greater than or equal to 0, got {rolling.unavailable_period_seconds}",
                )
            )
        issues += prefix("rollingUpdate", _intstr_rules("maxUnavailable", rolling.max_unavailable))
        issues += prefix("rollingUpdate", _intstr_rules("maxSurge", rolling.max_surge))
    apply = strategy.apply_strategy
    if apply.is_set("server_side_apply_config") and apply.type != "ServerSideApply":
        issues.append(
            FieldIssue(
                "applyStrategy.serverSideApplyConfig",
                "serverSideApplyConfig is only valid for ServerSideApply strategy type",
            )
        )
    report = strategy.report_back_strategy
    if report is not None and report.type == "Mirror" and report.destination is None:
        issues.append(
            FieldIssue(
                "reportBackStrategy.destination",
                "when reportBackStrategy.type is 'Mirror', a destination must be specified",
            )
        )
    return issues

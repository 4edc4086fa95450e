"""The registry: kind lookup and `parse_object` error conversion (paths and messages)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import gitfleet.api as api
from gitfleet.api import KINDS, is_fleet_group, is_fleet_kind, is_payload_kind, parse_object

PLACEMENT = "placement.kubernetes-fleet.io/v1beta1"


def crp(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": PLACEMENT,
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "web"},
        "spec": {
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "a"}],
            **spec,
        },
    }


def issues_of(body: Any) -> list[tuple[str, str]]:
    model, issues = parse_object(body)
    assert model is None
    return [(i.field, i.message) for i in issues]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (crp(foo=1), [("spec.foo", 'unknown field "foo"')]),
        (crp() | {"extra": {}}, [("extra", 'unknown field "extra"')]),
        (
            crp(policy={"placementType": "PickFixed", "clusterNames": [1]}),
            [("spec.policy.clusterNames[0]", "must be a string, got an integer")],
        ),
        (
            crp(policy={"placementType": "PickSome"}),
            [("spec.policy.placementType", "must be one of: PickAll, PickN, PickFixed")],
        ),
        (
            crp(policy={"placementType": "PickN", "numberOfClusters": "2"}),
            [("spec.policy.numberOfClusters", "must be an integer, got a string")],
        ),
        (
            crp(policy={"placementType": "PickN", "numberOfClusters": True}),
            [("spec.policy.numberOfClusters", "must be an integer, got a boolean (true)")],
        ),
        (
            crp(policy={"placementType": "PickN", "numberOfClusters": 1.5}),
            [("spec.policy.numberOfClusters", "must be an integer, got a number")],
        ),
        (crp(policy="PickAll"), [("spec.policy", "must be a mapping, got a string")]),
        (crp(resourceSelectors={}), [("spec.resourceSelectors", "must be a list, got a mapping")]),
        (crp(resourceSelectors=[]), [("spec.resourceSelectors", "must have at least 1 item(s)")]),
        (crp(revisionHistoryLimit=0), [("spec.revisionHistoryLimit", "must be >= 1")]),
        (
            {**crp(), "metadata": {"name": "web", "labels": {1: "x"}}},
            [("metadata.labels.1", "mapping key must be a string, got an integer")],
        ),
        (
            {**crp(), "metadata": {"labels": {"app.kubernetes.io/name": 5}}},
            [
                ("metadata.name", "required field is missing"),
                ('metadata.labels["app.kubernetes.io/name"]', "must be a string, got an integer"),
            ],
        ),
        (
            {
                "apiVersion": PLACEMENT,
                "kind": "ClusterResourcePlacement",
                "metadata": {"name": "x"},
            },
            [("spec", "required field is missing")],
        ),
        (
            crp(strategy={"applyStrategy": {"allowCoOwnership": "yes"}}),
            [
                (
                    "spec.strategy.applyStrategy.allowCoOwnership",
                    "must be a boolean (true or false), got a string",
                )
            ],
        ),
        (
            {**crp(), "metadata": {"name": "web", "creationTimestamp": "now"}},
            [
                (
                    "metadata.creationTimestamp",
                    'must be an RFC 3339 timestamp such as "2026-11-21T10:00:00Z": "now"',
                )
            ],
        ),
    ],
)
def test_pydantic_errors(body: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert issues_of(body) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ([], [("", "must be a mapping, got a list")]),
        ({}, [("apiVersion", "required field is missing"), ("kind", "required field is missing")]),
        (
            {"apiVersion": 1, "kind": ["x"]},
            [
                ("apiVersion", "must be a string, got an integer"),
                ("kind", "must be a string, got a list"),
            ],
        ),
        (
            {"apiVersion": "placement.kubernetes-fleet.io/v1alpha1", "kind": "ResourcePlacement"},
            [
                (
                    "apiVersion",
                    "ResourcePlacement must use apiVersion placement.kubernetes-fleet.io/v1 "
                    "or placement.kubernetes-fleet.io/v1beta1",
                )
            ],
        ),
        (
            {"apiVersion": "gitfleet.io/v1alpha1", "kind": "Flet"},
            [
                (
                    "kind",
                    'unknown kind "Flet" in gitfleet.io/v1alpha1 (known kinds: AgentReport, DeletionApproval, Fleet, ReplicaDistribution, Tenant)',
                )
            ],
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap"},
            [("kind", '"v1" "ConfigMap" is not a fleet kind')],
        ),
    ],
)
def test_envelope_errors(body: Any, expected: list[tuple[str, str]]) -> None:
    assert issues_of(body) == expected


@pytest.mark.parametrize(
    ("api_version", "kind", "fleet_kind", "fleet_group", "payload"),
    [
        (PLACEMENT, "ClusterResourcePlacement", True, True, False),
        ("placement.kubernetes-fleet.io/v1", "ClusterResourcePlacement", True, True, False),
        ("placement.kubernetes-fleet.io/v1", "ResourcePlacement", True, True, False),
        ("placement.kubernetes-fleet.io/v1alpha1", "ResourcePlacement", False, True, False),
        (PLACEMENT, "ClusterResourcePlacementTypo", False, True, False),
        (PLACEMENT, "ResourceEnvelope", False, True, True),
        ("placement.kubernetes-fleet.io/v9", "Anything", False, True, False),
        ("cluster.kubernetes-fleet.io/v1", "MemberCluster", True, True, False),
        ("gitfleet.io/v1alpha1", "Fleet", True, True, False),
        ("multicluster.x-k8s.io/v1alpha1", "ClusterProfile", True, False, False),
        ("multicluster.x-k8s.io/v1alpha1", "ServiceExport", False, False, True),
        ("apps/v1", "Deployment", False, False, True),
        ("v1", "Namespace", False, False, True),
    ],
)
def test_kind_lookup(
    api_version: str, kind: str, fleet_kind: bool, fleet_group: bool, payload: bool
) -> None:
    assert is_fleet_kind(api_version, kind) is fleet_kind
    assert is_fleet_group(api_version) is fleet_group
    assert is_payload_kind(api_version, kind) is payload


def test_kinds_table_and_exports() -> None:
    kinds = {kind for _, kind in KINDS}
    assert kinds == {
        "MemberCluster",
        "ClusterProfile",
        "ClusterResourcePlacement",
        "ResourcePlacement",
        "ClusterResourceOverride",
        "ResourceOverride",
        "ClusterStagedUpdateStrategy",
        "ClusterStagedUpdateRun",
        "ClusterApprovalRequest",
        "StagedUpdateStrategy",
        "StagedUpdateRun",
        "ApprovalRequest",
        "ClusterResourcePlacementEviction",
        "ClusterResourcePlacementDisruptionBudget",
        "Fleet",
        "AgentReport",
        "ClusterGroupUpgrade",
        "ReplicaDistribution",
        "Tenant",
        "DeletionApproval",
    }
    for (_, kind), cls in KINDS.items():
        assert cls.__name__ == kind
        assert getattr(api, kind) is cls


EXPORT = """\
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  creationTimestamp: "2025-01-01T00:00:00Z"
  finalizers: [kubernetes-fleet.io/crp-cleanup]
  generation: 3
  managedFields:
  - {apiVersion: placement.kubernetes-fleet.io/v1beta1, fieldsType: FieldsV1, manager: kubectl}
  name: crp-1
  resourceVersion: "1234"
  uid: 0b6d2c1e-1111-2222-3333-444455556666
spec:
  policy:
    placementType: PickN
    numberOfClusters: 2
    affinity:
      clusterAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          clusterSelectorTerms:
          - labelSelector:
              matchLabels: {env: prod}
            propertySelector:
              matchExpressions:
              - {name: resources.kubernetes-fleet.io/available-cpu, operator: Ge, values: ["2"]}
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 20
          preference:
            propertySorter: {name: kubernetes-fleet.io/node-count, sortOrder: Descending}
    tolerations:
    - {key: gpu, operator: Exists}
  resourceSelectors:
  - {group: "", kind: Namespace, name: work, version: v1, selectionScope: NamespaceOnly}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 1, maxUnavailable: 0, unavailablePeriodSeconds: 30}
    applyStrategy: {type: ServerSideApply, serverSideApplyConfig: {force: true},
                    whenToTakeOver: IfNoDiff, allowCoOwnership: true}
status:
  conditions:
  - {type: ClusterResourcePlacementScheduled, status: "True"}
  observedResourceIndex: "0"
"""


def test_kubectl_export_loads_from_file(tmp_path: Path) -> None:
    path = tmp_path / "crp.yaml"
    path.write_text(EXPORT, encoding="utf-8")
    body = yaml.safe_load(path.read_text(encoding="utf-8"))
    model, issues = parse_object(body)
    assert issues == []
    assert isinstance(model, api.ClusterResourcePlacement)
    spec = model.spec
    assert spec.placement_type == "PickN" and spec.policy.number_of_clusters == 2
    assert spec.revision_history_limit == 5
    assert spec.strategy.rolling_update is not None
    assert spec.strategy.rolling_update.max_unavailable == 0
    assert spec.resource_selectors[0].selection_scope == "NamespaceOnly"
    reparsed, again = parse_object(model.dump())
    assert again == [] and reparsed == model


def test_models_are_frozen() -> None:
    model, _ = parse_object(crp())
    assert model is not None
    with pytest.raises(ValueError):
        model.kind = "Other"  # type: ignore[misc]

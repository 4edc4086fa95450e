"""Version conversion: every apiVersion KubeFleet serves for a kind loads into the same internal
model, a version's own fields round-trip, and fields a version does not have are refused."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.api import KINDS, parse_object
from gitfleet.api.versions import VERSION_ONLY_FIELDS

P = "placement.kubernetes-fleet.io"
C = "cluster.kubernetes-fleet.io"

SERVED = {
    "MemberCluster": [f"{C}/v1", f"{C}/v1beta1"],
    "ClusterResourcePlacement": [f"{P}/v1", f"{P}/v1beta1"],
    "ResourcePlacement": [f"{P}/v1", f"{P}/v1beta1"],
    "ClusterResourceOverride": [f"{P}/v1", f"{P}/v1alpha1", f"{P}/v1beta1"],
    "ResourceOverride": [f"{P}/v1", f"{P}/v1alpha1", f"{P}/v1beta1"],
    "ClusterResourcePlacementEviction": [f"{P}/v1alpha1", f"{P}/v1beta1"],
    "ClusterResourcePlacementDisruptionBudget": [f"{P}/v1alpha1", f"{P}/v1beta1"],
}
"""Served versions per KubeFleet's config/crd/bases (checked by hand against the CRDs)."""

SELECTOR = {"group": "", "version": "v1", "kind": "Namespace", "name": "web"}
RULES = {
    "policy": {
        "overrideRules": [
            {
                "clusterSelector": {"clusterSelectorTerms": [{"labelSelector": {}}]},
                "jsonPatchOverrides": [
                    {"op": "add", "path": "/metadata/labels/c", "value": "${MEMBER-CLUSTER-NAME}"}
                ],
            }
        ]
    }
}
PLACEMENT_SPEC = {
    "resourceSelectors": [SELECTOR],
    "policy": {"placementType": "PickN", "numberOfClusters": 2},
    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
    "revisionHistoryLimit": 5,
}
BODIES: dict[str, dict[str, Any]] = {
    "MemberCluster": {
        "metadata": {"name": "eu-1", "labels": {"env": "prod"}},
        "spec": {"heartbeatPeriodSeconds": 30, "taints": [{"key": "k", "effect": "NoSchedule"}]},
    },
    "ClusterResourcePlacement": {"metadata": {"name": "web"}, "spec": PLACEMENT_SPEC},
    "ResourcePlacement": {
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            **PLACEMENT_SPEC,
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "ConfigMap", "name": "a"}],
        },
    },
    "ClusterResourceOverride": {
        "metadata": {"name": "cro"},
        "spec": {"clusterResourceSelectors": [SELECTOR], **RULES},
    },
    "ResourceOverride": {
        "metadata": {"name": "ro", "namespace": "shop"},
        "spec": {
            "resourceSelectors": [
                {"group": "apps", "version": "v1", "kind": "Deployment", "name": "d"}
            ],
            **RULES,
        },
    },
    "ClusterResourcePlacementEviction": {
        "metadata": {"name": "ev"},
        "spec": {"placementName": "web", "clusterName": "eu-1"},
    },
    "ClusterResourcePlacementDisruptionBudget": {
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 1},
    },
}
CASES = [(kind, version) for kind, versions in SERVED.items() for version in versions]


def parse(kind: str, version: str, body: dict[str, Any]) -> Any:
    model, issues = parse_object({"apiVersion": version, "kind": kind, **body})
    assert not issues, issues
    return model


@pytest.mark.parametrize(("kind", "version"), CASES)
def test_every_served_version_is_a_fleet_kind(kind: str, version: str) -> None:
    assert (version, kind) in KINDS


@pytest.mark.parametrize(("kind", "version"), CASES)
def test_each_version_converts_to_the_storage_model(kind: str, version: str) -> None:
    model = parse(kind, version, BODIES[kind])
    storage = parse(kind, version.rsplit("/", 1)[0] + "/v1beta1", BODIES[kind])
    assert type(model) is type(storage)
    assert model.model_dump(exclude={"api_version"}) == storage.model_dump(exclude={"api_version"})


@pytest.mark.parametrize(("kind", "version"), CASES)
def test_each_version_round_trips_its_own_fields(kind: str, version: str) -> None:
    model = parse(kind, version, BODIES[kind])
    dumped = model.model_dump(by_alias=True, exclude_unset=True, mode="json")
    assert dumped["apiVersion"] == version
    assert (
        parse(kind, version, {k: v for k, v in dumped.items() if k not in ("apiVersion", "kind")})
        == model
    )


@pytest.mark.parametrize(
    ("version", "kind", "field"),
    [(v, k, f) for (v, k), fields in sorted(VERSION_ONLY_FIELDS.items()) for f in fields],
)
def test_fields_a_version_lacks_are_refused(version: str, kind: str, field: str) -> None:
    body = {"apiVersion": version, "kind": kind, **BODIES[kind]}
    values = {
        "deleteOptions": {"validationMode": "Strict"},
        "deleteStrategy": {"propagationPolicy": "Abandon"},
        "reportBackStrategy": {"type": "Disabled"},
    }
    leaf = field.rsplit(".", 1)[-1]
    node = body
    for part in field.split(".")[:-1]:
        node[part] = dict(node.get(part) or {})
        node = node[part]
    node[leaf] = values[leaf]
    model, issues = parse_object(body)
    assert model is None
    assert [(i.field, i.message.split(":")[0]) for i in issues] == [
        (field, f'unknown field "{leaf}"')
    ]
    storage = {**body, "apiVersion": version.rsplit("/", 1)[0] + "/v1beta1"}
    assert parse_object(storage)[0] is not None


@pytest.mark.parametrize(
    ("version", "kind"),
    [
        (f"{P}/v1alpha1", "ClusterResourcePlacement"),
        (f"{P}/v1", "ClusterResourcePlacementEviction"),
        (f"{P}/v2", "ClusterResourceOverride"),
    ],
)
def test_versions_kubefleet_does_not_serve_are_refused(version: str, kind: str) -> None:
    model, issues = parse_object({"apiVersion": version, "kind": kind, **BODIES[kind]})
    assert model is None
    assert issues[0].field == "apiVersion"

"""Snapshot ordering (kubefleet.md §7.3): kind priority, group/version, namespace/name."""

from __future__ import annotations

import pytest

from reconciler.select.order import sort_identities

MIXED = [
    ("apps", "v1", "Deployment", "app", "web"),
    ("example.com", "v1", "Widget", "app", "w"),
    ("", "v1", "Namespace", "", "app"),
    ("", "v1", "ConfigMap", "app", "b"),
    ("", "v1", "ConfigMap", "app", "a"),
    ("", "v1", "ConfigMap", "aaa", "z"),
    ("scheduling.k8s.io", "v1", "PriorityClass", "", "high"),
    ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration", "", "v"),
    ("", "v1", "Secret", "app", "s"),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "", "widgets.example.com"),
    ("example.com", "v1", "Service", "app", "fake"),
    ("", "v1", "Service", "app", "real"),
    ("abc.io", "v1", "Zebra", "", "z"),
    ("", "v1", "Endpoints", "app", "e"),
]

EXPECTED = [
    ("scheduling.k8s.io", "v1", "PriorityClass", "", "high"),
    ("", "v1", "Namespace", "", "app"),
    ("", "v1", "Secret", "app", "s"),
    ("", "v1", "ConfigMap", "aaa", "z"),
    ("", "v1", "ConfigMap", "app", "a"),
    ("", "v1", "ConfigMap", "app", "b"),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "", "widgets.example.com"),
    # same kind name: ordered by group/version string ("example.com/v1" < "v1")
    ("example.com", "v1", "Service", "app", "fake"),
    ("", "v1", "Service", "app", "real"),
    ("apps", "v1", "Deployment", "app", "web"),
    ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration", "", "v"),
    # unknown kinds last, by Go's GVK string "group/version, Kind=kind"
    ("", "v1", "Endpoints", "app", "e"),  # "/v1, Kind=Endpoints"
    ("abc.io", "v1", "Zebra", "", "z"),
    ("example.com", "v1", "Widget", "app", "w"),
]


def test_mixed_order() -> None:
    assert sort_identities(MIXED) == EXPECTED


@pytest.mark.parametrize("rotation", range(len(MIXED)))
def test_order_independent_of_input_order(rotation: int) -> None:
    rotated = MIXED[rotation:] + MIXED[:rotation]
    assert sort_identities(list(reversed(rotated))) == EXPECTED

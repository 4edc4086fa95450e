"""Selection driven by the real `gitfleet.api` placement models (not the test doubles)."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.api import ClusterResourcePlacement, ResourcePlacement
from reconciler.select import select_resources
from tests.unit.select.select_helpers import index_of, names, obj

API = "placement.kubernetes-fleet.io/v1beta1"
FLEET = [
    obj("v1", "Namespace", "web-a", labels={"tier": "web"}),
    obj("v1", "Namespace", "web-b", labels={"tier": "web"}),
    obj("v1", "Namespace", "data", labels={"tier": "data"}),
    obj("v1", "ConfigMap", "settings", "web-a", labels={"team": "x"}),
    obj("v1", "ConfigMap", "other", "web-a"),
]


def crp(*selectors: dict[str, Any]) -> ClusterResourcePlacement:
    return ClusterResourcePlacement.model_validate(
        {
            "apiVersion": API,
            "kind": "ClusterResourcePlacement",
            "metadata": {"name": "p"},
            "spec": {"resourceSelectors": list(selectors)},
        }
    )


def rp(*selectors: dict[str, Any]) -> ResourcePlacement:
    return ResourcePlacement.model_validate(
        {
            "apiVersion": API,
            "kind": "ResourcePlacement",
            "metadata": {"name": "p", "namespace": "web-a"},
            "spec": {"resourceSelectors": list(selectors)},
        }
    )


NS = {"group": "", "version": "v1", "kind": "Namespace"}
CM = {"group": "", "version": "v1", "kind": "ConfigMap"}
CASES = [
    (
        "matchExpressions In, NamespaceOnly",
        crp(
            {
                **NS,
                "selectionScope": "NamespaceOnly",
                "labelSelector": {
                    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]
                },
            }
        ),
        ["Namespace//web-a", "Namespace//web-b"],
    ),
    (
        "matchLabels with resources",
        crp({**NS, "labelSelector": {"matchLabels": {"tier": "data"}}}),
        ["Namespace//data"],
    ),
    (
        "name with resources",
        crp({**NS, "name": "web-a"}),
        ["Namespace//web-a", "ConfigMap/web-a/other", "ConfigMap/web-a/settings"],
    ),
    (
        "resource placement by label",
        rp({**CM, "labelSelector": {"matchLabels": {"team": "x"}}}),
        ["ConfigMap/web-a/settings"],
    ),
    ("resource placement all", rp(CM), ["ConfigMap/web-a/other", "ConfigMap/web-a/settings"]),
]


@pytest.mark.parametrize(("case", "placement", "expected"), CASES, ids=[c[0] for c in CASES])
def test_real_models(case: str, placement: Any, expected: list[str]) -> None:
    selection = select_resources(placement, index_of(*FLEET))
    assert selection.error is None
    assert names(selection) == expected

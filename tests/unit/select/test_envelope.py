"""Envelopes (kubefleet.md §6.5): ResourceEnvelope and ClusterResourceEnvelope contents."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gitfleet.api.canonical import canonical_json
from reconciler.select import SelectedResource, unwrap_envelope
from tests.unit.select.select_helpers import Term, crp, index_of, names, ns_term, obj, rp, select

GROUP = "placement.kubernetes-fleet.io"
API = f"{GROUP}/v1beta1"
CM = obj("v1", "ConfigMap", "cm", "app", data={"a": "1"})
CM_NO_NS = obj("v1", "ConfigMap", "cm")
CM_OTHER_NS = obj("v1", "ConfigMap", "cm", "other")
ROLE = obj("rbac.authorization.k8s.io/v1", "ClusterRole", "r")
ROLE_WITH_NS = obj("rbac.authorization.k8s.io/v1", "ClusterRole", "r", "app")
WEBHOOK = obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "v")


def envelope(kind: str, data: Any, namespace: str | None = None) -> dict[str, Any]:
    return obj(API, kind, "env", namespace, data=data)


def selected(kind: str, data: Any, namespace: str = "") -> SelectedResource:
    from gitfleet.load.model import Origin

    body = envelope(kind, data, namespace or None)
    return SelectedResource(GROUP, "v1beta1", kind, namespace, "env", body, Origin("f", 0, 1))


VALID = [
    ("namespaced", "ResourceEnvelope", "app", {"cm": CM}, [CM]),
    ("cluster", "ClusterResourceEnvelope", "", {"r": ROLE, "w": WEBHOOK}, None),
    ("empty data", "ResourceEnvelope", "app", {}, []),
    ("no data", "ClusterResourceEnvelope", "", None, []),
]


@pytest.mark.parametrize(
    ("case", "kind", "ns", "data", "expected"), VALID, ids=[v[0] for v in VALID]
)
def test_unwrap_valid(case: str, kind: str, ns: str, data: Any, expected: Any) -> None:
    manifests, errors = unwrap_envelope(selected(kind, data, ns))
    assert errors == []
    if expected is None:  # order by canonical JSON, descending
        expected = sorted(data.values(), key=canonical_json, reverse=True)
    assert manifests == expected


def test_unwrap_order_is_raw_json_descending() -> None:
    data = {f"k{i}": obj("v1", "ConfigMap", f"cm-{i}", "app") for i in (3, 1, 2)}
    manifests, _ = unwrap_envelope(selected("ResourceEnvelope", data, "app"))
    assert [m["metadata"]["name"] for m in manifests] == ["cm-3", "cm-2", "cm-1"]
    assert [json.dumps(m, sort_keys=True) for m in manifests] == sorted(
        (json.dumps(m, sort_keys=True) for m in data.values()), reverse=True
    )


def test_unwrap_returns_copies() -> None:
    sel = selected("ResourceEnvelope", {"cm": CM}, "app")
    manifests, _ = unwrap_envelope(sel)
    manifests[0]["data"]["a"] = "changed"
    assert sel.obj["data"]["cm"]["data"]["a"] == "1"


INVALID = [
    (
        "namespaced object in cluster envelope",
        "ClusterResourceEnvelope",
        "",
        {"cm": CM},
        "data.cm: a namespaced object (v1 ConfigMap app/cm) has been wrapped in a cluster "
        "resource envelope",
    ),
    (
        "namespaced kind without namespace in cluster envelope",
        "ClusterResourceEnvelope",
        "",
        {"cm": CM_NO_NS},
        "data.cm: a namespaced object (v1 ConfigMap cm) has been wrapped in a cluster "
        "resource envelope",
    ),
    (
        "cluster-scoped object in resource envelope",
        "ResourceEnvelope",
        "app",
        {"r": ROLE},
        "data.r: a cluster scope object (rbac.authorization.k8s.io/v1 ClusterRole r) has been "
        "wrapped in a resource envelope",
    ),
    (
        "cluster-scoped kind with namespace in resource envelope",
        "ResourceEnvelope",
        "app",
        {"r": ROLE_WITH_NS},
        "data.r: a cluster scope object (rbac.authorization.k8s.io/v1 ClusterRole app/r) has been "
        "wrapped in a resource envelope",
    ),
    (
        "object from another namespace",
        "ResourceEnvelope",
        "app",
        {"cm": CM_OTHER_NS},
        "data.cm: a namespaced object (v1 ConfigMap other/cm) has been wrapped in a resource "
        "envelope from another namespace (app)",
    ),
    (
        "namespaced object without namespace",
        "ResourceEnvelope",
        "app",
        {"cm": CM_NO_NS},
        "data.cm.metadata.namespace: a namespaced object (v1 ConfigMap cm) in a resource "
        "envelope must set metadata.namespace: app",
    ),
    (
        "not an object",
        "ResourceEnvelope",
        "app",
        {"x": "text"},
        "data.x: a wrapped manifest must be an object",
    ),
    (
        "no apiVersion",
        "ResourceEnvelope",
        "app",
        {"x": {"kind": "ConfigMap", "metadata": {"name": "a"}}},
        "data.x.apiVersion: a wrapped manifest needs an apiVersion",
    ),
    (
        "no kind",
        "ResourceEnvelope",
        "app",
        {"x": {"apiVersion": "v1", "metadata": {"name": "a"}}},
        "data.x.kind: a wrapped manifest needs a kind",
    ),
    (
        "no name",
        "ResourceEnvelope",
        "app",
        {"x": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}},
        "data.x.metadata.name: a wrapped manifest needs a metadata.name",
    ),
    (
        "data not a map",
        "ResourceEnvelope",
        "app",
        ["a"],
        "data: must be a map of manifest name to object",
    ),
]


@pytest.mark.parametrize(
    ("case", "kind", "ns", "data", "error"), INVALID, ids=[v[0] for v in INVALID]
)
def test_unwrap_invalid(case: str, kind: str, ns: str, data: Any, error: str) -> None:
    manifests, errors = unwrap_envelope(selected(kind, data, ns))
    assert manifests == []
    assert errors == [error]


def test_unwrap_all_or_nothing() -> None:
    manifests, errors = unwrap_envelope(
        selected("ResourceEnvelope", {"ok": CM, "bad": ROLE}, "app")
    )
    assert manifests == []
    assert len(errors) == 1


def test_unwrap_refuses_non_envelope() -> None:
    from gitfleet.load.model import Origin

    sel = SelectedResource("", "v1", "ConfigMap", "app", "cm", CM, Origin("f", 0, 1))
    assert unwrap_envelope(sel) == ([], ["v1 ConfigMap cm is not an envelope"])


def test_envelopes_are_selected_and_bad_ones_reported() -> None:
    good = envelope("ResourceEnvelope", {"cm": CM}, "app")
    bad = obj(API, "ResourceEnvelope", "bad", "app", data={"r": ROLE})
    cluster_env = envelope("ClusterResourceEnvelope", {"r": ROLE})
    index = index_of(obj("v1", "Namespace", "app"), good, bad, cluster_env)
    assert [(i.resource.name, i.field) for i in index.issues] == [("bad", "data.r")]
    selection = select(
        crp("p", ns_term("app"), Term(GROUP, "v1beta1", "ClusterResourceEnvelope")), index
    )
    assert names(selection) == [
        "Namespace//app",
        "ClusterResourceEnvelope//env",
        "ResourceEnvelope/app/env",
    ]
    assert selection.envelope_count == 2
    assert [i.resource.name for i in selection.invalid] == ["bad"]
    by_rp = select(rp("app", "p", Term(GROUP, "v1beta1", "ResourceEnvelope", name="env")), index)
    manifests, errors = index.unwrap(by_rp.resources[0])
    assert (manifests, errors) == ([CM], [])


def test_crd_declared_cluster_kind_may_be_wrapped_in_cluster_envelope() -> None:
    crd = obj(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "gadgets.example.com",
        spec={"group": "example.com", "scope": "Cluster", "names": {"kind": "Gadget"}},
    )
    gadget = obj("example.com/v1", "Gadget", "g")
    index = index_of(crd, envelope("ClusterResourceEnvelope", {"g": gadget}))
    assert index.issues == ()
    sel = select(crp("p", Term(GROUP, "v1beta1", "ClusterResourceEnvelope")), index).resources[0]
    assert index.unwrap(sel) == ([gadget], [])
    assert unwrap_envelope(sel)[1] != []  # without the index's scopes Gadget counts as namespaced

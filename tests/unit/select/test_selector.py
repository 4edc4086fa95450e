"""Resource selection rules (kubefleet.md §7.1) for ClusterResourcePlacement and ResourcePlacement.

FLEET below is one hub view used by every table row.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.select.select_helpers import (
    MatchLabels,
    Term,
    crp,
    index_of,
    names,
    ns_term,
    obj,
    rp,
    select,
)

PREFIX = "The resource selectors are invalid: failed to process the request due to a client error: "
CLUSTER_ROLE = ("rbac.authorization.k8s.io", "v1", "ClusterRole")
CONFIG_MAP = ("", "v1", "ConfigMap")

FLEET: list[dict[str, Any]] = [
    obj("v1", "Namespace", "app", labels={"tier": "web"}),
    obj("v1", "Namespace", "db", labels={"tier": "data"}),
    obj("v1", "Namespace", "empty", labels={"tier": "web"}),
    obj("v1", "ConfigMap", "settings", "app", labels={"team": "a"}),
    obj("v1", "ConfigMap", "other", "app", labels={"team": "b"}),
    obj("v1", "ConfigMap", "kube-root-ca.crt", "app"),
    obj("v1", "ServiceAccount", "default", "app"),
    obj("v1", "ServiceAccount", "runner", "app"),
    obj("v1", "Secret", "token", "app", type="kubernetes.io/service-account-token"),
    obj("v1", "Secret", "creds", "app", type="Opaque"),
    obj("v1", "Pod", "stray", "app"),
    obj("apps/v1", "Deployment", "web", "app"),
    obj("apps/v1", "ReplicaSet", "web-123", "app", ownerReferences=[]),
    obj("v1", "Service", "web", "app"),
    obj("v1", "Endpoints", "web", "app"),
    obj("v1", "Endpoints", "external", "app"),
    obj(
        "discovery.k8s.io/v1",
        "EndpointSlice",
        "web-x",
        "app",
        labels={"endpointslice.kubernetes.io/managed-by": "c"},
    ),
    obj("discovery.k8s.io/v1", "EndpointSlice", "manual", "app"),
    obj("coordination.k8s.io/v1", "Lease", "lock", "app"),
    obj("v1", "PersistentVolumeClaim", "data", "db"),
    obj("apps/v1", "StatefulSet", "pg", "db"),
    obj("example.com/v1", "Widget", "w", "db"),
    obj("rbac.authorization.k8s.io/v1", "ClusterRole", "reader", labels={"team": "a"}),
    obj("rbac.authorization.k8s.io/v1", "ClusterRole", "writer", labels={"team": "b"}),
    obj("rbac.authorization.k8s.io/v1", "ClusterRole", "gone", labels={"team": "a"}),
    obj("v1", "Node", "node-1"),
    obj("cluster.kubernetes-fleet.io/v1beta1", "MemberCluster", "m1"),
]
FLEET[24]["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
FLEET[12]["metadata"]["ownerReferences"] = [{"kind": "Deployment", "name": "web", "uid": "1"}]

APP_CONTENTS = [
    "Namespace//app",
    "ServiceAccount/app/runner",
    "Secret/app/creds",
    "ConfigMap/app/other",
    "ConfigMap/app/settings",
    "Service/app/web",
    "Deployment/app/web",
    # unknown kinds by GVK string: "/v1, Kind=Endpoints" < "discovery.k8s.io/v1, Kind=..."
    "Endpoints/app/external",
    "EndpointSlice/app/manual",
]

OK_CASES = [
    (
        "cluster-scoped by name",
        crp("p", Term(*CLUSTER_ROLE, name="reader")),
        ["ClusterRole//reader"],
    ),
    (
        "cluster-scoped by label",
        crp("p", Term(*CLUSTER_ROLE, label_selector=MatchLabels({"team": "b"}))),
        ["ClusterRole//writer"],
    ),
    (
        "cluster-scoped all, deleting skipped",
        crp("p", Term(*CLUSTER_ROLE)),
        ["ClusterRole//reader", "ClusterRole//writer"],
    ),
    ("missing name selects nothing", crp("p", Term(*CLUSTER_ROLE, name="nope")), []),
    (
        "terms are OR-ed",
        crp("p", Term(*CLUSTER_ROLE, name="reader"), ns_term("db", "NamespaceOnly")),
        ["Namespace//db", "ClusterRole//reader"],
    ),
    ("namespace with resources (default), filters applied", crp("p", ns_term("app")), APP_CONTENTS),
    ("namespace only", crp("p", ns_term("app", "NamespaceOnly")), ["Namespace//app"]),
    (
        "namespace by label with resources",
        crp("p", ns_term(tier="web")),
        [APP_CONTENTS[0], "Namespace//empty", *APP_CONTENTS[1:]],
    ),
    (
        "PVC propagated (no hub workloads), unknown kinds included",
        crp("p", ns_term("db")),
        ["Namespace//db", "PersistentVolumeClaim/db/data", "StatefulSet/db/pg", "Widget/db/w"],
    ),
    (
        "disabled kind term skipped",
        crp("p", Term("", "v1", "Node"), ns_term("db", "NamespaceOnly")),
        ["Namespace//db"],
    ),
    (
        "disabled group term skipped",
        crp("p", Term("cluster.kubernetes-fleet.io", "v1beta1", "MemberCluster")),
        [],
    ),
    (
        "selector namespace mode",
        crp(
            "p",
            ns_term("app", "NamespaceWithResourceSelectors"),
            Term(*CONFIG_MAP, label_selector=MatchLabels({"team": "a"})),
            Term(*CLUSTER_ROLE, name="writer"),
        ),
        ["Namespace//app", "ConfigMap/app/settings", "ClusterRole//writer"],
    ),
    (
        "selector namespace mode, never-propagated still skipped",
        crp(
            "p", ns_term("app", "NamespaceWithResourceSelectors"), Term("", "v1", "ServiceAccount")
        ),
        ["Namespace//app", "ServiceAccount/app/runner"],
    ),
    (
        "selector namespace mode by label selecting one",
        crp(
            "p",
            ns_term(None, "NamespaceWithResourceSelectors", tier="data"),
            Term("apps", "v1", "StatefulSet"),
        ),
        ["Namespace//db", "StatefulSet/db/pg"],
    ),
    (
        "RP selects in its namespace only",
        rp("app", "p", Term(*CONFIG_MAP)),
        ["ConfigMap/app/other", "ConfigMap/app/settings"],
    ),
    ("RP by name", rp("db", "p", Term("example.com", "v1", "Widget", name="w")), ["Widget/db/w"]),
    ("RP other namespace object invisible", rp("db", "p", Term(*CONFIG_MAP, name="settings")), []),
    (
        "RP endpoints with same-named service skipped",
        rp("app", "p", Term("", "v1", "Endpoints")),
        ["Endpoints/app/external"],
    ),
    ("owned replicaset skipped", rp("app", "p", Term("apps", "v1", "ReplicaSet")), []),
]


@pytest.mark.parametrize(("case", "placement", "expected"), OK_CASES, ids=[c[0] for c in OK_CASES])
def test_selection(case: str, placement: Any, expected: list[str]) -> None:
    selection = select(placement, index_of(*FLEET))
    assert selection.error is None
    assert names(selection) == expected
    assert selection.invalid == ()


ERROR_CASES = [
    (
        "reserved by name",
        crp("p", ns_term("kube-system")),
        "invalid clusterResourcePlacement p: namespace kube-system is not allowed to propagate",
    ),
    (
        "reserved default",
        crp("p", ns_term("default")),
        "invalid clusterResourcePlacement p: namespace default is not allowed to propagate",
    ),
    (
        "reserved fleet- in NamespaceOnly (gitfleet refuses in every mode)",
        crp("p", ns_term("fleet-system", "NamespaceOnly")),
        "invalid clusterResourcePlacement p: namespace fleet-system is not allowed to propagate",
    ),
    (
        "reserved selected by label",
        crp("p", ns_term(None, tier="sys")),
        "invalid clusterResourcePlacement p: namespace kube-public is not allowed to propagate",
    ),
    (
        "operator-skipped namespace",
        crp("p", ns_term("db")),
        "invalid clusterResourcePlacement p: namespace db is not allowed to propagate",
    ),
    (
        "no namespace in selector mode",
        crp("p", ns_term("nope", "NamespaceWithResourceSelectors")),
        "invalid clusterResourcePlacement p: NamespaceWithResourceSelectors mode requires "
        "exactly one namespace, but no namespaces were selected",
    ),
    (
        "two namespaces in selector mode",
        crp("p", ns_term(None, "NamespaceWithResourceSelectors", tier="web")),
        "invalid clusterResourcePlacement p: NamespaceWithResourceSelectors mode requires "
        "exactly one namespace, but 2 namespaces were selected",
    ),
    (
        "CRP selects namespaced kind",
        crp("p", Term(*CONFIG_MAP, name="settings")),
        "invalid clusterResourcePlacement p: cannot select namespace-scoped resource /ConfigMap "
        "without a selected namespace (either missing NamespaceWithResourceSelectors mode or "
        "namespace selector matched no namespaces)",
    ),
    (
        "CRP selects unknown (namespaced) kind",
        crp("p", Term("example.com", "v1", "Widget")),
        "invalid clusterResourcePlacement p: cannot select namespace-scoped resource "
        "example.com/Widget without a selected namespace (either missing "
        "NamespaceWithResourceSelectors mode or namespace selector matched no namespaces)",
    ),
    (
        "RP selects Namespace",
        rp("app", "p", ns_term("app")),
        "invalid placement app/p: cannot select cluster-scoped resource Namespace in a "
        "resourcePlacement",
    ),
    (
        "RP selects cluster-scoped kind",
        rp("app", "p", Term(*CLUSTER_ROLE)),
        "invalid placement app/p: cannot select cluster-scoped resource "
        "rbac.authorization.k8s.io/v1, Resource=clusterroles in a resourcePlacement",
    ),
    (
        "duplicate across terms",
        crp("p", ns_term("app", "NamespaceOnly"), ns_term(None, "NamespaceOnly", tier="web")),
        "found duplicate resource "
        "{Group: Version:v1 Kind:Namespace Name:app Namespace: Envelope:<nil>}",
    ),
    (
        "duplicate within a ResourcePlacement",
        rp("app", "p", Term(*CONFIG_MAP), Term(*CONFIG_MAP, name="other")),
        "found duplicate resource "
        "{Group: Version:v1 Kind:ConfigMap Name:other Namespace:app Envelope:<nil>}",
    ),
]


@pytest.mark.parametrize(
    ("case", "placement", "message"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES]
)
def test_selection_errors(case: str, placement: Any, message: str) -> None:
    fleet = [
        *FLEET,
        obj("v1", "Namespace", "kube-public", labels={"tier": "sys"}),
        obj("v1", "Namespace", "zzz", labels={"tier": "sys"}),
    ]
    selection = select(placement, index_of(*fleet, skipped_namespaces=["db"]))
    assert selection.error == PREFIX + message
    assert selection.resources == ()
    assert selection.hash == ""


def test_identifiers_omit_empty_fields() -> None:
    selection = select(
        crp("p", ns_term("db", "NamespaceOnly"), Term(*CLUSTER_ROLE, name="reader")),
        index_of(*FLEET),
    )
    assert selection.identifiers() == [
        {"version": "v1", "kind": "Namespace", "name": "db"},
        {
            "group": "rbac.authorization.k8s.io",
            "version": "v1",
            "kind": "ClusterRole",
            "name": "reader",
        },
    ]


def test_selected_objects_are_stripped() -> None:
    manifest = obj("v1", "Namespace", "app", status={"phase": "Active"})
    manifest["metadata"]["uid"] = "1"
    selection = select(crp("p", ns_term("app", "NamespaceOnly")), index_of(manifest))
    assert selection.resources[0].obj == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "app"},
    }
    assert selection.resources[0].origin.file == "resources/all.yaml"


def test_invalid_matched_objects_are_reported_not_selected() -> None:
    bad_role = obj("rbac.authorization.k8s.io/v1", "ClusterRole", "bad", namespace="app")
    bad_cm = obj("v1", "ConfigMap", "bad", "app", labels={"n": 1})
    selection = select(
        crp("p", Term(*CLUSTER_ROLE), ns_term("app")), index_of(*FLEET, bad_role, bad_cm)
    )
    assert selection.error is None
    assert "ClusterRole//bad" not in names(selection)
    assert "ConfigMap/app/bad" not in names(selection)
    assert [(i.resource.name, i.field) for i in selection.invalid] == [
        ("bad", "metadata.namespace"),
        ("bad", "metadata.labels.n"),
    ]


def test_crd_declares_cluster_scope_for_selection() -> None:
    crd = obj(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "gadgets.example.com",
        spec={
            "group": "example.com",
            "scope": "Cluster",
            "names": {"kind": "Gadget", "plural": "gadgets"},
        },
    )
    gadget = obj("example.com/v1", "Gadget", "g1")
    index = index_of(crd, gadget)
    assert index.issues == ()
    ok = select(crp("p", Term("example.com", "v1", "Gadget")), index)
    assert names(ok) == ["Gadget//g1"]
    bad = select(rp("app", "p", Term("example.com", "v1", "Gadget")), index)
    assert bad.error == PREFIX + (
        "invalid placement app/p: cannot select cluster-scoped resource "
        "example.com/v1, Resource=gadgets in a resourcePlacement"
    )

"""Kubernetes objects the agent tests apply: the `Widget` custom resource kind (a namespaced
CustomResourceDefinition in group example.com) and one `Widget`.

Called by tests/unit/agent (apply and prune order on the in-memory cluster) and tests/kube
(the same against a real kube-apiserver, which needs the `full` definition).
"""

from __future__ import annotations

from typing import Any


def make_widget_crd(*, full: bool = False) -> dict[str, Any]:
    """CustomResourceDefinition `widgets.example.com` (v1, served and stored). With `full`, the
    singular and list names and a schema with an open `spec` (what a real API server needs to
    keep `spec`); without, a schema that keeps any field."""
    names = {"kind": "Widget", "plural": "widgets"}
    schema: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if full:
        names |= {"singular": "widget", "listKind": "WidgetList"}
        spec = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        schema = {"type": "object", "properties": {"spec": spec}}
    version = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": names,
            "scope": "Namespaced",
            "versions": [version],
        },
    }


def make_widget(namespace: str) -> dict[str, Any]:
    """Widget `w` in `namespace` with `spec.size` 1."""
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": namespace},
        "spec": {"size": 1},
    }

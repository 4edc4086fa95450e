"""Object metadata and the common shape of every gitfleet kind (apiVersion, kind, metadata).

`ObjectMeta` accepts every field a `kubectl get -o yaml` export carries, so existing KubeFleet
YAML loads unchanged; gitfleet itself only reads name, namespace, labels and annotations.
`KubeObject` is the base class of the kind classes in this package.
"""

from __future__ import annotations

from typing import Any

from gitfleet.api.base import KubeModel
from gitfleet.api.conditions import Timestamp
from gitfleet.api.errors import FieldIssue
from gitfleet.api.names import is_label_value, is_qualified_name


class ObjectMeta(KubeModel):
    """metav1.ObjectMeta (server-populated fields are accepted and ignored)."""

    name: str
    namespace: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    generate_name: str | None = None
    generation: int | None = None
    uid: str | None = None
    resource_version: str | None = None
    self_link: str | None = None
    creation_timestamp: Timestamp | None = None
    deletion_timestamp: Timestamp | None = None
    deletion_grace_period_seconds: int | None = None
    finalizers: list[str] | None = None
    owner_references: list[dict[str, Any]] | None = None
    managed_fields: list[dict[str, Any]] | None = None

    def label_map(self) -> dict[str, str]:
        """Labels, `{}` when absent."""
        return dict(self.labels or {})

    def validate_rules(self) -> list[FieldIssue]:
        """Label keys must be qualified names and values label values."""
        issues: list[FieldIssue] = []
        for key, value in sorted((self.labels or {}).items()):
            where = f"metadata.labels{key_path(key)}"
            issues += [FieldIssue(where, f"key {msg}") for msg in is_qualified_name(key)]
            issues += [FieldIssue(where, msg) for msg in is_label_value(value)]
        for key in sorted(self.annotations or {}):
            where = f"metadata.annotations{key_path(key)}"
            issues += [FieldIssue(where, f"key {msg}") for msg in is_qualified_name(key)]
        return issues


def key_path(key: str) -> str:
    """Path segment for a mapping key: `.key` for plain keys, `["a.b/c"]` otherwise."""
    if key and all(ch.isalnum() or ch in "_-" for ch in key) and key.isascii():
        return f".{key}"
    escaped = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'["{escaped}"]'


class KubeObject(KubeModel):
    """apiVersion, kind and metadata; subclasses narrow apiVersion/kind to Literals."""

    api_version: str
    kind: str
    metadata: ObjectMeta

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.metadata.name

    @property
    def namespace(self) -> str | None:
        """metadata.namespace (None for cluster-scoped kinds)."""
        return self.metadata.namespace

    @property
    def labels(self) -> dict[str, str]:
        """metadata.labels, `{}` when absent."""
        return self.metadata.label_map()

    def validate_rules(self) -> list[FieldIssue]:
        """Rules pydantic cannot express; subclasses extend this with their own."""
        return self.metadata.validate_rules()

"""The pydantic base classes every gitfleet kind is built on.

`KubeModel` fixes the house rules for YAML models (camelCase aliases, unknown fields refused,
frozen, strict types so that YAML values are never silently coerced); `KubeObject` adds
apiVersion/kind/metadata and the `validate_rules` hook that `gitfleet.api.registry.parse_object`
runs after pydantic validation.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from gitfleet.api.errors import FieldIssue
from gitfleet.api.names import dns_label_message, is_dns1123_label, is_dns1123_subdomain


class KubeModel(BaseModel):
    """Base of every YAML model: snake_case attributes, camelCase YAML, strict and frozen."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        strict=True,
    )

    def dump(self) -> dict[str, Any]:
        """Plain JSON-compatible mapping with YAML field names, None fields left out."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")

    def is_set(self, field: str) -> bool:
        """Whether `field` (python name) was written in the input rather than defaulted."""
        return field in self.model_fields_set


def prefix(path: str, issues: list[FieldIssue]) -> list[FieldIssue]:
    """Re-root object-relative issues under `path` (e.g. `spec.policy`)."""
    out: list[FieldIssue] = []
    for issue in issues:
        if not issue.field:
            out.append(FieldIssue(path, issue.message))
        elif issue.field.startswith("["):
            out.append(FieldIssue(path + issue.field, issue.message))
        else:
            out.append(FieldIssue(f"{path}.{issue.field}" if path else issue.field, issue.message))
    return out


def check_object_name(name: str, *, file_name: bool) -> list[FieldIssue]:
    """`metadata.name` rules: DNS-1123 label when it becomes a file name, else subdomain."""
    if file_name:
        if is_dns1123_label(name):
            return [FieldIssue("metadata.name", dns_label_message(name))]
        return []
    return [FieldIssue("metadata.name", msg) for msg in is_dns1123_subdomain(name)]


def check_namespace(namespace: str | None) -> list[FieldIssue]:
    """Namespaced kinds need an explicit namespace that is a DNS-1123 label."""
    if namespace is None or namespace == "":
        return [FieldIssue("metadata.namespace", "required field is missing")]
    if is_dns1123_label(namespace):
        return [FieldIssue("metadata.namespace", dns_label_message(namespace))]
    return []

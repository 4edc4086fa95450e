"""Identity and size checks for payload documents (the Kubernetes objects under `resources/`).

`payload_identity(body, limits)` returns the object's (group, version, kind, namespace, name)
or the `FieldIssue`s that make it unplaceable: a malformed apiVersion, a missing or invalid
`metadata.name` (Kubernetes path-segment rules, ':' allowed as RBAC names use it), a namespace
that is not a DNS-1123 label, or a canonical-JSON size over `limits.max_object_bytes`.
Called by `gitfleet.load.snapshot`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitfleet.api.errors import FieldIssue
from gitfleet.api.limits import Limits
from gitfleet.api.meta import key_path
from gitfleet.api.names import is_dns1123_label

MAX_NAME_LENGTH = 253
NAME_RULE = (
    "must be a valid object name (1 to 253 characters, no '/', '%' or whitespace, not '.' or '..')"
)


@dataclass(frozen=True)
class PayloadIdentity:
    """Who a payload object is: the key resource selection and duplicate checks use."""

    group: str
    version: str
    kind: str
    namespace: str
    name: str

    def key(self) -> tuple[str, str, str, str]:
        """(group, kind, namespace, name): the same object whatever its version."""
        return (self.group, self.kind, self.namespace, self.name)


MAX_KNOWN = 20_000
"""Payload documents whose identity is remembered (the memo starts afresh beyond it)."""
_known: dict[int, tuple[Mapping[str, Any], Limits, PayloadIdentity | list[FieldIssue]]] = {}
"""id(body) -> (body, limits, identity): the loader hands a long-running hub the very parsed
document of an unchanged file pass after pass (documents are never changed once parsed)."""


def payload_identity(body: Mapping[str, Any], limits: Limits) -> PayloadIdentity | list[FieldIssue]:
    """The identity of a payload document, or every issue that prevents placing it
    (remembered per document object and limits)."""
    found = _known.get(id(body))
    if found is not None and found[0] is body and found[1] == limits:
        return found[2]
    result = _identity(body, limits)
    if len(_known) >= MAX_KNOWN:
        _known.clear()
    _known[id(body)] = (body, limits, result)
    return result


def _identity(body: Mapping[str, Any], limits: Limits) -> PayloadIdentity | list[FieldIssue]:
    issues: list[FieldIssue] = []
    group, version = split_api_version(str(body.get("apiVersion", "")))
    if not version:
        issues.append(FieldIssue("apiVersion", "must be <group>/<version> or <version>"))
    meta = body.get("metadata")
    if not isinstance(meta, Mapping):
        what = "required field is missing" if meta is None else "must be a mapping"
        return [*issues, FieldIssue("metadata", what)]
    name, namespace = meta.get("name"), meta.get("namespace")
    issues += _name_issues(name)
    issues += _namespace_issues(namespace)
    size = canonical_size(body)
    if size > limits.max_object_bytes:
        issues.append(
            FieldIssue(
                "",
                f"object is {size} bytes as JSON, more than limits.maxObjectBytes "
                f"({limits.max_object_bytes})",
            )
        )
    issues += core_data_issues(body)
    if issues:
        return issues
    return PayloadIdentity(group, version, str(body["kind"]), namespace or "", str(name))


def split_api_version(api_version: str) -> tuple[str, str]:
    """`apps/v1` -> ("apps", "v1"); `v1` -> ("", "v1"); malformed -> ("", "")."""
    parts = api_version.split("/")
    if len(parts) == 1 and parts[0]:
        return "", parts[0]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    return "", ""


def canonical_size(body: Mapping[str, Any]) -> int:
    """Size in bytes of the object's canonical JSON (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8"))


def _name_issues(name: Any) -> list[FieldIssue]:
    if name is None:
        return [FieldIssue("metadata.name", "required field is missing")]
    if not isinstance(name, str):
        return [FieldIssue("metadata.name", "must be a string")]
    bad = (
        not name
        or len(name) > MAX_NAME_LENGTH
        or name in (".", "..")
        or any(ch in "/%" or ch.isspace() or not ch.isprintable() for ch in name)
    )
    return [FieldIssue("metadata.name", NAME_RULE)] if bad else []


def _namespace_issues(namespace: Any) -> list[FieldIssue]:
    if namespace is None or namespace == "":
        return []
    if not isinstance(namespace, str):
        return [FieldIssue("metadata.namespace", "must be a string")]
    return [FieldIssue("metadata.namespace", p) for p in is_dns1123_label(namespace)]


def _string_map(body: Mapping[str, Any], field: str, base64_values: bool) -> list[FieldIssue]:
    """Values of `field` must be strings (base64 text for Secret `data`); never echoes values."""
    values = body.get(field)
    if values is None:
        return []
    if not isinstance(values, Mapping):
        return [FieldIssue(field, "must be a mapping of keys to strings")]
    issues = []
    for key, value in values.items():
        where = f"{field}{key_path(str(key))}"
        if not isinstance(value, str):
            issues.append(
                FieldIssue(where, f"must be a string, got {type(value).__name__} (quote it)")
            )
        elif base64_values and not _is_base64(value):
            issues.append(
                FieldIssue(where, "must be base64-encoded (use stringData for plain text)")
            )
    return issues


def _is_base64(text: str) -> bool:
    try:
        base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def core_data_issues(body: Mapping[str, Any]) -> list[FieldIssue]:
    """What the API server would refuse in ConfigMaps and Secrets (core/v1): non-string data
    values and Secret `data` that is not base64. Values are never part of the message."""
    if body.get("apiVersion") != "v1":
        return []
    if body.get("kind") == "ConfigMap":
        return _string_map(body, "data", False) + _string_map(body, "binaryData", True)
    if body.get("kind") == "Secret":
        return _string_map(body, "data", True) + _string_map(body, "stringData", False)
    return []

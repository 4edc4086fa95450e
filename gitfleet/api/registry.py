"""The kind registry: which (apiVersion, kind) pairs are fleet objects, and `parse_object`.

`parse_object` turns one YAML document (a plain mapping) into a validated, frozen kind model, or
into `FieldIssue`s with camelCase dotted paths (`spec.policy.clusterNames[0]`) and friendly
messages; it never raises for bad input. The loader calls it for every fleet document.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, get_args

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from gitfleet.api.cgu import ClusterGroupUpgrade
from gitfleet.api.cluster import ClusterProfile, MemberCluster
from gitfleet.api.distribution import ReplicaDistribution
from gitfleet.api.errors import FieldIssue
from gitfleet.api.eviction import (
    ClusterResourcePlacementDisruptionBudget,
    ClusterResourcePlacementEviction,
)
from gitfleet.api.fleet import Fleet
from gitfleet.api.meta import KubeObject, key_path
from gitfleet.api.override import ClusterResourceOverride, ResourceOverride
from gitfleet.api.placement import ClusterResourcePlacement, ResourcePlacement
from gitfleet.api.report import AgentReport
from gitfleet.api.staged import (
    ApprovalRequest,
    ClusterApprovalRequest,
    ClusterStagedUpdateRun,
    ClusterStagedUpdateStrategy,
    StagedUpdateRun,
    StagedUpdateStrategy,
)
from gitfleet.api.tenant import DeletionApproval, Tenant
from gitfleet.api.versions import version_issues

_CLASSES: tuple[type[KubeObject], ...] = (
    MemberCluster,
    ClusterProfile,
    ClusterResourcePlacement,
    ResourcePlacement,
    ClusterResourceOverride,
    ResourceOverride,
    ClusterStagedUpdateStrategy,
    ClusterStagedUpdateRun,
    ClusterApprovalRequest,
    StagedUpdateStrategy,
    StagedUpdateRun,
    ApprovalRequest,
    ClusterResourcePlacementEviction,
    ClusterResourcePlacementDisruptionBudget,
    Fleet,
    AgentReport,
    ClusterGroupUpgrade,
    ReplicaDistribution,
    Tenant,
    DeletionApproval,
)

FLEET_GROUPS = frozenset(
    {"placement.kubernetes-fleet.io", "cluster.kubernetes-fleet.io", "gitfleet.io"}
)
"""Groups reserved for fleet objects. multicluster.x-k8s.io is not reserved as a whole (its
ServiceExport/ServiceImport are ordinary payload); only ClusterProfile there is a fleet kind."""

PAYLOAD_KINDS_IN_FLEET_GROUPS = frozenset({"ResourceEnvelope", "ClusterResourceEnvelope"})
"""Kinds of fleet groups that are placed like any resource (envelopes, §6.5)."""


def _kinds() -> dict[tuple[str, str], type[KubeObject]]:
    table: dict[tuple[str, str], type[KubeObject]] = {}
    for cls in _CLASSES:
        (kind,) = get_args(cls.model_fields["kind"].annotation)
        for version in get_args(cls.model_fields["api_version"].annotation):
            table[(version, kind)] = cls
    return table


KINDS: Mapping[tuple[str, str], type[KubeObject]] = MappingProxyType(_kinds())
"""(apiVersion, kind) -> model class."""


def _group(api_version: str) -> str:
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def is_fleet_kind(api_version: str, kind: str) -> bool:
    """Whether the pair is a kind gitfleet reads."""
    return (api_version, kind) in KINDS


def is_fleet_group(api_version: str) -> bool:
    """Whether the apiVersion's group is reserved for fleet objects (any version).

    A document of such a group with an unknown kind is an error, not payload, except the
    envelope kinds (see `is_payload_kind`).
    """
    return _group(api_version) in FLEET_GROUPS


def is_payload_kind(api_version: str, kind: str) -> bool:
    """Whether a document is payload: not a fleet kind and not a typo in a fleet group."""
    if is_fleet_kind(api_version, kind):
        return False
    return not is_fleet_group(api_version) or kind in PAYLOAD_KINDS_IN_FLEET_GROUPS


def _type_issues(body: Mapping[str, Any]) -> list[FieldIssue]:
    """apiVersion/kind must be strings naming a known fleet kind."""
    api_version, kind = body.get("apiVersion"), body.get("kind")
    issues: list[FieldIssue] = []
    for field, value in (("apiVersion", api_version), ("kind", kind)):
        if value is None:
            issues.append(FieldIssue(field, "required field is missing"))
        elif not isinstance(value, str):
            issues.append(FieldIssue(field, f"must be a string, got {_describe(value)}"))
    if issues or not isinstance(api_version, str) or not isinstance(kind, str):
        return issues
    if (api_version, kind) in KINDS:
        return []
    versions = sorted(v for v, k in KINDS if k == kind)
    if versions:
        return [FieldIssue("apiVersion", f"{kind} must use apiVersion {' or '.join(versions)}")]
    known = sorted({k for v, k in KINDS if _group(v) == _group(api_version)})
    if known:
        return [
            FieldIssue(
                "kind", f'unknown kind "{kind}" in {api_version} (known kinds: {", ".join(known)})'
            )
        ]
    return [FieldIssue("kind", f'"{api_version}" "{kind}" is not a fleet kind')]


def parse_object(body: Mapping[str, Any]) -> tuple[KubeObject | None, list[FieldIssue]]:
    """Validate one document; (model, []) when valid, else (None, issues)."""
    if not isinstance(body, Mapping):
        return None, [FieldIssue("", f"must be a mapping, got {_describe(body)}")]
    issues = _type_issues(body)
    if issues:
        return None, issues
    cls = KINDS[(body["apiVersion"], body["kind"])]
    served = version_issues(body["apiVersion"], body["kind"], body)
    if served:
        return None, [FieldIssue(field, message) for field, message in served]
    try:
        model = cls.model_validate(dict(body))
    except ValidationError as exc:
        return None, [_convert(err) for err in exc.errors(include_url=False)]
    issues = model.validate_rules()
    return (None, issues) if issues else (model, [])


_TAG_RE = re.compile(r"[a-z-]+\[.*\]")


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for i, part in enumerate(loc):
        is_key = i + 1 < len(loc) and loc[i + 1] == "[key]"
        if isinstance(part, int) and not is_key:
            out += f"[{part}]"
        elif part == "[key]" or (isinstance(part, str) and _TAG_RE.fullmatch(part)):
            continue
        else:
            out += key_path(str(part))
    return out.removeprefix(".")


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def _literal_message(err: ErrorDetails) -> str:
    expected = str((err.get("ctx") or {}).get("expected", ""))
    choices = re.findall(r"'([^']*)'", expected)
    message = f"must be one of: {', '.join(choices)}" if choices else err["msg"]
    if isinstance(err["input"], bool) and {"True", "False"} & set(choices):
        message += f' (quote it: "{err["input"]}")'
    return message


_SIMPLE = {
    "missing": "required field is missing",
    "int_type": "must be an integer",
    "int_from_float": "must be an integer",
    "int_parsing": "must be an integer",
    "float_type": "must be a number",
    "bool_type": "must be a boolean (true or false)",
    "list_type": "must be a list",
    "dict_type": "must be a mapping",
    "model_type": "must be a mapping",
    "model_attributes_type": "must be a mapping",
    "string_type": "must be a string",
}

_BOUNDS = {
    "greater_than_equal": ("ge", "must be >= {}"),
    "greater_than": ("gt", "must be > {}"),
    "less_than_equal": ("le", "must be <= {}"),
    "less_than": ("lt", "must be < {}"),
    "too_short": ("min_length", "must have at least {} item(s)"),
    "too_long": ("max_length", "must have at most {} item(s)"),
    "string_too_short": ("min_length", "must be at least {} character(s) long"),
    "string_too_long": ("max_length", "must be at most {} characters long"),
}


def _message(err: ErrorDetails) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind == "extra_forbidden":
        name = err["loc"][-1] if err["loc"] else ""
        return f'unknown field "{name}"'
    if kind == "literal_error":
        return _literal_message(err)
    if kind == "value_error" and "error" in ctx:
        return str(ctx["error"])
    if kind in _SIMPLE:
        message = _SIMPLE[kind]
        if kind != "missing":
            message += f", got {_describe(err['input'])}"
        return message
    if kind in _BOUNDS:
        key, template = _BOUNDS[kind]
        return template.format(ctx.get(key))
    return err["msg"]


def _convert(err: ErrorDetails) -> FieldIssue:
    loc = tuple(err["loc"])
    message = _message(err)
    if loc and loc[-1] == "[key]":
        message = "mapping key " + message
    return FieldIssue(_path(loc), message)

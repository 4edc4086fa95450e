"""Envelopes: ResourceEnvelope / ClusterResourceEnvelope objects that wrap other manifests.

An envelope (group `placement.kubernetes-fleet.io`, field `data: map[string]object`) is selected
like any resource, but it is not applied itself: the objects it wraps are (kubefleet.md §6.5).
`check_envelope` finds what is wrong with one (the index calls it once per pass, so a bad envelope
is a per-resource error); `unwrap_envelope` returns the wrapped manifests in KubeFleet's order (by
canonical JSON, descending) for the pass to write to cluster directories.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitfleet.api.canonical import canonical_json
from gitfleet.api.errors import FieldIssue
from reconciler.select.model import ENVELOPE_GROUP, SelectedResource
from reconciler.select.scope import BUILTIN_SCOPES, ScopeTable
from reconciler.select.strip import copy_json

CLUSTER_ENVELOPE = "ClusterResourceEnvelope"
NAMESPACED_ENVELOPE = "ResourceEnvelope"


def is_envelope(group: str, kind: str) -> bool:
    return group == ENVELOPE_GROUP and kind in (CLUSTER_ENVELOPE, NAMESPACED_ENVELOPE)


def check_envelope(
    obj: Mapping[str, Any], kind: str, namespace: str, scopes: ScopeTable = BUILTIN_SCOPES
) -> list[FieldIssue]:
    """Every rule a wrapped manifest breaks, as issues relative to the envelope object."""
    data = obj.get("data")
    if data is None:
        return []
    if not isinstance(data, Mapping):
        return [FieldIssue("data", "must be a map of manifest name to object")]
    issues: list[FieldIssue] = []
    for key in sorted(data, key=str):
        issue = _check_wrapped(str(key), data[key], kind, namespace, scopes)
        if issue is not None:
            issues.append(issue)
    return issues


def unwrap_envelope(
    sel: SelectedResource, scopes: ScopeTable | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """The wrapped manifests (new dicts, KubeFleet order) and the errors (`field: message`).

    All-or-nothing: when any wrapped manifest is invalid, no manifest is returned. Pass the
    index's scope table (`ResourceIndex.scopes`) so CRD-declared kinds are judged correctly.
    """
    if not sel.is_envelope:
        return [], [f"{sel.api_version} {sel.kind} {sel.name} is not an envelope"]
    issues = check_envelope(sel.obj, sel.kind, sel.namespace, scopes or BUILTIN_SCOPES)
    if issues:
        return [], [f"{issue.field}: {issue.message}" for issue in issues]
    data = sel.obj.get("data") or {}
    try:
        encoded = [(canonical_json(value), value) for value in data.values()]
    except (TypeError, ValueError) as exc:
        return [], [f"data: a wrapped manifest cannot be encoded as JSON ({type(exc).__name__})"]
    encoded.sort(key=lambda pair: pair[0], reverse=True)
    return [copy_json(value) for _, value in encoded], []


def _check_wrapped(
    key: str, value: Any, envelope_kind: str, envelope_ns: str, scopes: ScopeTable
) -> FieldIssue | None:
    path = f"data.{key}"
    if not isinstance(value, Mapping):
        return FieldIssue(path, "a wrapped manifest must be an object")
    api_version, kind = value.get("apiVersion"), value.get("kind")
    meta = value.get("metadata")
    if not isinstance(api_version, str) or not api_version:
        return FieldIssue(f"{path}.apiVersion", "a wrapped manifest needs an apiVersion")
    if not isinstance(kind, str) or not kind:
        return FieldIssue(f"{path}.kind", "a wrapped manifest needs a kind")
    if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str) or not meta["name"]:
        return FieldIssue(f"{path}.metadata.name", "a wrapped manifest needs a metadata.name")
    namespace = meta.get("namespace") or ""
    if not isinstance(namespace, str):
        return FieldIssue(f"{path}.metadata.namespace", "must be a string")
    group = api_version.rpartition("/")[0]
    cluster_scoped = scopes.is_cluster_scoped(group, kind)
    ref = f"{api_version} {kind} {namespace + '/' if namespace else ''}{meta['name']}"
    if envelope_kind == CLUSTER_ENVELOPE:
        if namespace or not cluster_scoped:
            return FieldIssue(
                path, f"a namespaced object ({ref}) has been wrapped in a cluster resource envelope"
            )
        return None
    if cluster_scoped:
        return FieldIssue(
            path, f"a cluster scope object ({ref}) has been wrapped in a resource envelope"
        )
    if not namespace:
        return FieldIssue(
            f"{path}.metadata.namespace",
            f"a namespaced object ({ref}) in a resource envelope must set metadata.namespace: "
            f"{envelope_ns}",
        )
    if namespace != envelope_ns:
        return FieldIssue(
            path,
            f"a namespaced object ({ref}) has been wrapped in a resource envelope from another "
            f"namespace ({envelope_ns})",
        )
    return None

"""Strip server-managed fields from a manifest before it goes into a resource snapshot.

Implements KubeFleet's `generateRawContent` (kubefleet.md §7.2), including the Service and Job
special cases. The input is never mutated: a new, deep-copied dict is returned. Called once per
payload object per pass by `reconciler.select.index.build_index`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_METADATA_DROPPED = (
    "resourceVersion",
    "generation",
    "uid",
    "selfLink",
    "deletionTimestamp",
    "managedFields",
    "ownerReferences",
    "creationTimestamp",
)
_ANNOTATIONS_DROPPED = (
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision",
)
_JOB_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")


def copy_json(value: Any) -> Any:
    """Deep copy of plain JSON-like data (dicts become plain dicts, lists stay lists)."""
    if isinstance(value, Mapping):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [copy_json(item) for item in value]
    return value


def strip_object(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `obj` without the fields KubeFleet drops when snapshotting it."""
    out: dict[str, Any] = copy_json(obj)
    out.pop("status", None)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        _strip_metadata(meta)
    api_version, kind = out.get("apiVersion"), out.get("kind")
    if (api_version, kind) == ("v1", "Service"):
        _strip_service(out)
    elif (api_version, kind) == ("batch/v1", "Job"):
        _strip_job(out)
    return out


def _strip_metadata(meta: dict[str, Any]) -> None:
    for key in _METADATA_DROPPED:
        meta.pop(key, None)
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        for key in _ANNOTATIONS_DROPPED:
            annotations.pop(key, None)
        if not annotations:
            del meta["annotations"]


def _strip_service(svc: dict[str, Any]) -> None:
    spec = svc.get("spec")
    if not isinstance(spec, dict):
        return
    if "clusterIP" in spec and spec["clusterIP"] != "None":
        spec.pop("clusterIP")
        spec.pop("clusterIPs", None)
    spec.pop("healthCheckNodePort", None)
    ports = spec.get("ports")
    if isinstance(ports, list):
        for port in ports:
            if isinstance(port, dict):
                port.pop("nodePort", None)


def _strip_job(job: dict[str, Any]) -> None:
    spec = job.get("spec")
    if not isinstance(spec, dict) or spec.get("manualSelector") is True:
        return
    match_labels = _nested_dict(spec, "selector", "matchLabels")
    template_meta = _nested_dict(spec, "template", "metadata")
    template_labels = _nested_dict(spec, "template", "metadata", "labels")
    for label in _JOB_UID_LABELS:
        if match_labels is not None:
            match_labels.pop(label, None)
        if template_labels is not None:
            template_labels.pop(label, None)
    if template_meta is not None:
        template_meta.pop("creationTimestamp", None)


def _nested_dict(root: dict[str, Any], *path: str) -> dict[str, Any] | None:
    node: Any = root
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None

"""PlacementDecision and ClusterProfile documents for the output tree (KEP-5313, KEP-4322).

`decision_documents` publishes one placement's selected clusters as PlacementDecision slices
(multicluster.x-k8s.io/v1alpha1, at most 100 clusters each, clusters sorted by name, labels
decision-key / placement-key, decision-index when there is more than one slice, a common
`gitfleet.io/decision-revision` annotation). `cluster_profile_documents` gives the ClusterProfile
each decision references. Pure functions returning `(path, document)`; the caller serialises them.
Called by the pass when it assembles the output tree.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from reconciler.schedule.clusters import ClusterView

API_VERSION = "multicluster.x-k8s.io/v1alpha1"
SCHEDULER_NAME = "gitfleet"
CLUSTER_MANAGER = "gitfleet"
PROFILE_NAMESPACE = "fleet-system"
"""Where the ClusterProfiles live (KubeFleet's system namespace)."""
MAX_PER_SLICE = 100
DECISION_KEY = "multicluster.x-k8s.io/decision-key"
PLACEMENT_KEY = "multicluster.x-k8s.io/placement-key"
DECISION_INDEX = "multicluster.x-k8s.io/decision-index"
CLUSTER_MANAGER_LABEL = "x-k8s.io/cluster-manager"
REVISION_ANNOTATION = "gitfleet.io/decision-revision"
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def label_value(text: str) -> str:
    """`text` when it is a valid label value, else a 63-character prefix-plus-hash form."""
    if len(text) <= 63 and _LABEL_VALUE.match(text):
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    head = re.sub(r"[^-A-Za-z0-9_.]", "-", text)[:54].strip("-_.") or "x"
    return f"{head}-{digest}"


def decision_entry(cluster: str, reason: str | None, profile_ns: str) -> dict[str, Any]:
    """One ClusterDecision: a full ObjectReference to the ClusterProfile, as the KEP shows."""
    ref = {"apiVersion": API_VERSION, "kind": "ClusterProfile", "name": cluster}
    ref["namespace"] = profile_ns
    entry: dict[str, Any] = {"clusterProfileRef": ref}
    if reason:
        entry["reason"] = reason
    return entry


def decision_documents(
    placement_key: str,
    placement_name: str,
    namespace: str,
    clusters: Sequence[str],
    revision: str,
    reasons: Mapping[str, str] | None = None,
    profile_namespace: str = PROFILE_NAMESPACE,
) -> list[tuple[str, dict[str, Any]]]:
    """`decisions/<placement_key>-<i>.yaml` slices for the selected `clusters` (always at least
    one slice, so "no clusters" is published too). `reasons` maps a cluster to our scheduler
    reason. `placement_name` is kept in an annotation for readers. PlacementDecision is
    namespaced: a ResourcePlacement's decisions live in its namespace, a cluster-scoped
    placement's (`namespace` '') in `profile_namespace` (fleet-system)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for path, doc, chunk in decision_slices(
        placement_key, placement_name, namespace, clusters, revision, profile_namespace
    ):
        entries = [decision_entry(c, (reasons or {}).get(c), profile_namespace) for c in chunk]
        out.append((path, {**doc, "decisions": entries}))
    return out


def decision_slices(
    placement_key: str,
    placement_name: str,
    namespace: str,
    clusters: Sequence[str],
    revision: str,
    profile_namespace: str = PROFILE_NAMESPACE,
) -> list[tuple[str, dict[str, Any], list[str]]]:
    """(path, document without its `decisions`, the slice's clusters) of every slice
    (`decision_documents`; `publish` writes the entries from kept per-cluster texts)."""
    namespace = namespace or profile_namespace
    ordered = sorted(set(clusters))
    chunks = [ordered[i : i + MAX_PER_SLICE] for i in range(0, len(ordered), MAX_PER_SLICE)]
    chunks = chunks or [[]]
    out: list[tuple[str, dict[str, Any], list[str]]] = []
    for index, chunk in enumerate(chunks):
        labels = {
            DECISION_KEY: label_value(placement_key),
            PLACEMENT_KEY: label_value(placement_key),
        }
        if len(chunks) > 1:
            labels[DECISION_INDEX] = str(index)
        doc = {
            "apiVersion": API_VERSION,
            "kind": "PlacementDecision",
            "metadata": {
                "name": f"{placement_key}-{index}",
                "namespace": namespace,
                "labels": labels,
                "annotations": {
                    REVISION_ANNOTATION: revision,
                    "gitfleet.io/placement": placement_name,
                },
            },
            "schedulerName": SCHEDULER_NAME,
        }
        out.append((f"decisions/{placement_key}-{index}.yaml", doc, chunk))
    return out


def _properties(view: ClusterView) -> list[dict[str, str]]:
    status = view.cluster.status
    props = (status.properties if status is not None else None) or {}
    return [{"name": name, "value": props[name].value} for name in sorted(props)]


def cluster_profile_documents(
    views: Mapping[str, ClusterView], namespace: str = PROFILE_NAMESPACE
) -> list[tuple[str, dict[str, Any]]]:
    """`clusterprofiles/<name>.yaml`: one ClusterProfile per member cluster, carrying its labels
    and reported properties (no timestamps, so an unchanged cluster rewrites no byte)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for name in sorted(views):
        view = views[name]
        labels = {**dict(view.labels), CLUSTER_MANAGER_LABEL: CLUSTER_MANAGER}
        doc: dict[str, Any] = {
            "apiVersion": API_VERSION,
            "kind": "ClusterProfile",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": dict(sorted(labels.items())),
            },
            "spec": {"displayName": name, "clusterManager": {"name": CLUSTER_MANAGER}},
        }
        properties = _properties(view)
        if properties:
            doc["status"] = {"properties": properties}
        out.append((f"clusterprofiles/{name}.yaml", doc))
    return out

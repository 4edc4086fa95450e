"""PlacementDecision and ClusterProfile documents for the output tree (KEP-5313, KEP-4322).

`decision_documents` publishes one placement's selected clusters as PlacementDecision slices
(multicluster.x-k8s.io/v1alpha1, at most 100 clusters each, clusters sorted by name inside a
slice). Up to 100 clusters are one slice, `<key>-0`; more are cut into stable hash shards
(`gitfleet.api.shards`): shard i is slice `<key>-<i>` and a cluster stays in its slice while
others come and go, so one cluster joining or leaving rewrites one slice (until the shard count
crosses a power of two). An empty shard writes no slice; a shard beyond 100 clusters spills its
further sorted chunks into slices `count * k + i` (k = 1, 2, ...). Labels: decision-key,
placement-key, and decision-index on every slice of a sharded placement. Each slice carries its
own `gitfleet.io/decision-revision`: a hash of that slice's cluster list (`slice_revision`), so
it changes exactly when the slice's membership does. `cluster_profile_documents` gives the
ClusterProfile each decision references. Pure functions returning `(path, document)`; the caller
serialises them. Called by the pass when it assembles the output tree (`reconciler.publish`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from gitfleet.api.shards import SHARD_TARGET, shard_count, shard_names
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
"""A hash of the slice's own cluster list (`slice_revision`): changes with its membership."""
SLICE_TARGET = SHARD_TARGET
"""Average clusters a shard of a sharded placement aims at (tests force a smaller one)."""
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


def slice_revision(clusters: Sequence[str]) -> str:
    """The `decision-revision` of a slice listing `clusters` (in its order)."""
    return hashlib.sha256("\n".join(clusters).encode()).hexdigest()[:16]


def slice_count(members: int) -> int:
    """How many shards a placement with `members` distinct clusters is cut into (1: one slice)."""
    return shard_count(members, SLICE_TARGET)


def cluster_shards(ordered: Sequence[str]) -> list[list[str]]:
    """The sorted distinct clusters `ordered` cut into `slice_count(len(ordered))` shards (each
    sorted; list position is the shard)."""
    return shard_names(list(ordered), SLICE_TARGET)


def slice_path(placement_key: str, index: int) -> str:
    """The output path of the placement's slice `index`."""
    return f"decisions/{placement_key}-{index}.yaml"


def shard_slices(shard: Sequence[str], index: int, count: int) -> list[tuple[int, list[str]]]:
    """(slice index, clusters) of shard `index` of `count`, its clusters sorted: chunks of
    `MAX_PER_SLICE`, the k-th at index `count * k + index`. An empty shard has no slice, but
    for the only one (a placement with no clusters publishes an empty slice)."""
    chunks = [list(shard[at : at + MAX_PER_SLICE]) for at in range(0, len(shard), MAX_PER_SLICE)]
    if not chunks and count == 1:
        chunks = [[]]
    return [(count * k + index, chunk) for k, chunk in enumerate(chunks)]


def decision_documents(
    placement_key: str,
    placement_name: str,
    namespace: str,
    clusters: Sequence[str],
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
        placement_key, placement_name, namespace, clusters, profile_namespace
    ):
        entries = [decision_entry(c, (reasons or {}).get(c), profile_namespace) for c in chunk]
        out.append((path, {**doc, "decisions": entries}))
    return out


def decision_slices(
    placement_key: str,
    placement_name: str,
    namespace: str,
    clusters: Sequence[str],
    profile_namespace: str = PROFILE_NAMESPACE,
) -> list[tuple[str, dict[str, Any], list[str]]]:
    """(path, document without its `decisions`, the slice's clusters) of every slice, by index
    (`decision_documents`; `publish` writes the entries from kept per-cluster texts)."""
    shards = cluster_shards(sorted(set(clusters)))
    out: list[tuple[str, dict[str, Any], list[str]]] = []
    for i, shard in enumerate(shards):
        out += shard_documents(
            placement_key, placement_name, namespace, shard, i, len(shards), profile_namespace
        )
    return sorted(out, key=_index_of)


def _index_of(item: tuple[str, dict[str, Any], list[str]]) -> int:
    """A slice's index (a placement with one slice has no index label)."""
    return int(item[1]["metadata"]["labels"].get(DECISION_INDEX, 0))


def shard_documents(
    placement_key: str,
    placement_name: str,
    namespace: str,
    shard: Sequence[str],
    index: int,
    count: int,
    profile_namespace: str = PROFILE_NAMESPACE,
) -> list[tuple[str, dict[str, Any], list[str]]]:
    """`decision_slices` of the one shard `index` of `count`, whose (sorted) clusters are
    `shard`: a slice's bytes follow from its shard alone."""
    chunks = shard_slices(shard, index, count)
    out: list[tuple[str, dict[str, Any], list[str]]] = []
    for at, chunk in chunks:
        labels = {
            DECISION_KEY: label_value(placement_key),
            PLACEMENT_KEY: label_value(placement_key),
        }
        if count > 1 or len(chunks) > 1:
            labels[DECISION_INDEX] = str(at)
        doc = {
            "apiVersion": API_VERSION,
            "kind": "PlacementDecision",
            "metadata": {
                "name": f"{placement_key}-{at}",
                "namespace": namespace or profile_namespace,
                "labels": labels,
                "annotations": {
                    REVISION_ANNOTATION: slice_revision(chunk),
                    "gitfleet.io/placement": placement_name,
                },
            },
            "schedulerName": SCHEDULER_NAME,
        }
        out.append((slice_path(placement_key, at), doc, chunk))
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

"""The workload kinds a ReplicaDistribution can drive, and one cluster's rendering of the workload
(spec/replica-distribution.md §2 table, §6.1).

`partition_path` names where a kind keeps its partition (None: Deployment, not written);
`render_workload` applies subset content (node affinity, tolerations, patch), then the owned
fields (replicas, partition) and the `gitfleet.io/replica-distribution` / `gitfleet.io/subset`
annotations to the object as the cluster's overrides left it. Pure; called by the pass glue.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitfleet.api.canonical import content_hash
from gitfleet.api.distribution import Subset
from reconciler.distribute.patch import add_node_affinity, add_tolerations, merge_patch

RD_ANNOTATION = "gitfleet.io/replica-distribution"
SUBSET_ANNOTATION = "gitfleet.io/subset"

_STATEFULSET = ("updateStrategy", "rollingUpdate", "partition")
SUPPORTED: Mapping[tuple[str, str], tuple[str, ...] | None] = {
    ("apps/v1", "Deployment"): None,
    ("apps/v1", "StatefulSet"): _STATEFULSET,
    ("apps.kruise.io/v1beta1", "StatefulSet"): _STATEFULSET,
    ("apps.kruise.io/v1alpha1", "StatefulSet"): _STATEFULSET,
    ("apps.kruise.io/v1alpha1", "CloneSet"): ("updateStrategy", "partition"),
    ("apps.kruise.io/v1beta1", "CloneSet"): ("updateStrategy", "rollingUpdate", "partition"),
}
"""(apiVersion, kind) -> partition path under `spec` (None: partitions are not written)."""


def is_supported(api_version: str, kind: str) -> bool:
    return (api_version, kind) in SUPPORTED


def partition_path(obj: Mapping[str, Any]) -> tuple[str, ...] | None:
    """Where this object's partition goes, or None when it must not be written (§2, §1.7)."""
    path = SUPPORTED.get((str(obj.get("apiVersion")), str(obj.get("kind"))))
    if path is None:
        return None
    if path == _STATEFULSET:
        strategy = (obj.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type") not in (None, "RollingUpdate"):
            return None
    return path


@dataclass(frozen=True)
class ClusterResult:
    """What the distribution decides for one cluster (§6.2, "the RD result")."""

    subset: str | None
    replicas: int
    partition: int | None
    """p_c when it is written into the object, else None."""
    content: str
    """Digest of the subset's node selector term, tolerations and patch ('' when none)."""


def subset_digest(subset: Subset | None) -> str:
    if subset is None:
        return ""
    term = subset.node_selector_term
    content = {
        "nodeSelectorTerm": term.dump() if term is not None else None,
        "tolerations": subset.tolerations,
        "patch": subset.patch,
    }
    if not any(content.values()):
        return ""
    return content_hash(content).removeprefix("sha256:")[:16]


def _set_path(spec: dict[str, Any], path: tuple[str, ...], value: int) -> None:
    node = spec
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[path[-1]] = value


def _subset_template(template: Mapping[str, Any], subset: Subset) -> dict[str, Any]:
    out = dict(template)
    term = subset.node_selector_term
    if term is not None and term.match_expressions:
        out = add_node_affinity(out, [e.dump() for e in term.match_expressions])
    if subset.tolerations:
        out = add_tolerations(out, subset.tolerations)
    if subset.patch:
        out = merge_patch(out, subset.patch)
    return out


def render_workload(
    obj: Mapping[str, Any],
    subset: Subset | None,
    result: ClusterResult,
    distribution: str,
) -> dict[str, Any]:
    """The workload for one cluster: subset content, owned fields, annotations (§6.1)."""
    out = copy.deepcopy(dict(obj))
    spec = out.get("spec")
    spec = dict(spec) if isinstance(spec, Mapping) else {}
    if subset is not None:
        template = spec.get("template")
        spec["template"] = _subset_template(
            template if isinstance(template, Mapping) else {}, subset
        )
    spec["replicas"] = result.replicas
    path = partition_path(out)
    if result.partition is not None and path is not None:
        _set_path(spec, path, result.partition)
    out["spec"] = spec
    meta = dict(out.get("metadata") or {})
    annotations = dict(meta.get("annotations") or {})
    annotations[RD_ANNOTATION] = distribution
    if result.subset is not None:
        annotations[SUBSET_ANNOTATION] = result.subset
    meta["annotations"] = dict(sorted(annotations.items()))
    out["metadata"] = meta
    return out

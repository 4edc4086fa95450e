"""Every apiVersion KubeFleet serves, and conversion of each version's fields to one model.

KubeFleet's CRDs (`config/crd/bases/` in kubefleet-dev/kubefleet) serve several versions of
most kinds; v1beta1 is the storage version. Each gitfleet kind class is the internal model
(the v1beta1 shape) and lists every served version in its `apiVersion` Literal. Where an older
or newer version lacks fields that v1beta1 has, `VERSION_ONLY_FIELDS` names them: a document
of that version that sets one is refused (its version does not have the field, exactly as the
API server's schema refuses it), and a document that does not is converted to the internal
model unchanged. The served versions, checked against the CRDs:

| kind | served versions | fields only in v1beta1 |
|---|---|---|
| MemberCluster | v1, v1beta1 | spec.deleteOptions |
| ClusterResourcePlacement, ResourcePlacement | v1, v1beta1 | spec.strategy.deleteStrategy, spec.strategy.reportBackStrategy |
| ClusterResourceOverride, ResourceOverride | v1, v1alpha1, v1beta1 | - |
| ClusterResourcePlacementEviction, ...DisruptionBudget | v1alpha1, v1beta1 | - |

`parse_object` (gitfleet.api.registry) calls `version_issues` before model validation.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

PLACEMENT_GROUP = "placement.kubernetes-fleet.io"
CLUSTER_GROUP = "cluster.kubernetes-fleet.io"
STORAGE_VERSION = "v1beta1"

_PLACEMENT_V1_MISSING = ("spec.strategy.deleteStrategy", "spec.strategy.reportBackStrategy")

VERSION_ONLY_FIELDS: Mapping[tuple[str, str], tuple[str, ...]] = MappingProxyType(
    {
        (f"{CLUSTER_GROUP}/v1", "MemberCluster"): ("spec.deleteOptions",),
        (f"{PLACEMENT_GROUP}/v1", "ClusterResourcePlacement"): _PLACEMENT_V1_MISSING,
        (f"{PLACEMENT_GROUP}/v1", "ResourcePlacement"): _PLACEMENT_V1_MISSING,
    }
)
"""(apiVersion, kind) -> dotted paths that exist in v1beta1 but not in that version."""


def _lookup(body: Mapping[str, Any], path: str) -> bool:
    node: Any = body
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def version_issues(api_version: str, kind: str, body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for each field `body` sets that its apiVersion does not serve."""
    out: list[tuple[str, str]] = []
    group = api_version.split("/", 1)[0]
    for path in VERSION_ONLY_FIELDS.get((api_version, kind), ()):
        if _lookup(body, path):
            leaf = path.rsplit(".", 1)[-1]
            out.append(
                (
                    path,
                    f'unknown field "{leaf}": {kind} {api_version} does not have it '
                    f"(it exists in {group}/{STORAGE_VERSION}; use that apiVersion)",
                )
            )
    return out

"""KubeFleet overrides: ClusterResourceOverride and ResourceOverride applied per cluster.

`build_override_index` validates overrides across objects and compiles them once per pass;
`OverrideIndex.for_placement` gives a placement's `PlacementOverrides`, whose `applicable(view)`
lists the override keys kept for a cluster (binding/status) and whose `apply(sel, view)` returns
the memoised `Applied` object for a cluster. `next_override_snapshots` / `snapshot_name` track
override snapshot indexes. Pure: no I/O, no clock. Called by the reconcile pass
(`reconciler.placement`). Semantics: kubefleet.md §3 and robustness.md §3.
"""

from reconciler.override.apply import PlacementOverrides
from reconciler.override.cache import Applied, OverrideCache
from reconciler.override.compiled import CompiledOverride, override_key, spec_hash
from reconciler.override.envelope import wrapped_resource
from reconciler.override.index import (
    MAX_CLUSTER_RESOURCE_OVERRIDES,
    MAX_RESOURCE_OVERRIDES,
    OverrideIndex,
    build_override_index,
)
from reconciler.override.patch import MAX_PATCH_OPS_PER_OBJECT
from reconciler.override.snapshots import next_override_snapshots, snapshot_name
from reconciler.override.variables import LABEL_PREFIX, NAME_VARIABLE

__all__ = [
    "LABEL_PREFIX",
    "MAX_CLUSTER_RESOURCE_OVERRIDES",
    "MAX_PATCH_OPS_PER_OBJECT",
    "MAX_RESOURCE_OVERRIDES",
    "NAME_VARIABLE",
    "Applied",
    "CompiledOverride",
    "OverrideCache",
    "OverrideIndex",
    "PlacementOverrides",
    "build_override_index",
    "next_override_snapshots",
    "override_key",
    "snapshot_name",
    "spec_hash",
    "wrapped_resource",
]

"""Resource selection and resource snapshots: which payload objects each placement places.

`build_index` (once per pass) scopes, strips, encodes and indexes every object from `resources/`;
`select_resources` (once per placement) applies KubeFleet's selector rules and returns a sorted,
hashed `Selection`; `unwrap_envelope` opens ResourceEnvelope / ClusterResourceEnvelope objects.
Called by the reconcile pass. Pure: imports only `gitfleet.api` (and `gitfleet.load` types).
"""

from gitfleet.api.canonical import canonical_json
from reconciler.select.envelope import check_envelope, is_envelope, unwrap_envelope
from reconciler.select.index import IndexEntry, ResourceIndex, build_index
from reconciler.select.model import (
    INVALID_RESOURCE_SELECTORS,
    ResourceIssue,
    SelectedResource,
    Selection,
)
from reconciler.select.order import KIND_ORDER, sort_key
from reconciler.select.policy import is_disabled, is_reserved_namespace
from reconciler.select.protocols import PlacementLike, SelectorTermLike
from reconciler.select.scope import BUILTIN_CLUSTER_SCOPED, ScopeTable, build_scope_table
from reconciler.select.selector import (
    NO_READS,
    Reads,
    changed_lookups,
    hash_selection,
    select_reading,
    select_resources,
)
from reconciler.select.strip import strip_object

__all__ = [
    "BUILTIN_CLUSTER_SCOPED",
    "INVALID_RESOURCE_SELECTORS",
    "KIND_ORDER",
    "NO_READS",
    "IndexEntry",
    "PlacementLike",
    "Reads",
    "ResourceIndex",
    "ResourceIssue",
    "ScopeTable",
    "SelectedResource",
    "Selection",
    "SelectorTermLike",
    "build_index",
    "build_scope_table",
    "canonical_json",
    "changed_lookups",
    "check_envelope",
    "hash_selection",
    "is_disabled",
    "is_envelope",
    "is_reserved_namespace",
    "select_reading",
    "select_resources",
    "sort_key",
    "strip_object",
    "unwrap_envelope",
]

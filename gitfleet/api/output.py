"""The output branch contract (DESIGN.md §2): its paths and the documents gitfleet writes there.

Contract version `OUTPUT_API_VERSION` (gitfleet.io/v1alpha2):

```
clusters/<cluster>/index.yaml             ClusterIndex: the placements bound to the cluster (key,
                                          name, snapshot indexes, content hash, and the apply
                                          strategy when it is not the default: `indexrow`)
clusters/<cluster>/<key>/index.yaml       PlacementIndex: the placement's objects on that cluster,
                                          identity and file (the same bytes, so the same git blob,
                                          on every cluster that gets the same objects)
clusters/<cluster>/<key>/<file>.yaml      one object a file; object file names always hold a '_'
                                          (`<kind>[.<group>]_[<namespace>_]<name>.yaml`), so they
                                          never equal `index.yaml`
status/placements/<key>.yaml              the placement with its status; clusters whose entries
                                          are identical (nothing failed, drifted or diffed) are
                                          grouped (`expand_cluster_statuses` gives KubeFleet's
                                          one-entry-a-cluster list back)
status/clusters/<name>.yaml               the MemberCluster with its status
status/hub.yaml                           HubStatus, only while the hub refuses the source tip
                                          (`gitfleet.api.hubstatus`)
state/placements/<key>.yaml, state/overrides.yaml   the hub's own memory; a placement with more
                                          than 100 bindings (one a cluster) keeps them out of it,
                                          in `bindingShards` shard files:
state/bindings/<key>/<i>.yaml             PlacementBindings: the bindings of the clusters whose
                                          name hashes to shard i (`gitfleet.api.shards`), every
                                          shard written (an empty one too), so one cluster joining
                                          or leaving rewrites one shard; bindings identical but
                                          for cluster and content are grouped, a group's
                                          differing contents listed (`gitfleet.api.grouping`)
state/prior/<key>.yaml                    PlacementPrior: the placement's ClusterIndex rows (most
                                          as the cluster name alone: the row its binding implies)
                                          and its status conditions, so a restarted hub reads
                                          state/ instead of every index and status file (optional:
                                          without it the hub parses those files); above 100
                                          clusters a ShardedPlacementPrior (header, placement
                                          conditions, shard count) with the per-cluster parts in
                                          state/prior/<key>/<i>.yaml by `shards.shard_of`
```

The hub writes with these helpers, the agent validates with the models, and `status`, `plan`,
`history` read through the same functions. Version gitfleet.io/v1alpha1 listed every object in
`clusters/<cluster>/index.yaml`; the hub reads it once to migrate, and the agent refuses it with
a message that says so. Called by the reconciler, the agent and the CLI services.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from gitfleet.api.base import KubeModel
from gitfleet.api.grouping import expand_named, group_named
from gitfleet.api.indexrow import written_row
from gitfleet.api.placement import ApplyStrategy

OUTPUT_API_VERSION = "gitfleet.io/v1alpha2"
"""The version of the output shape (ClusterIndex and PlacementIndex apiVersion)."""
LEGACY_OUTPUT_API_VERSION = "gitfleet.io/v1alpha1"
"""The shape before: every object of every placement listed in the cluster index."""
CLUSTER_INDEX_KIND = "ClusterIndex"
PLACEMENT_INDEX_KIND = "PlacementIndex"
INDEX_FILE = "index.yaml"
OVERRIDE_STATE_PATH = "state/overrides.yaml"
PLACEMENT_STATE_PREFIX = "state/placements/"
BINDING_SHARD_PREFIX = "state/bindings/"
PRIOR_STATE_PREFIX = "state/prior/"
PER_CLUSTER_FIELD = "perClusterPlacementStatuses"
GROUPS_FIELD = "perClusterPlacementStatusGroups"
REPORTED_FIELDS = ("failedPlacements", "driftedPlacements", "diffedPlacements")
"""Per-cluster status fields that keep a cluster's entry out of any group."""
IDENTITY_FIELDS = ("apiVersion", "kind", "namespace", "name", "file")

KEY_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)?$"
FILE_PATTERN = r"^[a-z0-9][a-z0-9._-]*\.yaml$"
HASH_PATTERN = r"^sha256:[0-9a-f]{64}$"


def cluster_dir(cluster: str) -> str:
    return f"clusters/{cluster}/"


def cluster_index_path(cluster: str) -> str:
    return f"clusters/{cluster}/{INDEX_FILE}"


def placement_index_path(cluster: str, key: str) -> str:
    return f"clusters/{cluster}/{key}/{INDEX_FILE}"


def object_path(cluster: str, key: str, file: str) -> str:
    return f"clusters/{cluster}/{key}/{file}"


def placement_status_path(key: str) -> str:
    return f"status/placements/{key}.yaml"


def cluster_status_path(cluster: str) -> str:
    return f"status/clusters/{cluster}.yaml"


def placement_state_path(key: str) -> str:
    return f"state/placements/{key}.yaml"


def binding_shard_path(key: str, shard: int) -> str:
    return f"{BINDING_SHARD_PREFIX}{key}/{shard}.yaml"


def placement_prior_path(key: str) -> str:
    return f"{PRIOR_STATE_PREFIX}{key}.yaml"


def placement_prior_shard_path(key: str, shard: int) -> str:
    return f"{PRIOR_STATE_PREFIX}{key}/{shard}.yaml"


@dataclass(frozen=True)
class ClusterPath:
    """A path under `clusters/`: what it is, and its cluster, placement key and file."""

    what: Literal["cluster-index", "placement-index", "object"]
    cluster: str
    key: str = ""
    file: str = ""


def split_cluster_path(path: str) -> ClusterPath | None:
    """What a `clusters/...` path of the contract is; None for any other path."""
    parts = path.split("/")
    if parts[0] != "clusters":
        return None
    if len(parts) == 3 and parts[2] == INDEX_FILE:
        return ClusterPath("cluster-index", parts[1])
    if len(parts) == 4 and parts[3] == INDEX_FILE:
        return ClusterPath("placement-index", parts[1], parts[2])
    if len(parts) == 4:
        return ClusterPath("object", parts[1], parts[2], parts[3])
    return None


def index_object(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The PlacementIndex entry of an object: identity and file, nothing else."""
    return {k: entry[k] for k in IDENTITY_FIELDS if k in entry}


def cluster_index_doc(cluster: str, placements: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """`clusters/<cluster>/index.yaml` from per-placement headers (any `objects` left out)."""
    rows = [written_row(p) for p in placements]
    return {
        "apiVersion": OUTPUT_API_VERSION,
        "kind": CLUSTER_INDEX_KIND,
        "metadata": {"name": cluster},
        "placements": sorted(rows, key=lambda p: (p.get("namespace", ""), p["name"])),
    }


def placement_index_doc(key: str, objects: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """`clusters/<cluster>/<key>/index.yaml`: no cluster name in it, so clusters that get the
    same objects share its bytes."""
    return {
        "apiVersion": OUTPUT_API_VERSION,
        "kind": PLACEMENT_INDEX_KIND,
        "metadata": {"name": key},
        "objects": [index_object(o) for o in objects],
    }


class IndexObject(KubeModel):
    """One object of a placement on a cluster: identity and the file that holds it."""

    api_version: str
    kind: str
    namespace: str | None = None
    name: str
    file: str = Field(pattern=FILE_PATTERN)


class IndexMeta(KubeModel):
    """metadata: the cluster name (ClusterIndex) or the placement key (PlacementIndex)."""

    name: str


class PlacementIndex(KubeModel):
    """`clusters/<cluster>/<key>/index.yaml`: the objects the agent applies for one placement."""

    api_version: Literal["gitfleet.io/v1alpha2"]
    kind: Literal["PlacementIndex"]
    metadata: IndexMeta
    objects: list[IndexObject] = Field(default_factory=list)


class IndexPlacement(KubeModel):
    """One placement bound to the cluster."""

    key: str = Field(pattern=KEY_PATTERN)
    name: str
    namespace: str | None = None
    resource_snapshot_index: int = Field(ge=0)
    policy_snapshot_index: int | None = Field(default=None, ge=0)
    apply_strategy: ApplyStrategy = Field(default_factory=ApplyStrategy)
    """Absent from the file when it is the default (`indexrow.written_row`): this default."""
    content_hash: str = Field(pattern=HASH_PATTERN)
    """`placement_content_hash` of the placement's files on this cluster: the agent checks the
    files against it and reports it back for what it applied."""


class ClusterIndex(KubeModel):
    """`clusters/<cluster>/index.yaml`: the placements bound to the cluster."""

    api_version: Literal["gitfleet.io/v1alpha2"]
    kind: Literal["ClusterIndex"]
    metadata: IndexMeta
    placements: list[IndexPlacement] = Field(default_factory=list)


def shape_problem(doc: Mapping[str, Any], kind: str) -> str | None:
    """Why `doc` is not a `kind` document of this contract version (None when it may be)."""
    version, found = doc.get("apiVersion"), doc.get("kind")
    if found != kind:
        return f'kind: is "{found}", expected "{kind}"'
    if version == LEGACY_OUTPUT_API_VERSION:
        return (
            f"apiVersion: {version} is the older output shape (every object listed in the "
            f"cluster index); this agent reads {OUTPUT_API_VERSION}: upgrade the hub, whose "
            "next pass rewrites the output branch in the new shape"
        )
    if version != OUTPUT_API_VERSION:
        return (
            f'apiVersion: "{version}" is an output shape this agent does not know (it reads '
            f"{OUTPUT_API_VERSION}): upgrade the agent to the hub's version"
        )
    return None


def group_cluster_statuses(
    entries: Sequence[Mapping[str, Any]], texts: Sequence[list[Any]] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(perClusterPlacementStatuses, perClusterPlacementStatusGroups) of a placement status:
    `group_named` by `clusterName`; an entry naming failed, drifted or diffed objects is never
    grouped."""
    return group_named(
        entries,
        "clusterName",
        "clusterNames",
        lambda e: any(e.get(f) for f in REPORTED_FIELDS),
        texts,
    )


def expand_cluster_statuses(status: Mapping[str, Any]) -> list[dict[str, Any]]:
    """KubeFleet's `perClusterPlacementStatuses` of a placement status: one entry a cluster
    (groups expanded), sorted by cluster name, entries without a cluster name last."""
    return expand_named(
        status.get(PER_CLUSTER_FIELD), status.get(GROUPS_FIELD), "clusterName", "clusterNames"
    )


def expanded_status(status: Mapping[str, Any]) -> dict[str, Any]:
    """A placement status with its groups expanded into `perClusterPlacementStatuses`."""
    out = {k: v for k, v in status.items() if k not in (PER_CLUSTER_FIELD, GROUPS_FIELD)}
    entries = expand_cluster_statuses(status)
    if entries:
        out[PER_CLUSTER_FIELD] = entries
    return out

"""The previous output's cluster and placement indexes, as the pass reads them back.

`read_prior_index` gives cluster -> placement key -> index entry (the ClusterIndex row with the
placement's `objects` from its PlacementIndex), each file parsed once per distinct content
(`reconciler.priorparse`); an older-shape (gitfleet.io/v1alpha1) cluster index that lists the
objects itself is read too, so the next pass migrates the branch. Called by `pass_`,
`assemble` and the rollout stage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from gitfleet.api.canonical import placement_content_hash
from gitfleet.api.output import INDEX_FILE, placement_index_path, split_cluster_path
from reconciler.priorparse import derive_own, freeze, shared

INDEX_SUFFIX = "/" + INDEX_FILE


def given_content(entry: Mapping[str, Any] | None) -> str | None:
    """The content hash of a previous index entry: what that cluster's agent reports back."""
    if entry is None:
        return None
    recorded = entry.get("contentHash")
    if isinstance(recorded, str):
        return recorded
    return placement_content_hash(entry.get("objects") or [])


def read_prior_index(output: Mapping[str, bytes]) -> dict[str, dict[str, dict[str, Any]]]:
    """cluster -> placement key -> index entry (header and `objects`), from the previous output
    tree: the cluster index and each placement's object index of the current contract, or an
    older-shape cluster index that lists the objects itself (read once, to migrate)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for path in output:
        if not path.endswith(INDEX_SUFFIX) or path.count("/") != 2:
            continue  # only clusters/<c>/index.yaml (the tree holds every object file too)
        where = split_cluster_path(path)
        if where is None or where.what != "cluster-index":
            continue
        try:
            headers = derive_own(output, path, "cluster-index", _index_entries)
        except (yaml.YAMLError, KeyError, TypeError, AttributeError):
            continue
        out[where.cluster] = {
            key: entry if "objects" in entry else _with_objects(output, where.cluster, entry)
            for key, entry in headers.items()
        }
    return out


def _with_objects(
    output: Mapping[str, bytes], cluster: str, header: dict[str, Any]
) -> dict[str, Any]:
    path = placement_index_path(cluster, str(header["key"]))
    try:
        objects = derive_own(output, path, "placement-index", placement_objects)
    except (yaml.YAMLError, KeyError, TypeError, AttributeError):
        objects = []
    return {**header, "objects": objects}


def _shared_object(obj: Any) -> Any:
    return shared(("object", freeze(obj)), lambda: obj)


def placement_objects(doc: Any) -> list[Any]:
    objects = (doc or {}).get("objects")
    return [_shared_object(o) for o in objects] if isinstance(objects, list) else []


def _index_entries(doc: Any) -> dict[str, dict[str, Any]]:
    """placement key -> index entry of one parsed cluster index. An older-shape entry keeps
    its `objects` (shared: the same on every cluster that got the same file)."""
    out: dict[str, dict[str, Any]] = {}
    for entry in (doc or {}).get("placements") or []:
        objects = entry.get("objects")
        if isinstance(objects, list):
            entry = {**entry, "objects": [_shared_object(o) for o in objects]}
        out[str(entry["key"])] = entry
    return out

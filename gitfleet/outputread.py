"""Which output files each `gitfleet status` form shows, read through an `OutputView`: only
those, by name, so the cost follows the document shown and not the size of the output tree.

`status_files` serves `status placement|cluster|cgu` (the status document; for a cluster also
its index and the PlacementIndex of each placement it lists), `run_files` serves `status
updaterun` (the run's status, the approval requests of its namespace and every cluster's index,
which holds the snapshot index each cluster has). Each returns a path -> bytes mapping holding
every file the formatter would look up in the whole tree, so what is shown is unchanged. Every
form also reads `status/hub.yaml`: while the hub refuses the source branch's tip,
`hub_refusal` says so above what is shown (`with_hub`, `hub_note`) (`gitfleet status hub` shows only that). Called by
`gitfleet.service`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml
from pydantic import ValidationError

from gitfleet.api.hubstatus import HUB_STATUS_PATH, HubStatus
from gitfleet.api.indexrow import read_row
from gitfleet.api.output import (
    cluster_index_path,
    cluster_status_path,
    expanded_status,
    placement_index_path,
    placement_status_path,
)
from gitfleet.repo.outputview import OutputView
from reconciler.output import placement_key
from reconciler.priorparse import load_bounded
from reconciler.rollout import stagedstatus as st


def status_path(what: str, name: str, namespace: str) -> tuple[str, str]:
    """(output path, what it is called in messages) of a status document."""
    if what == "cgu":
        ns = namespace or "default"
        return f"status/clustergroupupgrades/{ns}/{name}.yaml", f"ClusterGroupUpgrade {ns}/{name}"
    if what == "placement":
        key = placement_key(name, namespace)
        return placement_status_path(key), f"placement {key}"
    return cluster_status_path(name), f"cluster {name}"


def status_from_files(
    files: Mapping[str, bytes], what: str, name: str, namespace: str
) -> dict[str, Any]:
    """`gitfleet status placement|cluster|cgu NAME` as data, from output files (all of them,
    or `status_files`): `{"status": <the status document>}` (a placement's grouped per-cluster
    statuses expanded into one entry a cluster, as KubeFleet shows them), plus `"index"` (the
    cluster's index, each placement with its `objects`) for a cluster."""
    path, label = status_path(what, name, namespace)
    data = files.get(path)
    if data is None:
        raise LookupError(f"{label} has no status in the output (is it declared?)")
    doc: dict[str, Any] = {"status": load_bounded(data)}
    if what == "placement" and isinstance(doc["status"], dict):
        status = doc["status"].get("status")
        if isinstance(status, dict):
            doc["status"] = {**doc["status"], "status": expanded_status(status)}
    if what == "cluster":
        doc["index"] = _cluster_index(files, name)
    return with_hub(doc, files)


def with_hub(doc: dict[str, Any], files: Mapping[str, bytes]) -> dict[str, Any]:
    """`doc` with `"hub"`, the parsed `status/hub.yaml` of `files`, when there is one (every
    `status` form's data: `status_from_files`, `gitfleet.rolloutops.run_document`)."""
    hub = _parsed(files.get(HUB_STATUS_PATH))
    if hub is not None:
        doc["hub"] = hub
    return doc


def hub_note(doc: Mapping[str, Any]) -> str:
    """The `Hub:` lines every describe view starts with (`hub_refusal` of `doc["hub"]`, then a
    blank line), "" when `doc` has no HubStatus."""
    return hub_refusal(doc["hub"]) + "\n" if "hub" in doc else ""


def hub_refusal(doc: Any) -> str:
    """What a HubStatus document (parsed) says about the source: the refused commit, since when,
    why, and what the output still renders; "" when it records no refusal."""
    try:
        hub = HubStatus.model_validate(doc)
    except ValidationError:
        return f"Hub: {HUB_STATUS_PATH} is not a HubStatus document this version reads\n"
    refusal = hub.refusal()
    if refusal is None:
        return ""
    rendered = hub.status.rendered_source
    kept = (
        f"this output still renders source {rendered[:12]}"
        if rendered
        else "nothing is rendered yet (no source commit was accepted)"
    )
    return (
        f"Hub: REFUSING source commit {hub.status.refused_source[:12]} "
        f"({refusal.reason}, since {refusal.last_transition_time}); {kept}\n"
        f"  {refusal.message}\n"
    )


def _cluster_index(files: Mapping[str, bytes], cluster: str) -> dict[str, Any] | None:
    """The cluster's index with each placement's objects (from its PlacementIndex) inlined."""
    data = files.get(cluster_index_path(cluster))
    index = load_bounded(data) if data else None
    if not isinstance(index, dict):
        return None
    placements = []
    for entry in index.get("placements") or []:
        if isinstance(entry, dict):
            entry = read_row(entry)  # the default apply strategy the file leaves out
        if isinstance(entry, dict) and "objects" not in entry:
            listed = files.get(placement_index_path(cluster, str(entry.get("key"))))
            objects = (load_bounded(listed) or {}).get("objects") if listed else None
            entry = {**entry, "objects": objects or []}
        placements.append(entry)
    return {**index, "placements": placements}


def _parsed(data: bytes | None) -> Any:
    """The document, or None when absent or unreadable (the formatter reports that itself)."""
    try:
        return load_bounded(data) if data else None
    except yaml.YAMLError:
        return None


def status_files(view: OutputView, what: str, name: str, namespace: str) -> dict[str, bytes]:
    """The files `gitfleet status placement|cluster|cgu NAME` shows."""
    path, _label = status_path(what, name, namespace)
    if what != "cluster":
        return view.read_many([path, HUB_STATUS_PATH])
    files = view.read_many([path, cluster_index_path(name), HUB_STATUS_PATH])
    index = _parsed(files.get(cluster_index_path(name)))
    if path not in files or not isinstance(index, dict):
        return files
    listed = [
        placement_index_path(name, str(entry.get("key")))
        for entry in index.get("placements") or []
        if isinstance(entry, dict) and "objects" not in entry
    ]
    return files | view.read_many(listed)


def run_files(view: OutputView, name: str, namespace: str) -> dict[str, bytes]:
    """The files `gitfleet status updaterun NAME` shows (`rolloutops.run_document`): the run's
    status, its namespace's approval requests, the cluster indexes that can list the run's
    placement, and `status/hub.yaml`. An index whose bytes do not hold the placement key cannot (the hub writes keys,
    `[a-z0-9.-]`, verbatim in every YAML style), so only the others are parsed later."""
    path = st.run_status_path(name, namespace)
    files = view.read_many([path, HUB_STATUS_PATH])
    if path not in files:
        return files
    prefix = st.approval_status_path("", namespace).removesuffix(".yaml")
    requests = [p for p in view.list_files(prefix) if "/" not in p.removeprefix(prefix)]
    indexes = [cluster_index_path(c) for c in view.list_dirs("clusters/")]
    more = view.read_many(requests + indexes)
    key = _run_key(files[path]).encode()
    return files | {p: data for p, data in more.items() if p in requests or key in data}


def _run_key(data: bytes) -> str:
    """The key of the placement a run's status names ("" when it names none: keep all)."""
    doc = _parsed(data)
    if not isinstance(doc, dict):
        return ""
    spec, meta = doc.get("spec") or {}, doc.get("metadata") or {}
    if not isinstance(spec, dict) or not isinstance(meta, dict):
        return ""
    return placement_key(str(spec.get("placementName", "")), str(meta.get("namespace") or ""))

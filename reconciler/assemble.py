"""Per-cluster output: manifest files and `clusters/<cluster>/index.yaml` for every cluster.

Lays out what each placement wants on each bound cluster, keeps the previous files of held
placements (their inputs failed to load: nothing is pruned), and resolves two placements that
produce the same object for one cluster: the placement that already owned it keeps it, else the
first by name; the other gets a WorkSynchronized failure naming both. Called by `pass_`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import yaml

from reconciler.output import cluster_path, index_doc, yaml_bytes
from reconciler.placement import PlacementPlan
from reconciler.schedule.clusters import ClusterView
from reconciler.state import PlacementState, State

Claim = tuple[str, tuple[str, str, str, str]]
"""(cluster, (group, kind, namespace, name))."""


def _ident_key(ident: Mapping[str, Any]) -> tuple[str, str, str, str]:
    api_version = str(ident.get("apiVersion", ""))
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    return (
        group,
        str(ident.get("kind", "")),
        str(ident.get("namespace", "")),
        str(ident.get("name", "")),
    )


def read_prior_index(output: Mapping[str, bytes]) -> dict[str, dict[str, dict[str, Any]]]:
    """cluster -> placement key -> index entry, from the previous output tree."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for path, data in output.items():
        parts = path.split("/")
        if len(parts) != 3 or parts[0] != "clusters" or parts[2] != "index.yaml":
            continue
        try:
            doc = yaml.load(data, Loader=yaml.CSafeLoader) or {}
            entries = {str(p["key"]): p for p in doc.get("placements") or []}
        except (yaml.YAMLError, KeyError, TypeError, AttributeError):
            continue
        out[parts[1]] = entries
    return out


def _live_entry(plan: PlacementPlan) -> dict[str, Any]:
    entry: dict[str, Any] = {"key": plan.key, "name": plan.name}
    if plan.namespace:
        entry["namespace"] = plan.namespace
    latest = plan.state.latest_resources()
    policy = plan.state.latest_policy()
    entry["resourceSnapshotIndex"] = latest.index if latest else 0
    entry["policySnapshotIndex"] = policy.index if policy else 0
    entry["applyStrategy"] = dict(plan.apply_strategy)
    return entry


class _Layout:
    """Accumulates files, index entries and claims while the clusters are assembled."""

    def __init__(self, prior_index: dict[str, dict[str, dict[str, Any]]]) -> None:
        self.prior_owner: dict[Claim, str] = {}
        for cluster, entries in prior_index.items():
            for key, entry in entries.items():
                for obj in entry.get("objects") or []:
                    self.prior_owner[(cluster, _ident_key(obj))] = key
        self.claims: dict[Claim, list[str]] = defaultdict(list)

    def claim(self, cluster: str, ident: Mapping[str, Any], key: str) -> None:
        self.claims[(cluster, _ident_key(ident))].append(key)

    def owner(self, cluster: str, ident: Mapping[str, Any]) -> str:
        claim = (cluster, _ident_key(ident))
        keys = self.claims[claim]
        prior = self.prior_owner.get(claim)
        return prior if prior in keys else min(keys)


def _held_entries(
    key: str, prior_index: dict[str, dict[str, dict[str, Any]]], views: Mapping[str, ClusterView]
) -> dict[str, dict[str, Any]]:
    return {c: e[key] for c, e in prior_index.items() if key in e and c in views}


def assemble_clusters(
    plans: Mapping[str, PlacementPlan],
    kept: Mapping[str, PlacementState],
    prior: State,
    views: Mapping[str, ClusterView],
) -> dict[str, bytes]:
    """Every `clusters/...` file of the new output tree."""
    prior_index = read_prior_index(prior.output)
    layout = _Layout(prior_index)
    held = {k: _held_entries(k, prior_index, views) for k, p in plans.items() if p.held}
    held |= {k: _held_entries(k, prior_index, views) for k in kept}
    for key, per_cluster in held.items():
        for cluster, entry in per_cluster.items():
            for obj in entry.get("objects") or []:
                layout.claim(cluster, obj, key)
    live = {k: p for k, p in plans.items() if not p.held}
    for key, plan in live.items():
        for cluster in plan.bound_clusters():
            for m in plan.manifests:
                layout.claim(cluster, m.identity, key)
    files: dict[str, bytes] = {}
    index: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for key, per_cluster in sorted(held.items()):
        for cluster, entry in per_cluster.items():
            for obj in entry.get("objects") or []:
                path = cluster_path(cluster, key, str(obj["file"]))
                if path in prior.output:
                    files[path] = prior.output[path]
            index[cluster].append(entry)
    conflicts: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for key, plan in sorted(live.items()):
        for cluster in plan.bound_clusters():
            objects = []
            for m in plan.manifests:
                winner = layout.owner(cluster, m.identity)
                if winner != key:
                    what = f"{m.identity['kind']} {m.identity.get('namespace', '')}/{m.identity['name']}".replace(
                        " /", " "
                    )
                    conflicts[(key, winner, what)].append(cluster)
                    plan.sync_errors[cluster] = (
                        f"{what} is also placed by placement {winner} on this cluster"
                    )
                    continue
                files[cluster_path(cluster, key, m.file)] = m.data
                objects.append({**m.identity, "file": m.file, "hash": m.hash})
            index[cluster].append({**_live_entry(plan), "objects": objects})
    for (key, winner, what), clusters in sorted(conflicts.items()):
        plans[key].errors.append(
            (
                "spec.resourceSelectors",
                f"conflict: {what} is also placed by placement {winner} on {len(clusters)} cluster(s) ({', '.join(sorted(clusters)[:5])}{', ...' if len(clusters) > 5 else ''}); it stays with {winner}",
            )
        )
    for cluster, entries in index.items():
        files[cluster_path(cluster, "index.yaml")] = yaml_bytes(index_doc(cluster, entries))
    return files

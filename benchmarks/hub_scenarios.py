"""The source changes of the Git scenario benchmark: one edit function per incremental scenario.

Each `Edit` changes files in the work clone for trial `k` (so consecutive trials alternate two
values or add a new thing, and every trial changes the input) and returns the commit message;
`scenarios(fleet)` lists them in run order, leaving out those the generated fleet cannot
express (no ClusterResourceOverride, no PickFixed placement). Called by `benchmarks/bench_hub.py`
and its test.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from benchmarks import manifests as m
from benchmarks.generate import GeneratedFleet

Edit = Callable[[Path, int], str | None]
"""(work clone, trial) -> commit message after changing files, or None for no source change."""


def _edit_yaml(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    obj = yaml.safe_load(path.read_bytes())
    change(obj)
    path.write_bytes(m.dump_yaml(obj))


def _annotate(rel: str) -> Edit:
    def edit(clone: Path, k: int) -> str:
        def change(obj: dict[str, Any]) -> None:
            obj["metadata"].setdefault("annotations", {})["bench.gitfleet.io/edit"] = f"t{k}"

        _edit_yaml(clone / rel, change)
        return f"edit {rel}"

    return edit


def _resource_of(fleet: GeneratedFleet, policies: tuple[str, ...]) -> str:
    """A payload object (not the Namespace when there is another) of the first namespace with
    one of `policies`."""
    ns = next(n for n in fleet.namespaces if n.policy in policies)
    name = ns.objects[1][0] if len(ns.objects) > 1 else ns.objects[0][0]
    return f"resources/{ns.name}/{name}"


def _edit_override(fleet: GeneratedFleet) -> Edit | None:
    cros = [p for p in fleet.files if p.startswith("overrides/") and "cluster-labels" in p]
    rel = cros[0] if cros else None
    if rel is None:
        return None

    def edit(clone: Path, k: int) -> str:
        """A value no earlier trial gave: a pass meets it for the first time, as a user's edit
        (a flip between two values measured a revert, which finds what was made before)."""

        def change(obj: dict[str, Any]) -> None:
            patch = obj["spec"]["policy"]["overrideRules"][0]["jsonPatchOverrides"][0]
            patch["value"] = "${MEMBER-CLUSTER-NAME}" + f"-edited-{k}"

        _edit_yaml(clone / rel, change)
        return f"edit {rel}"

    return edit


def _edit_placement(fleet: GeneratedFleet) -> Edit | None:
    ns = next((n for n in fleet.namespaces if n.policy == "fixed"), None)
    if ns is None:
        return None
    rel = f"placements/{ns.name}.yaml"
    names = yaml.safe_load(fleet.files[rel])["spec"]["policy"]["clusterNames"]

    def edit(clone: Path, k: int) -> str:
        def change(obj: dict[str, Any]) -> None:
            obj["spec"]["policy"]["clusterNames"] = names if k % 2 else names[:-1]

        _edit_yaml(clone / rel, change)
        return f"change {rel}"

    return edit


def _relabel(fleet: GeneratedFleet) -> Edit:
    """Toggle the `tier` label (gold <-> bronze) of the first dev cluster: the Deployment
    overrides read it (per-cluster env on gold/silver), no scheduling does. Labels that
    scheduling reads are sticky in KubeFleet (PickAll keeps a binding whose cluster stops
    matching a required affinity; PickN weighs preferences only when it picks), so after such a
    relabel a fresh render legitimately differs from the incremental output (check 1)."""
    cluster = next((c for c in fleet.clusters if c.labels["env"] == "dev"), fleet.clusters[0])
    first = "bronze" if cluster.labels["tier"] == "gold" else "gold"

    def edit(clone: Path, k: int) -> str:
        def change(obj: dict[str, Any]) -> None:
            obj["metadata"]["labels"]["tier"] = cluster.labels["tier"] if k % 2 else first

        _edit_yaml(clone / f"clusters/{cluster.name}.yaml", change)
        return f"relabel {cluster.name}"

    return edit


def _add_cluster(clone: Path, k: int) -> str:
    labels = {"region": "eastus", "env": "prod", "tier": "gold"}
    path = clone / f"clusters/bench-added-{k}.yaml"
    path.write_bytes(m.dump_yaml(m.member_cluster(f"bench-added-{k}", labels, 60)))
    return f"add cluster bench-added-{k}"


def _remove_cluster(clone: Path, k: int) -> str:
    (clone / f"clusters/bench-added-{k}.yaml").unlink()
    return f"remove cluster bench-added-{k}"


def unrelated(clone: Path, k: int) -> str:
    """A commit that changes no fleet input (a notes file beside the fleet)."""
    (clone / "NOTES.md").write_text(f"benchmark note {k}\n")
    return "edit NOTES.md"


def scenarios(fleet: GeneratedFleet) -> list[tuple[str, Edit | None]]:
    """The incremental scenarios in run order (None: no source change); ones the fleet cannot
    express (no override, no PickFixed placement) are left out."""
    listed: list[tuple[str, Edit | None]] = [
        ("no-op", None),
        ("unrelated source commit", unrelated),
        ("edit one resource", _annotate(_resource_of(fleet, ("affinity", "fixed", "pickn")))),
        ("edit fleet-wide resource", _annotate(_resource_of(fleet, ("platform",)))),
        ("edit one override", _edit_override(fleet)),
        ("change one placement", _edit_placement(fleet)),
        ("relabel one cluster", _relabel(fleet)),
        ("add a cluster", _add_cluster),
        ("remove a cluster", _remove_cluster),
    ]
    return [(name, edit) for name, edit in listed if name == "no-op" or edit is not None]

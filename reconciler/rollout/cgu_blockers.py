"""Inputs of the ClusterGroupUpgrade driver read from outside the CGUs themselves: staged update
runs as implicit blockers (spec/cluster-group-upgrade.md §8.2, Decision 3) and the placements'
soak annotations. Pure; called by `reconciler.rollout.cgu`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from gitfleet.api.cgu import SOAK_ANNOTATION
from gitfleet.load.model import FleetSnapshot
from reconciler.priorparse import parse_own
from reconciler.rollout.cgu_spec import Blocker

Key = tuple[str, str]


def staged_run_blockers(fleet: FleetSnapshot, output: Mapping[str, bytes]) -> dict[Key, Blocker]:
    """§8.2 / Decision 3: staged update runs in state Run, initialized and not finished, as
    implicit blockers named `ClusterStagedUpdateRun/<name>` (`StagedUpdateRun/<ns>/<name>`),
    claiming (placement, cluster) for every cluster of their stages."""
    runs: list[tuple[str, str, str, Any]] = [
        ("", n, "ClusterStagedUpdateRun", r) for n, r in fleet.update_runs.items()
    ]
    runs += [(ns, n, "StagedUpdateRun", r) for (ns, n), r in fleet.staged_update_runs.items()]
    out: dict[Key, Blocker] = {}
    for ns, name, kind, run in runs:
        if run.spec.state != "Run":
            continue
        path = f"status/updateruns/{ns + '/' if ns else ''}{name}.yaml"
        try:
            doc = parse_own(output[path]) if path in output else None
        except yaml.YAMLError:
            doc = None
        status = (doc or {}).get("status") or {}
        conds = {c.get("type"): c for c in status.get("conditions") or [] if isinstance(c, dict)}
        initialized = (conds.get("Initialized") or {}).get("status") == "True"
        if not initialized or "Succeeded" in conds:
            continue
        key = f"{ns}.{run.spec.placement_name}" if ns else run.spec.placement_name
        clusters = {
            str(c.get("clusterName"))
            for stage in status.get("stagesStatus") or []
            for c in stage.get("clusters") or []
        }
        label = f"{kind}/{ns + '/' if ns else ''}{name}"
        out[("\x00staged", label)] = Blocker(
            None, True, True, frozenset((key, c) for c in clusters)
        )
    return out


def soak_annotations(fleet: FleetSnapshot) -> tuple[dict[str, int], dict[str, str]]:
    """Valid soak seconds by placement key, and the invalid raw values."""
    valid, invalid = {}, {}
    objects: list[tuple[str, Any]] = [(n, p) for n, p in fleet.placements.items()]
    objects += [(f"{ns}.{n}", p) for (ns, n), p in fleet.resource_placements.items()]
    for key, placement in objects:
        raw = (placement.metadata.annotations or {}).get(SOAK_ANNOTATION)
        if raw is None:
            continue
        if raw.isdigit():
            valid[key] = int(raw)
        else:
            invalid[key] = raw
    return valid, invalid

"""The kustomize baseline of the render benchmark: what one cluster's manifests cost with
`kubectl kustomize`, the tool a team would otherwise run once per cluster.

`build_overlays` turns a generated fleet and gitfleet's rendered output into a kustomize tree: one
base per namespace (`bases/<ns>/`, the fleet's own `resources/<ns>/` files) and one overlay per
sampled cluster (`overlays/<cluster>/`) listing the bases of the placements that cluster got, so
kustomize builds the same manifests gitfleet wrote for it. `time_overlays` builds each overlay
offline (private HOME, no KUBECONFIG) and times it. Called by `benchmarks/bench_render.py`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class OverlayRun:
    """One timed `kubectl kustomize` of a cluster overlay."""

    cluster: str
    seconds: float
    objects: int
    """Documents kustomize printed."""
    expected: int
    """Object files gitfleet wrote for this cluster. The overlays apply no overrides, so
    kustomize prints more where a Delete override removed an object for this cluster."""


def pick_sample(clusters: list[str], count: int) -> list[str]:
    """`count` clusters evenly spaced over the sorted names (all of them when fewer)."""
    names = sorted(clusters)
    if len(names) <= count:
        return names
    return [names[i * len(names) // count] for i in range(count)]


def clusters_with_output(out_dir: Path) -> list[str]:
    """Clusters that have at least one placement folder in the rendered output."""
    root = out_dir / "clusters"
    if not root.is_dir():
        return []
    return sorted(
        c.name for c in root.iterdir() if c.is_dir() and any(p.is_dir() for p in c.iterdir())
    )


def _placements_of(out_dir: Path, cluster: str) -> dict[str, int]:
    """placement folder -> number of object files, for one cluster."""
    base = out_dir / "clusters" / cluster
    return {p.name: sum(1 for _ in p.glob("*.yaml")) for p in sorted(base.iterdir()) if p.is_dir()}


def _write_base(fleet_dir: Path, namespace: str, target: Path) -> None:
    target.mkdir(parents=True)
    names = []
    for source in sorted((fleet_dir / "resources" / namespace).glob("*.yaml")):
        shutil.copyfile(source, target / source.name)
        names.append(source.name)
    lines = ["apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization", "resources:"]
    (target / "kustomization.yaml").write_text(
        "\n".join([*lines, *(f"- {n}" for n in names)]) + "\n"
    )


def build_overlays(
    fleet_dir: Path, out_dir: Path, sample: list[str], work: Path
) -> dict[str, tuple[Path, int]]:
    """cluster -> (overlay directory, object files gitfleet wrote for it).

    Placement names equal namespace names in a generated fleet, so the base of placement `p` is
    `resources/p/`.
    """
    overlays: dict[str, tuple[Path, int]] = {}
    for cluster in sample:
        placements = _placements_of(out_dir, cluster)
        for name in placements:
            if not (work / "bases" / name).exists():
                _write_base(fleet_dir, name, work / "bases" / name)
        overlay = work / "overlays" / cluster
        overlay.mkdir(parents=True)
        lines = ["apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization", "resources:"]
        lines += [f"- ../../bases/{name}" for name in placements]
        (overlay / "kustomization.yaml").write_text("\n".join(lines) + "\n")
        overlays[cluster] = (overlay, sum(placements.values()))
    return overlays


def _count_documents(text: str) -> int:
    body = text.strip()
    return 0 if not body else 1 + sum(1 for line in body.splitlines() if line == "---")


def time_overlays(
    kubectl: str, overlays: dict[str, tuple[Path, int]], home: Path
) -> list[OverlayRun]:
    """Build every overlay once with `kubectl kustomize`, timing each build."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    runs = []
    for cluster, (overlay, expected) in sorted(overlays.items()):
        started = time.perf_counter()
        done = subprocess.run(
            [kubectl, "kustomize", str(overlay)],
            capture_output=True,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"kubectl kustomize {overlay} failed: {done.stderr.strip()[-400:]}")
        runs.append(OverlayRun(cluster, seconds, _count_documents(done.stdout), expected))
    return runs

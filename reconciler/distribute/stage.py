"""One ReplicaDistribution through one pass: allocation or the last good result, its state and
its status document (spec/replica-distribution.md §4, §8, §9).

`DistributionInput` is everything the pass knows about one RD (the hub workload, the placed
clusters, effective labels, its previous state); `distribute` returns a `DistributionOutcome`
with the per-cluster results to render, the conditions, and the state and status documents.
Pure: no plans, no files. Called by the pass glue (`reconciler.distributions`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gitfleet.api.distribution import ReplicaDistribution, Subset
from reconciler.distribute.allocate import Allocation, allocate, membership
from reconciler.distribute.validate import validate
from reconciler.distribute.workload import (
    ClusterResult,
    is_supported,
    partition_path,
    subset_digest,
)

ALLOCATED = "ReplicasAllocated"
PROVISIONED = "SubsetProvisioned"


@dataclass(frozen=True)
class PriorDistribution:
    """The last successful allocation (state file), empty when none."""

    subsets: Mapping[str, int] = field(default_factory=dict)
    clusters: Mapping[str, ClusterResult] = field(default_factory=dict)
    contents: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """subset -> the subset spec (nodeSelectorTerm, tolerations, patch) of the last good spec."""

    @property
    def exists(self) -> bool:
        return bool(self.subsets or self.clusters)


@dataclass(frozen=True)
class DistributionInput:
    rd: ReplicaDistribution
    key: str
    """`<namespace>/<name>`."""
    hub: Mapping[str, Any] | None
    """The hub view's workload object (None: not in resources/)."""
    placed: Sequence[str]
    labels: Mapping[str, Mapping[str, str]]
    prior: PriorDistribution = PriorDistribution()
    conflict_with: str | None = None
    """Another RD that wins the workload (§7), `<namespace>/<name>`."""


@dataclass(frozen=True)
class DistributionOutcome:
    conditions: tuple[tuple[str, str, str, str], ...]
    """(type, status, reason, message), in the §9 order."""
    results: Mapping[str, ClusterResult] = field(default_factory=dict)
    """cluster -> what to render (current allocation, or the last good one while invalid)."""
    subsets: Mapping[str, Subset] = field(default_factory=dict)
    """subset -> the subset whose content renders (current spec, or last good)."""
    held: Mapping[str, str] = field(default_factory=dict)
    """Placed cluster -> why it gets no new workload file (invalid, no last good result)."""
    allocation: Allocation | None = None
    problems: tuple[tuple[str, str], ...] = ()
    """(field path, message) validation problems, reported as loader-style errors."""
    state: Mapping[str, Any] | None = None
    """The next state document body (None: keep the previous one unchanged)."""
    partition_ignored: bool = False


def workload_text(rd: ReplicaDistribution) -> str:
    w = rd.spec.workload
    return f"{w.api_version} {w.kind} {rd.namespace}/{w.name}"


def total_replicas(rd: ReplicaDistribution, hub: Mapping[str, Any] | None) -> int:
    """§2: spec.replicas, else the hub object's spec.replicas, else 1."""
    if rd.spec.replicas is not None:
        return rd.spec.replicas
    value = ((hub or {}).get("spec") or {}).get("replicas")
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _false(reason: str, message: str) -> tuple[tuple[str, str, str, str], ...]:
    return ((ALLOCATED, "False", reason, message),)


def _kept(inp: DistributionInput, reason: str, message: str, **extra: Any) -> DistributionOutcome:
    """Invalid or otherwise not allocatable: last good results render, the rest is held."""
    subsets = {
        name: Subset.model_validate({"name": name, **content})
        for name, content in inp.prior.contents.items()
    }
    placed = set(inp.placed)  # looked up once per prior cluster: not in the sequence
    results = {c: r for c, r in inp.prior.clusters.items() if c in placed}
    held = {c: message for c in inp.placed if c not in results}
    return DistributionOutcome(_false(reason, message), results, subsets, held, **extra)


def _conditions(
    rd: ReplicaDistribution, alloc: Allocation
) -> tuple[tuple[str, str, str, str], ...]:
    members = sum(len(cs) for cs in alloc.membership.members.values())
    count = len(alloc.subsets)
    out = [
        (
            ALLOCATED,
            "True",
            "Allocated",
            f"Allocated {alloc.total} replicas to {count} subsets on {members} clusters",
        )
    ]
    empty = [s for s, r in alloc.subsets.items() if r > 0 and not alloc.membership.members.get(s)]
    if empty:
        out.append(
            (
                PROVISIONED,
                "False",
                "SubsetWithoutClusters",
                f"Subsets without clusters: [{' '.join(empty)}]; "
                f"{alloc.unplaced} replicas are not placed",
            )
        )
    else:
        out.append(
            (
                PROVISIONED,
                "True",
                "AllSubsetsProvisioned",
                "Every subset with replicas has at least one cluster",
            )
        )
    return tuple(out)


def _subset_content(subset: Subset) -> dict[str, Any]:
    dumped = subset.dump()
    return {k: dumped[k] for k in ("nodeSelectorTerm", "tolerations", "patch") if k in dumped}


def state_doc(
    rd: ReplicaDistribution, alloc: Allocation, results: Mapping[str, ClusterResult]
) -> dict[str, Any]:
    subsets = {s.name: s for s in rd.spec.topology.subsets or []}
    clusters = {}
    for cluster, r in sorted(results.items()):
        entry: dict[str, Any] = {"replicas": r.replicas}
        if r.subset is not None:
            entry["subset"] = r.subset
        if r.partition is not None:
            entry["partition"] = r.partition
        if r.content:
            entry["content"] = r.content
        clusters[cluster] = entry
    return {
        "subsets": {
            n: {"replicas": alloc.subsets[n], **_subset_content(subsets[n])} for n in alloc.subsets
        },
        "clusters": clusters,
    }


def distribute(inp: DistributionInput) -> DistributionOutcome:
    """Allocate (or keep the last good result) for one distribution."""
    rd, w = inp.rd, inp.rd.spec.workload
    if not is_supported(w.api_version, w.kind):
        return DistributionOutcome(
            _false(
                "UnsupportedWorkload", f"workload kind {w.api_version} {w.kind} is not supported"
            )
        )
    if inp.conflict_with is not None:
        message = f"workload {workload_text(rd)} is also distributed by ReplicaDistribution {inp.conflict_with}"
        return DistributionOutcome(_false("Conflict", message))
    if inp.hub is None:
        return DistributionOutcome(
            _false("WorkloadNotFound", f"workload {workload_text(rd)} is not in resources/")
        )
    total = total_replicas(rd, inp.hub)
    problems = validate(rd, total)
    if problems:
        message = f"ReplicaDistribution {inp.key} is invalid: {problems[0][1]}"
        outcome = _kept(inp, "InvalidSpec", message, problems=tuple(problems))
        return DistributionOutcome(
            _false("InvalidSpec", problems[0][1]),
            outcome.results,
            outcome.subsets,
            outcome.held,
            problems=tuple(problems),
        )
    subsets = rd.spec.topology.subsets or []
    member_of = membership(subsets, inp.placed, inp.labels)
    prev_clusters = {c: r.replicas for c, r in inp.prior.clusters.items()}
    alloc = allocate(rd, total, member_of, inp.prior.subsets, prev_clusters)
    writes = partition_path(inp.hub) is not None
    by_name = {s.name: s for s in subsets}
    results = {}
    for cluster, replicas in alloc.clusters.items():
        subset = member_of.subset_of(cluster)
        part = alloc.cluster_partitions.get(cluster) if alloc.cluster_partitions else None
        results[cluster] = ClusterResult(
            subset,
            replicas,
            part if writes else None,
            subset_digest(by_name[subset]) if subset is not None else "",
        )
    ignored = rd.spec.update_strategy is not None and w.kind == "Deployment"
    return DistributionOutcome(
        _conditions(rd, alloc),
        results,
        by_name,
        allocation=alloc,
        state=state_doc(rd, alloc, results),
        partition_ignored=ignored,
    )

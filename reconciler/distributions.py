"""ReplicaDistributions in the pass: find each workload and its placed clusters in the placement
plans, allocate (`reconciler.distribute.stage`), rewrite the workload in each cluster's manifests
after overrides, and write `status/` and `state/replicadistributions/<ns>/<name>.yaml`
(spec/replica-distribution.md §3, §6, §9).

Runs after every placement is planned and before the cluster files are assembled, so what a
distribution decides for a cluster travels with that placement's manifests for the cluster.
Called by `reconciler.pass_`; `explain distribution` reads the status it writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import yaml

from gitfleet.api import Condition, set_condition
from gitfleet.api.distribution import ReplicaDistribution
from gitfleet.api.errors import FleetError, describe_exception
from gitfleet.load.model import FleetSnapshot
from reconciler.distribute.stage import (
    DistributionInput,
    DistributionOutcome,
    PriorDistribution,
    distribute,
    total_replicas,
)
from reconciler.distribute.workload import ClusterResult, render_workload
from reconciler.isolate import hold
from reconciler.manifests import Manifest, manifest_of
from reconciler.output import object_file_name, yaml_bytes
from reconciler.placement import PlacementPlan
from reconciler.priorparse import parse_own
from reconciler.rollkept import thawed
from reconciler.schedule.clusters import ClusterView
from reconciler.schedule.cycle import BOUND, SCHEDULED

Ident = tuple[str, str, str, str]


def status_path(namespace: str, name: str) -> str:
    return f"status/replicadistributions/{namespace}/{name}.yaml"


def state_path(namespace: str, name: str) -> str:
    return f"state/replicadistributions/{namespace}/{name}.yaml"


@dataclass
class DistributionsResult:
    files: dict[str, bytes] = field(default_factory=dict)
    """State files (final) ."""
    errors: list[FleetError] = field(default_factory=list)
    statuses: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Status documents, completed with what each cluster renders by `status_files`."""
    rendered: dict[str, dict[str, str]] = field(default_factory=dict)
    """status path -> member cluster -> output path of its workload file."""

    def status_files(self, output: Mapping[str, bytes]) -> dict[str, bytes]:
        """Status files, with `renderedReplicas` where a cluster still runs another count
        (its rollout is pending) — read from the assembled output tree."""
        out = {}
        for path, doc in sorted(self.statuses.items()):
            rendered_total = 0
            placed = doc["status"].get("placedReplicas")
            for subset in doc["status"].get("subsetStatuses") or []:
                for row in subset.get("clusters") or []:
                    now = _rendered(output, self.rendered.get(path, {}).get(row["name"]))
                    rendered_total += now
                    if now != row["replicas"]:
                        row["renderedReplicas"] = now
            if placed is not None and rendered_total != placed:
                doc["status"]["renderedReplicas"] = rendered_total
            out[path] = yaml_bytes(doc)
        return out


def _rendered(output: Mapping[str, bytes], path: str | None) -> int:
    """spec.replicas of the workload file a cluster has now (0 when it has none)."""
    if path is None or path not in output:
        return 0
    try:
        doc = yaml.load(output[path], Loader=yaml.CSafeLoader) or {}
        value = (doc.get("spec") or {}).get("replicas")
    except (yaml.YAMLError, AttributeError):
        return 0
    return value if isinstance(value, int) else 0


def _ident(rd: ReplicaDistribution) -> Ident:
    w = rd.spec.workload
    return (w.api_version, w.kind, rd.namespace or "", w.name)


def _manifest_ident(m: Manifest) -> Ident:
    i = m.identity
    return (i.get("apiVersion", ""), i.get("kind", ""), i.get("namespace", ""), i.get("name", ""))


def _prior(output: Mapping[str, bytes], path: str) -> PriorDistribution:
    if path not in output:
        return PriorDistribution()
    try:
        doc = parse_own(output[path]) or {}
        clusters = {
            str(c): ClusterResult(
                e.get("subset"), int(e["replicas"]), e.get("partition"), str(e.get("content", ""))
            )
            for c, e in (doc.get("clusters") or {}).items()
        }
        subsets = {str(s): int(e["replicas"]) for s, e in (doc.get("subsets") or {}).items()}
        contents = {
            str(s): {k: v for k, v in e.items() if k != "replicas"}
            for s, e in (doc.get("subsets") or {}).items()
        }
        return PriorDistribution(subsets, clusters, contents)
    except (yaml.YAMLError, AttributeError, KeyError, TypeError, ValueError):
        return PriorDistribution()


def _placed(plans: Mapping[str, PlacementPlan], ident: Ident) -> tuple[list[tuple[str, str]], Any]:
    """(placement key, cluster) pairs that get the workload, and the hub object (None: absent)."""
    pairs: list[tuple[str, str]] = []
    hub = None
    for key, plan in sorted(plans.items()):
        if plan.held or not any(_manifest_ident(m) == ident for m in plan.manifests):
            continue
        if hub is None:
            m = next(m for m in plan.manifests if _manifest_ident(m) == ident)
            hub = yaml.load(m.data, Loader=yaml.CSafeLoader)
        for b in plan.state.bindings:
            if b.state in (SCHEDULED, BOUND) and any(
                _manifest_ident(m) == ident for m in plan.manifests_for(b.cluster)
            ):
                pairs.append((key, b.cluster))
    return pairs, hub


def _winners(fleet: FleetSnapshot, output: Mapping[str, bytes]) -> dict[Ident, str]:
    """§7: per workload, the RD with a successful allocation in state, else the first by name."""
    by_workload: dict[Ident, list[tuple[str, str]]] = {}
    for (ns, name), rd in sorted(fleet.distributions.items()):
        by_workload.setdefault(_ident(rd), []).append((ns, name))
    out = {}
    for ident, keys in by_workload.items():
        with_state = [k for k in keys if state_path(*k) in output]
        chosen = with_state[0] if len(with_state) == 1 else keys[0]
        out[ident] = f"{chosen[0]}/{chosen[1]}"
    return out


def _rewrite(
    plans: Mapping[str, PlacementPlan],
    pairs: list[tuple[str, str]],
    ident: Ident,
    outcome: DistributionOutcome,
    key: str,
) -> None:
    """Replace the workload in each placed cluster's manifests (or hold it)."""
    for pkey, cluster in pairs:
        plan = plans[pkey]
        current = plan.cluster(cluster)
        manifests = list(plan.manifests_for(cluster))
        at = next(i for i, m in enumerate(manifests) if _manifest_ident(m) == ident)
        if cluster in outcome.held:
            failed = (*current.failures, (manifests[at].file, outcome.held[cluster]))
            del manifests[at]
            plan.per_cluster = thawed(plan.per_cluster)  # copy on write (`rollkept`)
            plan.per_cluster[cluster] = replace(
                current, manifests=tuple(manifests), failures=failed
            )
            continue
        result = outcome.results.get(cluster)
        if result is None:
            continue
        obj = yaml.load(manifests[at].data, Loader=yaml.CSafeLoader)
        subset = outcome.subsets.get(result.subset) if result.subset else None
        manifests[at] = manifest_of(render_workload(obj, subset, result, key))
        plan.per_cluster = thawed(plan.per_cluster)
        plan.per_cluster[cluster] = replace(current, manifests=tuple(manifests))


def _timed(
    conds: tuple[tuple[str, str, str, str], ...], prior_status: Mapping[str, Any], now: datetime
) -> list[dict[str, Any]]:
    old = tuple(
        Condition.model_validate(c)
        for c in (prior_status.get("conditions") or [])
        if isinstance(c, Mapping)
    )
    out = []
    for type_, status, reason, message in conds:
        new = Condition(type=type_, status=status, reason=reason, message=message)  # type: ignore[arg-type]
        timed = set_condition(old, new, now)
        out.append(next(c for c in timed if c.type == type_).dump())
    return out


def status_doc(
    rd: ReplicaDistribution,
    outcome: DistributionOutcome,
    total: int,
    conditions: list[dict[str, Any]],
) -> dict[str, Any]:
    """The RD as in Git plus `status` (§9)."""
    doc = rd.dump()
    doc.pop("status", None)
    status: dict[str, Any] = {}
    alloc = outcome.allocation
    if alloc is not None:
        status["replicas"] = total
        status["placedReplicas"] = alloc.placed
        status["unplacedReplicas"] = alloc.unplaced
        status["subsetReplicas"] = dict(alloc.subsets)
        status["subsetStatuses"] = [_subset_status(alloc, s) for s in alloc.subsets]
        if alloc.membership.unassigned:
            status["unassignedClusters"] = list(alloc.membership.unassigned)
        if alloc.membership.overlapping:
            status["overlappingClusters"] = [
                {"cluster": c, "subsets": list(s)} for c, s in alloc.membership.overlapping
            ]
    if outcome.held:
        status["heldClusters"] = sorted(outcome.held)
    if outcome.partition_ignored:
        status["warnings"] = ["PartitionIgnored: partitions are not written into a Deployment"]
    status["conditions"] = conditions
    doc["status"] = status
    return doc


def _subset_status(alloc: Any, subset: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": subset, "replicas": alloc.subsets[subset]}
    parts = alloc.cluster_partitions
    if alloc.partitions:
        entry["partition"] = alloc.partitions[subset]
    clusters = []
    for c in alloc.membership.members.get(subset, ()):
        row: dict[str, Any] = {"name": c, "replicas": alloc.clusters[c]}
        if parts:
            row["partition"] = parts.get(c, 0)
        clusters.append(row)
    entry["clusters"] = clusters
    return entry


def apply_distributions(
    fleet: FleetSnapshot,
    plans: Mapping[str, PlacementPlan],
    views: Mapping[str, ClusterView],
    output: Mapping[str, bytes],
    now: datetime,
) -> DistributionsResult:
    """Every ReplicaDistribution of the fleet, in (namespace, name) order. One that raises is
    reported on its own file and keeps its previous state and status; the placements carrying its
    workload keep their previous output (`reconciler.isolate`)."""
    result = DistributionsResult()
    winners = _winners(fleet, output)
    labels = {name: view.labels for name, view in views.items()}
    for (ns, name), rd in sorted(fleet.distributions.items()):
        try:
            _distribute_one(fleet, plans, output, now, result, winners, labels, ns, name, rd)
        except Exception as exc:  # one distribution's fault fails it alone
            _failed(fleet, plans, output, result, ns, name, rd, exc)
    return result


def _failed(
    fleet: FleetSnapshot,
    plans: Mapping[str, PlacementPlan],
    output: Mapping[str, bytes],
    result: DistributionsResult,
    ns: str,
    name: str,
    rd: ReplicaDistribution,
    exc: Exception,
) -> None:
    origin = fleet.origins.get(("ReplicaDistribution", ns, name))
    file = origin.file if origin else ""
    message = f"internal error while distributing {ns}/{name}: {describe_exception(exc)}"
    result.errors.append(FleetError(file, origin.line if origin else None, "", message))
    for path in (state_path(ns, name), status_path(ns, name)):
        if path in output:
            result.files[path] = output[path]
    for pkey, _cluster in _placed(plans, _ident(rd))[0]:
        if not plans[pkey].held:
            hold(plans[pkey], "distributing replicas of", exc)


def _distribute_one(
    fleet: FleetSnapshot,
    plans: Mapping[str, PlacementPlan],
    output: Mapping[str, bytes],
    now: datetime,
    result: DistributionsResult,
    winners: Mapping[Any, str],
    labels: Mapping[str, Any],
    ns: str,
    name: str,
    rd: ReplicaDistribution,
) -> None:
    key, ident = f"{ns}/{name}", _ident(rd)
    pairs, hub = _placed(plans, ident)
    workload_file = object_file_name(hub) if hub is not None else ""
    prior = _prior(output, state_path(ns, name))
    winner = winners[ident]
    inp = DistributionInput(
        rd,
        key,
        hub,
        sorted({c for _, c in pairs}),
        labels,
        prior,
        conflict_with=winner if winner != key else None,
    )
    outcome = distribute(inp)
    if inp.conflict_with is None:
        _rewrite(plans, pairs, ident, outcome, key)
    origin = fleet.origins.get(("ReplicaDistribution", ns, name))
    for path, message in outcome.problems:
        result.errors.append(
            FleetError(
                origin.file if origin else "", origin.line if origin else None, path, message
            )
        )
    prior_status = _prior_status(output, status_path(ns, name))
    conds = _timed(outcome.conditions, prior_status, now)
    total = total_replicas(rd, hub)
    result.statuses[status_path(ns, name)] = status_doc(rd, outcome, total, conds)
    result.rendered[status_path(ns, name)] = {
        c: f"clusters/{c}/{pkey}/{workload_file}" for pkey, c in pairs
    }
    if outcome.state is not None:
        doc = {
            "apiVersion": "gitfleet.io/v1alpha1",
            "kind": "ReplicaDistributionState",
            "metadata": {"name": name, "namespace": ns},
            **outcome.state,
        }
        result.files[state_path(ns, name)] = yaml_bytes(doc)
    elif state_path(ns, name) in output:
        result.files[state_path(ns, name)] = output[state_path(ns, name)]


def _prior_status(output: Mapping[str, bytes], path: str) -> Mapping[str, Any]:
    try:
        doc = parse_own(output[path]) if path in output else {}
        status = (doc or {}).get("status") or {}
        return status if isinstance(status, Mapping) else {}
    except yaml.YAMLError:
        return {}

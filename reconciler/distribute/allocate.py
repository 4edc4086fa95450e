"""UnitedDeployment's allocator applied to groups of member clusters
(spec/replica-distribution.md §1.4, §1.5, §3, §4, §5).

`membership` puts each placed cluster into the first subset that names or selects it;
`allocate_subsets` is UD's specific or min/max allocator over subsets; `split_evenly` shares a
subset's replicas among its clusters with the same remainder rule; `partitions` splits a
subset's partition over its clusters (last names keep the old revision). `allocate` runs the
whole thing for a valid distribution. Pure; called by the pass glue (`reconciler.distributions`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gitfleet.api.distribution import ReplicaDistribution, Subset
from reconciler.distribute.validate import UNBOUNDED, is_minmax, parse_value


@dataclass(frozen=True)
class Membership:
    """Which placed cluster belongs to which subset."""

    members: Mapping[str, tuple[str, ...]]
    """subset -> its clusters, sorted by name (every subset present, in spec order)."""
    unassigned: tuple[str, ...] = ()
    overlapping: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(cluster, subsets that would take it in spec order), sorted by cluster."""

    def subset_of(self, cluster: str) -> str | None:
        return next((s for s, cs in self.members.items() if cluster in cs), None)


@dataclass(frozen=True)
class Allocation:
    """The result of one successful allocation."""

    total: int
    subsets: Mapping[str, int]
    """subset -> R_s, spec order."""
    clusters: Mapping[str, int]
    """member and unassigned cluster -> r_c."""
    membership: Membership
    partitions: Mapping[str, int] = field(default_factory=dict)
    """subset -> P_s (capped), only when the distribution sets updateStrategy."""
    cluster_partitions: Mapping[str, int] = field(default_factory=dict)
    """cluster -> p_c, only when the distribution sets updateStrategy."""

    @property
    def unplaced(self) -> int:
        return sum(r for s, r in self.subsets.items() if not self.membership.members.get(s))

    @property
    def placed(self) -> int:
        return sum(self.clusters.values())


def _takes(subset: Subset, cluster: str, labels: Mapping[str, str]) -> bool:
    if cluster in (subset.cluster_names or []):
        return True
    return subset.cluster_selector is not None and subset.cluster_selector.matches(labels)


def membership(
    subsets: Sequence[Subset], placed: Sequence[str], labels: Mapping[str, Mapping[str, str]]
) -> Membership:
    """§3: first subset in spec order wins; overlaps and unassigned clusters are reported."""
    members: dict[str, list[str]] = {s.name: [] for s in subsets}
    unassigned, overlapping = [], []
    for cluster in sorted(placed):
        takers = [s.name for s in subsets if _takes(s, cluster, labels.get(cluster, {}))]
        if not takers:
            unassigned.append(cluster)
            continue
        members[takers[0]].append(cluster)
        if len(takers) > 1:
            overlapping.append((cluster, tuple(takers)))
    return Membership(
        {k: tuple(v) for k, v in members.items()}, tuple(unassigned), tuple(overlapping)
    )


def _spread(names: Sequence[str], amount: int, prev: Mapping[str, int]) -> dict[str, int]:
    """§1.4 step 3: order by (prev ascending, name); each gets amount//n, the last amount%n
    one more."""
    if not names:
        return {}
    order = sorted(names, key=lambda n: (prev.get(n, 0), n))
    base, extra = divmod(amount, len(order))
    return {n: base + (1 if i >= len(order) - extra else 0) for i, n in enumerate(order)}


def allocate_specific(
    subsets: Sequence[Subset], total: int, prev: Mapping[str, int]
) -> dict[str, int]:
    """UD's specific allocator: specified values, the rest shared by unspecified subsets."""
    out = {s.name: parse_value(s.replicas, total) for s in subsets if s.replicas is not None}
    free = [s.name for s in subsets if s.replicas is None]
    out.update(_spread(free, total - sum(out.values()), prev))
    return {s.name: out[s.name] for s in subsets}


def allocate_minmax(subsets: Sequence[Subset], total: int) -> dict[str, int]:
    """UD's elastic allocator: mins in spec order, then up to the maxes in spec order."""
    out = {s.name: 0 for s in subsets}
    allocated = 0
    for s in subsets:
        low = 0 if s.min_replicas is None else parse_value(s.min_replicas, total)
        give = max(0, min(low, total - allocated))
        out[s.name], allocated = give, allocated + give
    for s in subsets:
        if allocated >= total:
            break
        low = 0 if s.min_replicas is None else parse_value(s.min_replicas, total)
        high = UNBOUNDED * 1000 if s.max_replicas is None else parse_value(s.max_replicas, total)
        give = max(0, min(high - low, total - allocated))
        out[s.name], allocated = out[s.name] + give, allocated + give
    return out


def allocate_subsets(
    rd: ReplicaDistribution, total: int, prev: Mapping[str, int]
) -> dict[str, int]:
    """R_s per subset (§4.1); the distribution must be valid for `total`."""
    subsets = rd.spec.topology.subsets or []
    if is_minmax(rd):
        return allocate_minmax(subsets, total)
    return allocate_specific(subsets, total, prev)


def split_evenly(members: Sequence[str], amount: int, prev: Mapping[str, int]) -> dict[str, int]:
    """§4.2: a subset's replicas over its clusters (prev r_c ascending, then name)."""
    return _spread(members, amount, prev)


def partitions(
    members: Sequence[str], replicas: Mapping[str, int], partition: int
) -> dict[str, int]:
    """§5: walk the members in descending name order, each keeps min(r_c, remaining) old."""
    out, remaining = {}, partition
    for cluster in sorted(members, reverse=True):
        out[cluster] = min(replicas.get(cluster, 0), remaining)
        remaining -= out[cluster]
    return out


def allocate(
    rd: ReplicaDistribution,
    total: int,
    member_of: Membership,
    prev_subsets: Mapping[str, int],
    prev_clusters: Mapping[str, int],
) -> Allocation:
    """The whole allocation of a valid distribution (§4, §5)."""
    subset_replicas = allocate_subsets(rd, total, prev_subsets)
    clusters: dict[str, int] = {c: 0 for c in member_of.unassigned}
    for name, members in member_of.members.items():
        clusters.update(split_evenly(members, subset_replicas[name], prev_clusters))
    update = rd.spec.update_strategy
    if update is None:
        return Allocation(total, subset_replicas, dict(sorted(clusters.items())), member_of)
    configured = (update.manual_update.partitions if update.manual_update else None) or {}
    subset_parts = {s: min(configured.get(s, 0), r) for s, r in subset_replicas.items()}
    cluster_parts: dict[str, int] = {c: 0 for c in member_of.unassigned}
    for name, members in member_of.members.items():
        cluster_parts.update(partitions(members, clusters, subset_parts[name]))
    return Allocation(
        total,
        subset_replicas,
        dict(sorted(clusters.items())),
        member_of,
        subset_parts,
        dict(sorted(cluster_parts.items())),
    )

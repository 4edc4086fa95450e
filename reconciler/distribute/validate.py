"""ReplicaDistribution validation (spec/replica-distribution.md §8) and subset value parsing (§1.2).

`validate` returns every problem as (field path, message) in the spec's check order; the first
message is the `InvalidSpec` condition message, all of them are reported as errors. Checks that
depend on the total use the effective R. Called by `reconciler.distribute.allocate` and the pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gitfleet.api.distribution import ReplicaDistribution, Subset
from gitfleet.api.names import is_dns1123_label
from reconciler.distribute.patch import patch_problems

PERCENT = re.compile(r"^[0-9]+%$")
UNBOUNDED = 1_000_000
"""An unset maxReplicas in the Σmin ≤ Σmax check (UnitedDeployment's webhook)."""
VALUE_FIELDS = ("replicas", "minReplicas", "maxReplicas")


def value_problem(name: str, field: str, value: int | str) -> str | None:
    """Why a subset's replicas/minReplicas/maxReplicas value is not acceptable (None: fine)."""
    if isinstance(value, int):
        return f"subset {name}: {field} ({value}) must not be negative" if value < 0 else None
    if not PERCENT.fullmatch(value):
        return f'subset {name}: {field} ({value}) must be an integer or a percentage such as "30%"'
    if int(value[:-1]) > 100:
        return f"subset {name}: {field} ({value}) must be between 0% and 100%"
    return None


def parse_value(value: int | str, total: int) -> int:
    """§1.2: an integer as is; `P%` of R rounded half up. The value must be valid."""
    if isinstance(value, int):
        return value
    return (total * int(value[:-1]) + 50) // 100


def subset_value(subset: Subset, field: str) -> int | str | None:
    return {
        "replicas": subset.replicas,
        "minReplicas": subset.min_replicas,
        "maxReplicas": subset.max_replicas,
    }[field]


def is_minmax(rd: ReplicaDistribution) -> bool:
    """Min/max mode: some subset has minReplicas or maxReplicas (§4.1)."""
    subsets = rd.spec.topology.subsets or []
    return any(s.min_replicas is not None or s.max_replicas is not None for s in subsets)


def _subset_path(i: int, field: str = "") -> str:
    return f"spec.topology.subsets[{i}]" + (f".{field}" if field else "")


def _names(subsets: list[Subset]) -> Iterator[tuple[str, str]]:
    seen: set[str] = set()
    for i, s in enumerate(subsets):
        if not s.name:
            yield _subset_path(i, "name"), f"subset {i}: name is required"
        elif is_dns1123_label(s.name):
            yield _subset_path(i, "name"), f"subset {s.name}: name must be a DNS-1123 label"
        elif s.name in seen:
            yield _subset_path(i, "name"), f"duplicated subset name {s.name}"
        seen.add(s.name)


def _values(subsets: list[Subset]) -> Iterator[tuple[str, str]]:
    for i, s in enumerate(subsets):
        for field in VALUE_FIELDS:
            value = subset_value(s, field)
            problem = None if value is None else value_problem(s.name, field, value)
            if problem:
                yield _subset_path(i, field), problem


def _specific(subsets: list[Subset], total: int) -> Iterator[tuple[str, str]]:
    given = [parse_value(s.replicas, total) for s in subsets if s.replicas is not None]
    where = "spec.topology.subsets"
    if sum(given) > total:
        yield (
            where,
            f"sum of subset replicas ({sum(given)}) is greater than spec.replicas ({total})",
        )
    elif len(given) == len(subsets) and sum(given) != total:
        yield (
            where,
            f"subset replicas are given for every subset but add up to {sum(given)}, "
            f"not spec.replicas ({total})",
        )


def _minmax(subsets: list[Subset], total: int) -> Iterator[tuple[str, str]]:
    low_sum = high_sum = 0
    for i, s in enumerate(subsets):
        low = 0 if s.min_replicas is None else parse_value(s.min_replicas, total)
        high = UNBOUNDED if s.max_replicas is None else parse_value(s.max_replicas, total)
        if s.max_replicas is not None and low > high:
            yield (
                _subset_path(i, "minReplicas"),
                f"subset {s.name}: minReplicas ({low}) is greater than maxReplicas ({high})",
            )
        low_sum, high_sum = low_sum + low, high_sum + high
    if all(s.max_replicas is not None for s in subsets):
        yield "spec.topology.subsets", "at least one subset must leave maxReplicas unset"
    elif low_sum > high_sum:
        yield (
            "spec.topology.subsets",
            f"sum of minReplicas ({low_sum}) is greater than sum of maxReplicas ({high_sum})",
        )


def _strategies(rd: ReplicaDistribution) -> Iterator[tuple[str, str]]:
    update = rd.spec.update_strategy
    names = {s.name for s in rd.spec.topology.subsets or []}
    if update is not None:
        if update.type not in ("", "Manual"):
            yield "spec.updateStrategy.type", f"updateStrategy.type {update.type} is not supported"
        partitions = (update.manual_update.partitions if update.manual_update else None) or {}
        for name, value in sorted(partitions.items()):
            where = f"spec.updateStrategy.manualUpdate.partitions.{name}"
            if name not in names:
                yield where, f"partitions: subset {name} does not exist"
            elif value < 0:
                yield where, f"partitions: subset {name} must not be negative"
    strategy = rd.spec.topology.schedule_strategy
    if strategy is not None and strategy.type not in ("", "Fixed"):
        yield (
            "spec.topology.scheduleStrategy.type",
            f"topology.scheduleStrategy.type {strategy.type} is not supported",
        )


def _contents(subsets: list[Subset]) -> Iterator[tuple[str, str]]:
    for i, s in enumerate(subsets):
        if s.node_selector_term is not None and s.node_selector_term.match_fields:
            yield (
                _subset_path(i, "nodeSelectorTerm.matchFields"),
                f"subset {s.name}: nodeSelectorTerm.matchFields is not supported",
            )
        if s.patch is not None:
            for problem in patch_problems(s.patch):
                yield _subset_path(i, "patch"), f"subset {s.name}: {problem}"


def validate(rd: ReplicaDistribution, total: int) -> list[tuple[str, str]]:
    """Every problem, in the §8 order; [] when the distribution is valid for total R."""
    out: list[tuple[str, str]] = []
    if rd.spec.replicas is not None and rd.spec.replicas < 0:
        out.append(("spec.replicas", "spec.replicas must not be negative"))
    subsets = rd.spec.topology.subsets or []
    if not subsets:
        return [*out, ("spec.topology.subsets", "topology.subsets must not be empty")]
    out += _names(subsets)
    for i, s in enumerate(subsets):
        if s.cluster_selector is None and s.cluster_names is None:
            message = f"subset {s.name} selects no clusters: set clusterSelector or clusterNames"
            out.append((_subset_path(i), message))
    values = list(_values(subsets))
    out += values
    has_specific = any(s.replicas is not None for s in subsets)
    if has_specific and is_minmax(rd):
        message = "subset replicas and minReplicas/maxReplicas cannot be used together"
        out.append(("spec.topology.subsets", message))
    elif not values and total >= 0:
        out += _minmax(subsets, total) if is_minmax(rd) else _specific(subsets, total)
    out += _strategies(rd)
    out += _contents(subsets)
    return out

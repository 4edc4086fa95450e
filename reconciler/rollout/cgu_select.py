"""ClusterGroupUpgrade selection rules (spec/cluster-group-upgrade.md §4-§7, §13): the cluster
list, managed placements, the compliance predicate, the remediation plan and the label overlay.

Pure functions over the rollout vocabulary (`PlacementView`, `BindingView`); called by
`reconciler.rollout.cgu_run` and by the pass (effective labels).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from gitfleet.api.cgu import ClusterGroupUpgradeSpec
from gitfleet.api.selectors import LabelSelector
from reconciler.rollout.cgu_state import Op
from reconciler.rollout.model import BOUND, SCHEDULED, PlacementView

COMPLIANT, NON_COMPLIANT, NOT_MATCHED = "Compliant", "NonCompliant", "NotMatched"


def go_list(items: Iterable[str]) -> str:
    """A string slice as Go prints it: `[a b c]`."""
    return "[" + " ".join(items) + "]"


@dataclass(frozen=True)
class Selection:
    clusters: tuple[str, ...] = ()
    error: str | None = None
    """`<detail>` of `Unable to select clusters: <detail>`."""
    warnings: tuple[str, ...] = ()
    """Malformed `clusterSelector` entries (event CguInvalidSelector)."""


def _legacy_matches(entry: str, labels: Mapping[str, str]) -> bool | None:
    parts = entry.split("=")
    if len(parts) > 2:
        return None
    key, value = parts[0], parts[1] if len(parts) == 2 else ""
    return key in labels and labels[key] == value


def _selector_problem(selector: LabelSelector) -> str | None:
    issues = selector.validate_rules()
    return None if not issues else f"{issues[0].field}: {issues[0].message}"


def select_clusters(
    spec: ClusterGroupUpgradeSpec, labels: Mapping[str, Mapping[str, str]]
) -> Selection:
    """§5: explicit clusters first (deduplicated), then selector matches sorted by name."""
    explicit = list(dict.fromkeys(spec.clusters or []))
    legacy = spec.cluster_selector or []
    selectors = spec.cluster_label_selectors or []
    if not explicit and not legacy and not selectors:
        return Selection(
            error="cannot obtain all the details about the clusters in the CR: "
            "no cluster specified for remediation"
        )
    for selector in selectors:
        problem = _selector_problem(selector)
        if problem:
            return Selection(
                error=f"cannot obtain all the details about the clusters in the CR: {problem}"
            )
    warnings = tuple(e for e in legacy if _legacy_matches(e, {}) is None)
    matched = sorted(
        c
        for c, lab in labels.items()
        if c not in explicit
        and (any(_legacy_matches(e, lab) for e in legacy) or any(s.matches(lab) for s in selectors))
    )
    missing = next((c for c in explicit if c not in labels), None)
    if missing is not None:
        return Selection(error=f"cluster {missing} is not a MemberCluster", warnings=warnings)
    everything = (*explicit, *matched)
    canary = next(
        (c for c in spec.remediation_strategy.canaries or [] if c not in everything), None
    )
    if canary is not None:
        return Selection(
            error=f"canary cluster {canary} is not in the list of clusters", warnings=warnings
        )
    return Selection(everything, warnings=warnings)


def computed_max_concurrency(max_concurrency: int, count: int) -> int:
    return max_concurrency if 0 < max_concurrency < count else count


def placement_key_of(entry: str) -> str:
    """`name` -> CRP key `name`; `ns/name` -> RP key `ns.name`."""
    if "/" in entry:
        ns, name = entry.split("/", 1)
        return f"{ns}.{name}"
    return entry


def compliance(
    view: PlacementView | None, cluster: str, target: int, report_diff: bool = False
) -> str:
    """§4: the done predicate of (placement at target index, cluster)."""
    if view is None:
        return NOT_MATCHED
    binding = next((b for b in view.bindings if b.cluster == cluster), None)
    if binding is None or binding.deleting or binding.state not in (SCHEDULED, BOUND):
        return NOT_MATCHED
    if (
        binding.state == SCHEDULED
        or binding.resource_index is None
        or binding.resource_index < target
    ):
        return NON_COMPLIANT
    if report_diff:
        diff = binding.condition("DiffReported")
        return COMPLIANT if diff is not None and diff.status == "True" else NON_COMPLIANT
    applied, available = binding.condition("Applied"), binding.condition("Available")
    if applied and available and applied.status == "True" and available.status == "True":
        return COMPLIANT
    return NON_COMPLIANT


def is_report_diff(view: PlacementView | None) -> bool:
    return view is not None and view.apply_strategy.get("type") == "ReportDiff"


def cluster_compliant(
    cluster: str, targets: Sequence[tuple[str, int]], views: Mapping[str, PlacementView]
) -> bool:
    """Compliant or NotMatched with every (placement key, target index)."""
    for key, index in targets:
        view = views.get(key)
        if compliance(view, cluster, index, is_report_diff(view)) == NON_COMPLIANT:
            return False
    return True


@dataclass(frozen=True)
class Plan:
    batches: tuple[tuple[str, ...], ...]
    canary_batches: int
    compliant: tuple[str, ...]
    """Compliant clusters: canaries in canary order, then the others in list order."""


def build_plan(
    clusters: Sequence[str], canaries: Sequence[str], m: int, compliant: set[str]
) -> Plan:
    """§7: one batch per NonCompliant canary, then chunks of m of the others."""
    batches: list[tuple[str, ...]] = []
    done: list[str] = []
    canary_list = [c for c in dict.fromkeys(canaries) if c in clusters]
    for c in canary_list:
        if c in compliant:
            done.append(c)
        else:
            batches.append((c,))
    k = len(batches)
    rest = []
    for c in clusters:
        if c in canary_list:
            continue
        if c in compliant:
            done.append(c)
        else:
            rest.append(c)
    size = max(m, 1)
    batches += [tuple(rest[i : i + size]) for i in range(0, len(rest), size)]
    return Plan(tuple(batches), k, tuple(done))


def apply_ops(
    base: Mapping[str, Mapping[str, str]], ops: Iterable[Op], annotations: bool = False
) -> dict[str, dict[str, str]]:
    """Labels (or annotations) after the ops, in the given order (§13)."""
    out = {c: dict(v) for c, v in base.items()}
    for op in ops:
        if op.cluster not in out:
            continue
        target = out[op.cluster]
        add = op.add_annotations if annotations else op.add_labels
        remove = op.remove_annotations if annotations else op.remove_labels
        target.update(add)
        for key in remove:
            target.pop(key, None)
    return out


def ordered_ops(ops_by_cgu: Mapping[tuple[str, str], Sequence[Op]]) -> list[Op]:
    """Every op of every present CGU by (at, namespace, name, seq)."""
    rows = [(op.at, ns, name, op.seq, op) for (ns, name), ops in ops_by_cgu.items() for op in ops]
    return [row[-1] for row in sorted(rows, key=lambda r: r[:4])]

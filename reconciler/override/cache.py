"""Pass-wide memo tables of the override engine, and the `Applied` result they hold.

One `OverrideCache` per `OverrideIndex` (one per pass). Per cluster it remembers which rules of
each override match (§3.3) and, per route (the overrides that target an object: the CROs of the
object or of its Namespace, then its ROs), the plan and the cluster facts (name, label values)
that plan reads. `results` maps (object, matching rules, those facts) to one shared `Applied`, so
a result is computed and serialised once however many clusters and placements share it. Used by
`reconciler.override.apply`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gitfleet.api import MemberCluster
from reconciler.override.compiled import CompiledOverride, CompiledRule
from reconciler.override.patch import MAX_PATCH_OPS_PER_OBJECT
from reconciler.override.variables import VariableUse
from reconciler.schedule.clusters import ClusterView

Route = tuple[CompiledOverride, ...]
"""The overrides that target one object, in application order."""


@dataclass(frozen=True)
class OverrideFault:
    """A failing override op, located at the override's own file: one user error for it, however
    many clusters and objects it failed on."""

    file: str
    doc: int
    line: int
    field: str
    """`spec.policy.overrideRules[<rule>].jsonPatchOverrides[<op>]`."""
    message: str
    """What failed and why, without the cluster."""


@dataclass(frozen=True)
class Applied:
    """One object after overrides on one cluster. Shared between clusters: read-only."""

    obj: Mapping[str, Any] | None
    """The object to place; None when a Delete rule removed it or when `error` is set."""
    error: str | None = None
    """OverriddenFailed message (§3.4.6) naming the override file, rule and op."""
    overridden: bool = False
    """Some matching rule (patch or Delete) was applied."""
    failed_override: str | None = None
    """Key of the override whose rule failed."""
    fault: OverrideFault | None = None
    """Where the failing op is declared (set with `error`)."""

    @property
    def deleted(self) -> bool:
        return self.obj is None and self.error is None


@dataclass(frozen=True)
class Match:
    """The rules of one override that match one cluster, and the variables they read."""

    rules: tuple[int, ...]
    """Indexes of matching rules, in order, cut after the first matching Delete."""
    uses: VariableUse


NO_MATCH = Match((), VariableUse())

Plan = tuple[tuple[CompiledOverride, Match], ...]
"""Per override that applies to an object on a cluster: its matching rules."""


@dataclass(frozen=True)
class Planned:
    """A route's plan for one set of cluster labels and the memo key parts it implies."""

    plan: Plan
    rules_key: tuple[tuple[str, tuple[int, ...]], ...]
    labels_key: tuple[tuple[str, str | None], ...]
    """Values of the labels the plan reads (None: missing), or all labels (see `all_labels`)."""
    named: bool
    """The result depends on the cluster name (it is used, or an error message names it)."""


LabelsKey = tuple[tuple[str, str], ...]


MAX_MATCHES = 200_000
_MATCHES: dict[tuple[str, str, LabelsKey], Match] = {}
"""(override key, spec hash, cluster labels) -> Match, shared by every pass of this process
(a long-running hub); cleared whole when it reaches MAX_MATCHES entries."""


@dataclass
class _ClusterMemo:
    cluster: MemberCluster
    labels: LabelsKey


@dataclass
class OverrideCache:
    """Pass-wide memo tables shared by every PlacementOverrides of one OverrideIndex.

    Rule matching and plans depend on cluster labels only, so they are shared by every
    cluster with the same labels; the cluster name enters a result's key only when used."""

    max_ops: int = MAX_PATCH_OPS_PER_OBJECT
    results: dict[tuple[Any, ...], Applied] = field(default_factory=dict)
    sources: dict[tuple[str, ...], str] = field(default_factory=dict)
    """Object key -> JSON text of the object in its own key order (a fast private copy)."""
    clusters: dict[str, _ClusterMemo] = field(default_factory=dict)
    plans: dict[tuple[Route, LabelsKey], Planned] = field(default_factory=dict)

    def labels_of(self, view: ClusterView) -> LabelsKey:
        """The cluster's labels as a hashable key (computed once per cluster)."""
        memo = self.clusters.get(view.name)
        if memo is None or memo.cluster is not view.cluster:
            memo = _ClusterMemo(view.cluster, tuple(sorted(view.labels.items())))
            self.clusters[view.name] = memo
        return memo.labels

    def matching_rules(self, override: CompiledOverride, view: ClusterView) -> Match:
        """The override's rules whose cluster selector matches the cluster (remembered across
        passes: they depend only on the override's spec and the cluster's labels)."""
        key = (override.key, override.hash, self.labels_of(view))
        hit = _MATCHES.get(key)
        if hit is None:
            hit = _matching(override.rules, view.labels)
            if len(_MATCHES) >= MAX_MATCHES:
                _MATCHES.clear()
            _MATCHES[key] = hit
        return hit

    def planned(self, route: Route, view: ClusterView) -> Planned:
        """The plan of `route` on the cluster (computed once per route and label set)."""
        key = (route, self.labels_of(view))
        hit = self.plans.get(key)
        if hit is None:
            matches = ((o, self.matching_rules(o, view)) for o in route)
            plan = tuple((o, m) for o, m in matches if m.rules)
            rules_key = tuple((o.key, m.rules) for o, m in plan)
            labels_key, named = _variables_key(plan, view.labels)
            hit = Planned(plan, rules_key, labels_key, named)
            self.plans[key] = hit
        return hit


def _matching(rules: tuple[CompiledRule, ...], labels: Mapping[str, str]) -> Match:
    out: list[int] = []
    uses = VariableUse()
    for rule in rules:
        if rule.matches(labels):
            out.append(rule.index)
            uses = uses.merge(rule.uses)
            if rule.delete:
                break
    return Match(tuple(out), uses) if out else NO_MATCH


def _variables_key(
    plan: Plan, labels: Mapping[str, str]
) -> tuple[tuple[tuple[str, str | None], ...], bool]:
    """The label values the plan's rules read, and whether the cluster name matters."""
    uses = VariableUse()
    for _, match in plan:
        uses = uses.merge(match.uses)
    if uses.all_labels:
        return tuple(sorted(labels.items())), True
    values = tuple((k, labels.get(k)) for k in sorted(uses.labels))
    # A missing label's error names the cluster, so the cluster then becomes part of the key.
    return values, uses.name or any(v is None for _, v in values)

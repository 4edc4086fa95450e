"""ClusterDecisions and per-cluster explanations from the converged bindings of a run.

`selected_decisions`, `unselected_decisions` follow KubeFleet's newSchedulingDecisionsFromBindings
(spec §1.6): one decision per current binding (from its stored clusterDecision, capped at 1000),
then up to 20 unselected ones — scored-but-not-picked clusters in score order, then filtered
clusters by name (a filtered cluster already listed still uses up one of the 20, as in KubeFleet).
`explain` gives every cluster of the fleet a `ClusterExplanation`. Called by `cycle`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace

from reconciler.state import Binding

from .bindingset import BindingSet
from .clusters import ClusterView
from .framework import Evaluation, rank_scored, top_scored
from .outcome import (
    MAX_DECISIONS,
    MAX_UNSELECTED_DECISIONS,
    ClusterExplanation,
    Decision,
    not_picked_reason,
    picked_reason,
)


def binding_decision(b: Binding) -> Decision:
    """The decision a current binding stands for (its stored clusterDecision)."""
    d = b.decision
    if d is None:
        return Decision(b.cluster, True, picked_reason(b.cluster))
    return Decision(b.cluster, True, d.reason, d.affinity_score, d.topology_score)


def selected_decisions(bs: BindingSet) -> list[Decision]:
    """Current bindings sorted by cluster name (gitfleet: a stable order across passes)."""
    return [binding_decision(bs.current[c]) for c in sorted(bs.current)][:MAX_DECISIONS]


def unselected_decisions(ev: Evaluation | None, seen: set[str], slots: int) -> list[Decision]:
    """Scored-but-not-picked clusters, then filtered ones, within the 20-decision budget."""
    if ev is None:
        return []
    budget = max(min(MAX_UNSELECTED_DECISIONS, slots), 0)
    out: list[Decision] = []
    scores = ev.scores
    if len(scores) < len(seen):
        listed = sum(1 for name in scores if name in seen)
    else:
        listed = sum(1 for name in seen if name in scores)
    for name in top_scored(ev.scores, budget + listed):
        if len(out) >= budget:
            break
        if name not in seen:
            s = ev.scores[name]
            reason = not_picked_reason(name, s.affinity, s.topology)
            out.append(Decision(name, False, reason, s.affinity, s.topology))
    remaining = budget - len(out)
    for name in sorted(ev.filtered)[:remaining]:
        if name not in seen:
            out.append(Decision(name, False, str(ev.filtered[name])))
    return out


def decisions_for(bs: BindingSet, ev: Evaluation | None) -> tuple[Decision, ...]:
    selected = selected_decisions(bs)
    seen = {d.cluster for d in selected}
    return tuple(selected + unselected_decisions(ev, seen, MAX_DECISIONS - len(bs.current)))


def pick_order(bs: BindingSet, ev: Evaluation | None) -> dict[str, int]:
    """PickN rank: selected clusters by stored score (best first, larger name first on ties),
    then the scored candidates in pick order."""

    def stored(name: str) -> tuple[int, int, str]:
        d = bs.current[name].decision
        if d is None or not d.scored:
            return (-(10**9), 0, name)
        return (d.topology_score or 0, d.affinity_score or 0, name)

    order = sorted(bs.current, key=stored, reverse=True)
    if ev is not None:
        order += [n for n in rank_scored(ev.scores) if n not in bs.current]
    return {name: i + 1 for i, name in enumerate(order)}


def _binding_of(bs: BindingSet, name: str) -> Binding | None:
    return bs.current.get(name) or bs.obsolete.get(name) or bs.unscheduled.get(name)


def explain_one(
    view: ClusterView, bs: BindingSet, ev: Evaluation | None, ranks: Mapping[str, int]
) -> ClusterExplanation:
    """The explanation of one cluster after the run."""
    name = view.name
    binding = _binding_of(bs, name)
    status = ev.filtered.get(name) if ev is not None else None
    score = ev.scores.get(name) if ev is not None else None
    base = ClusterExplanation(
        name,
        False,
        "not evaluated in the last scheduling cycle",
        binding_state=binding.state if binding is not None else None,
        already_selected=ev is not None and name in ev.already_selected,
        filter_plugin=status.plugin if status is not None else None,
        filter_reason=str(status) if status is not None else None,
        rank=ranks.get(name),
    )
    if name in bs.current:
        d = binding_decision(bs.current[name])
        return replace(
            base,
            selected=True,
            reason=d.reason,
            affinity_score=d.affinity_score,
            topology_score=d.topology_score,
        )
    if status is not None:
        return replace(base, reason=str(status))
    if score is not None:
        return replace(
            base,
            reason=not_picked_reason(name, score.affinity, score.topology),
            affinity_score=score.affinity,
            topology_score=score.topology,
            obsolete_score=score.obsolete,
        )
    return base


class Explanations(Mapping[str, ClusterExplanation]):
    """Explanations built on first access (most passes never read them), then kept."""

    def __init__(
        self,
        names: Sequence[str],
        build: Callable[[str], ClusterExplanation],
        known: AbstractSet[str] | None = None,
    ) -> None:
        """`known`: `names` as a set, when the caller has it (shared, never changed)."""
        self._names = names if isinstance(names, tuple) else tuple(names)
        self._known = known if known is not None else frozenset(self._names)
        self._build = build
        self._cache: dict[str, ClusterExplanation] = {}

    def __getitem__(self, name: str) -> ClusterExplanation:
        if name not in self._known:
            raise KeyError(name)
        if name not in self._cache:
            self._cache[name] = self._build(name)
        return self._cache[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def explain(
    clusters: Sequence[ClusterView],
    bs: BindingSet,
    ev: Evaluation | None,
    ranked: bool,
    names: tuple[tuple[str, ...], AbstractSet[str]] | None = None,
) -> Explanations:
    """One explanation per cluster of the fleet (computed lazily); `names`: the clusters'
    names and their set, when the caller has them (`FleetFacts.names`, `name_set`)."""
    ranks: list[Mapping[str, int]] = []
    views: dict[str, ClusterView] = {}

    def build(name: str) -> ClusterExplanation:
        if not ranks:
            ranks.append(pick_order(bs, ev) if ranked else {})
            views.update((v.name, v) for v in clusters)
        return explain_one(views[name], bs, ev, ranks[0])

    if names is None:
        return Explanations([v.name for v in clusters], build)
    return Explanations(names[0], build, names[1])

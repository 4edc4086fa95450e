"""A placement's bindings during a scheduling run: classification (spec §1.2), picking a cluster
(create, patch an obsolete binding, restore an unscheduled one), marking bindings Unscheduled, and
the downscale victim order (§1.4, §1.6).

Mutable for the length of one `schedule` call (the cycles of a run share it); `cycle` owns it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from reconciler.state import Binding, BindingDecision

from .clusters import ClusterView
from .outcome import BOUND, SCHEDULED, UNSCHEDULED


def mark_unscheduled(b: Binding) -> Binding:
    """KubeFleet's markUnscheduled: remember the state, then set Unscheduled."""
    return replace(b, state=UNSCHEDULED, previous_state=b.state)


@dataclass
class BindingSet:
    """Bindings by cluster, in KubeFleet's classes."""

    policy_index: int
    current: dict[str, Binding] = field(default_factory=dict)
    """Scheduled or Bound bindings of the latest policy snapshot."""
    obsolete: dict[str, Binding] = field(default_factory=dict)
    unscheduled: dict[str, Binding] = field(default_factory=dict)
    orphans: list[Binding] = field(default_factory=list)
    """Unscheduled bindings of clusters listed twice (kept as they are)."""

    @classmethod
    def classify(
        cls, bindings: Sequence[Binding], views: Mapping[str, ClusterView], policy_index: int
    ) -> BindingSet:
        """Spec §1.2; dangling bindings (cluster gone or leaving) are marked Unscheduled."""
        out = cls(policy_index)
        for b in sorted(bindings, key=lambda b: (b.cluster, b.state != UNSCHEDULED)):
            view = views.get(b.cluster)
            if b.state == UNSCHEDULED:
                target = out.unscheduled
            elif view is None or view.cluster.metadata.deletion_timestamp:
                b, target = mark_unscheduled(b), out.unscheduled
            elif b.policy_index != policy_index:
                target = out.obsolete
            else:
                target = out.current
            if b.cluster in target:
                out.orphans.append(target[b.cluster])
            target[b.cluster] = b
        return out

    def names(self) -> frozenset[str]:
        return frozenset(self.current)

    def count(self, state: str) -> int:
        return sum(1 for b in self.current.values() if b.state == state)

    def pick(self, cluster: str, decision: BindingDecision) -> bool:
        """Select a cluster: patch its obsolete binding, restore its unscheduled one, or create a
        Scheduled binding. True when a binding was created or patched (not already current)."""
        if cluster in self.current:
            return False
        old = self.obsolete.pop(cluster, None)
        if old is not None:
            new = replace(old, policy_index=self.policy_index, decision=decision)
        elif cluster in self.unscheduled:
            old = self.unscheduled.pop(cluster)
            state = old.previous_state or SCHEDULED
            new = replace(old, state=state, previous_state=None, policy_index=self.policy_index)
            new = replace(new, decision=decision)
        else:
            new = Binding(cluster, SCHEDULED, self.policy_index, decision=decision)
        self.current[cluster] = new
        return True

    def release(self, cluster: str) -> None:
        """Mark the current or obsolete binding of `cluster` Unscheduled."""
        b = self.current.pop(cluster, None) or self.obsolete.pop(cluster)
        self.unscheduled[cluster] = mark_unscheduled(b)

    def release_obsolete(self) -> None:
        for cluster in sorted(self.obsolete):
            self.release(cluster)

    def all(self) -> tuple[Binding, ...]:
        everything = [*self.current.values(), *self.obsolete.values(), *self.unscheduled.values()]
        return tuple(sorted(everything + self.orphans, key=lambda b: (b.cluster, b.state)))


def _score_key(b: Binding) -> tuple[int, int, int, str]:
    """Ascending victim order: bindings without a score first, then by (topology, affinity),
    then name ascending (KubeFleet's sortByClusterScoreAndName)."""
    d = b.decision
    if d is None or not d.scored:
        return (0, 0, 0, b.cluster)
    return (1, d.topology_score or 0, d.affinity_score or 0, b.cluster)


def downscale_victims(current: Mapping[str, Binding], count: int) -> list[Binding]:
    """Which `count` bindings a downscale trims: Scheduled ones first (lowest score first when
    only some go), then Bound ones by lowest score, then smaller name (spec §1.6)."""
    scheduled = sorted((b for b in current.values() if b.state == SCHEDULED), key=_score_key)
    bound = sorted((b for b in current.values() if b.state == BOUND), key=_score_key)
    if count <= len(scheduled):
        return scheduled[:count]
    return scheduled + bound[: count - len(scheduled)]

"""Incremental evaluation of the default profile across the cycles of one `schedule` call.

The plain runner (`framework.evaluate`) re-runs PreFilter, Filter and Score over the whole fleet
every cycle; with topology spread (one pick per cycle) that is quadratic. Here the static plugins
(ClusterAffinity, ClusterEligibility, NamespaceAffinity, TaintToleration) run once per cluster per
call, and only what depends on the bindings is updated: SamePlacementAffinity is a set lookup, and
TopologySpreadConstraints depends on a cluster only through its *signature* (its values of the
constraints' topology keys), so its Filter status and score are computed per signature from the
domain counts, which change by one per pick. Candidates are kept in one list per signature, best
first, so a cycle picks in O(signatures) instead of sorting the fleet. Decisions are the same as
the plain runner's (a property test compares both); any plugin error makes `cycle` fall back to
the plain runner, which then decides exactly as before. Used by `cycle` for the default profile.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from . import statics
from .framework import (
    ClusterScore,
    Code,
    CycleState,
    Evaluation,
    Plugin,
    Profile,
    Status,
    _raise_on_error,
    unschedulable,
)
from .profile import default_profile
from .statics import Signature, Statics
from .topologyspreadconstraints import NAME as SPREAD
from .topologyspreadconstraints import (
    SCHEDULE_ANYWAY_PENALTY,
    ConstraintState,
    verdicts,
    violation_reason,
)

Table = dict[Signature, tuple[Status | None, int]]
"""Per signature: the Filter status (None = passes) and the topology score."""
Key = tuple[int, int, int, str]
"""A candidate's rank key: (topology, affinity, obsolete, name); larger is better."""
_OBSOLETE = ClusterScore(obsolete=1)


_SUPPORTED: dict[int, tuple[Profile, bool]] = {}


def supports(profile: Profile) -> bool:
    """True for profiles with the default profile's plugins at every extension point (the
    plugins whose results depend on the bindings are the ones this module updates itself);
    remembered per profile object (profiles are frozen)."""
    known = _SUPPORTED.get(id(profile))
    if known is not None and known[0] is profile:
        return known[1]
    found = _supports(profile)
    _SUPPORTED[id(profile)] = (profile, found)
    return found


def _supports(profile: Profile) -> bool:
    default = default_profile()
    points = ("post_batch", "pre_filter", "filter", "pre_score", "score")
    return all(
        [type(p) for p in getattr(profile, point)] == [type(p) for p in getattr(default, point)]
        for point in points
    )


@dataclass
class _Group:
    """Candidates with one signature that are not selected yet, best first."""

    keys: list[Key]
    next: int = 0

    def head(self) -> Key | None:
        return self.keys[self.next] if self.next < len(self.keys) else None


class Incremental:
    """The default profile's Filter/Score for one `schedule` call, updated pick by pick.

    Built from the first cycle's state: runs PreFilter, the static Filter plugins, and (when
    `with_scores`) PreScore and the static Score plugins once; raises `ScheduleError` as the
    plugins do, and the caller then uses the plain runner."""

    def __init__(
        self,
        profile: Profile,
        state: CycleState,
        with_scores: bool,
        before: tuple[Statics, Collection[str]] | None = None,
    ) -> None:
        self.profile = profile
        self.state = state
        self.statics, self.specs = statics.prepare(profile, state, with_scores, before)
        self.spread_filters = SPREAD not in state.skipped_filters
        self.candidates = self.statics.candidates
        self.static_failed = self.statics.failed
        self.sig = self.statics.sig
        self.domains = self.statics.domains()
        self.counts = self._count(state.current)
        self._static_filtered: dict[str, Status] | None = None
        self.statuses = [
            unschedulable(SPREAD, violation_reason(ConstraintState(k, s, d, {})))
            for k, s, d in self.specs
        ]
        self.with_scores = with_scores
        self.base: Mapping[str, ClusterScore] = self.statics.base if with_scores else {}
        self.spread_scores = with_scores and SPREAD not in state.skipped_scores
        self.cap = self._post_batch_cap(profile.post_batch, state)
        self.groups: dict[Signature, _Group] = {}
        self.groups_obsolete: frozenset[str] | None = None

    @staticmethod
    def _post_batch_cap(plugins: Sequence[Plugin], state: CycleState) -> int | None:
        """The smallest non-negative PostBatch limit (None: no plugin limits the batch); the
        plugins' limits depend only on the policy, so they are asked once per call."""
        cap: int | None = None
        for plugin in plugins:
            value, status = plugin.post_batch(state)
            _raise_on_error(status)
            if status.ok and value >= 0:
                cap = value if cap is None else min(cap, value)
        return cap

    def _count(self, current: Iterable[str]) -> list[dict[str, int]]:
        """Bindings per domain and constraint; every label value in the fleet is a domain."""
        counts: list[dict[str, int]] = [dict.fromkeys(d, 0) for d in self.domains]
        if not self.specs:
            return counts
        for name in current:
            self._add(counts, name)
        return counts

    def _add(self, counts: list[dict[str, int]], name: str) -> None:
        for i, value in enumerate(self.sig[name]):
            if value is not None:
                counts[i][value] += 1

    def _table(self, counts: list[dict[str, int]], sigs: Iterable[Signature]) -> Table:
        """Filter status and topology score of every signature in `sigs`."""
        per = [verdicts(c, spec[1]) for c, spec in zip(counts, self.specs, strict=True)]
        table: Table = {}
        for sig in sigs:
            status: Status | None = None
            score = 0
            for i, value in enumerate(sig):
                if value is None:
                    continue
                verdict = per[i][value]
                if verdict.violated and self.specs[i][2]:
                    status = self.statuses[i]
                    break
                score += SCHEDULE_ANYWAY_PENALTY if verdict.violated else -verdict.change
            table[sig] = (status, score)
        return table

    def evaluation(
        self, current: Collection[str], obsolete: Collection[str], with_scores: bool
    ) -> Evaluation:
        """What `framework.evaluate` returns for these bindings (same order, same values)."""
        if self._static_filtered is None:  # made on first use: a reused run may never ask
            failed = self.static_failed.items()
            self._static_filtered = {n: s for n, s in failed if s.code is Code.UNSCHEDULABLE}
        filtered = dict(self._static_filtered)
        already = {n for n, s in self.static_failed.items() if s.code is Code.ALREADY_SELECTED}
        table = self._table(self._count(current), {self.sig[n] for n in self.candidates})
        passed: list[str] = []
        topo: dict[str, int] = {}
        for name in self.candidates:
            if name in current:
                already.add(name)
                continue
            status, score = table[self.sig[name]]
            if status is not None and self.spread_filters:
                filtered[name] = status
            else:
                passed.append(name)
                topo[name] = score
        scores: dict[str, ClusterScore] = {}
        if with_scores:
            for name in passed:
                scores[name] = self._score(name, topo[name], obsolete)
        return Evaluation(tuple(passed), filtered, frozenset(already), scores)

    def one(
        self, name: str, current: Collection[str], obsolete: Collection[str]
    ) -> tuple[Status | None, ClusterScore | None]:
        """`evaluation` of one candidate not in `current`: its topology Filter status (None:
        passes) or its score (None when no scores were prepared)."""
        sig = self.sig[name]
        status, topology = self._table(self._count(current), [sig])[sig]
        if status is not None and self.spread_filters:
            return status, None
        return None, self._score(name, topology, obsolete) if self.with_scores else None

    def _score(self, name: str, topology: int, obsolete: Collection[str]) -> ClusterScore:
        base = self.base[name]
        spread = topology if self.spread_scores else 0
        extra = 1 if name in obsolete else 0
        return ClusterScore(base.topology + spread, base.affinity, base.obsolete + extra)

    def _build_groups(self, current: Collection[str], obsolete: frozenset[str]) -> None:
        """One best-first list per signature of the candidates not selected yet."""
        lists: dict[Signature, list[Key]] = {}
        for name in self.candidates:
            if name in current:
                continue
            s = self._score(name, 0, obsolete)
            lists.setdefault(self.sig[name], []).append((s.topology, s.affinity, s.obsolete, name))
        self.groups = {sig: _Group(sorted(keys, reverse=True)) for sig, keys in lists.items()}
        self.groups_obsolete = obsolete

    def pick_cycle(
        self, current: Collection[str], obsolete: Collection[str], desired: int
    ) -> tuple[list[tuple[str, ClusterScore]], int]:
        """One PickN cycle: the clusters to pick, best first, with their scores, and the batch
        limit. The caller picks them and then calls `picked` for each."""
        limit = desired if self.cap is None else min(desired, self.cap)
        obs = frozenset(obsolete)
        if self.groups_obsolete != obs:
            self._build_groups(current, obs)
        table = self._table(self.counts, self.groups)
        live: dict[Signature, int] = {}
        for sig, group in self.groups.items():
            status, score = table[sig]
            if (status is None or not self.spread_filters) and group.head() is not None:
                live[sig] = score if self.spread_scores else 0
        remaining = sum(len(self.groups[s].keys) - self.groups[s].next for s in live)
        picks: list[tuple[str, ClusterScore]] = []
        for _ in range(min(desired, limit, remaining)):
            sig = max(live, key=lambda s: _shifted(self.groups[s].head(), live[s]))
            t, a, o, name = _shifted(self.groups[sig].head(), live[sig])
            picks.append((name, ClusterScore(t, a, o)))
            group = self.groups[sig]
            group.next += 1
            if group.head() is None:
                del live[sig]
        return picks, limit

    def picked(self, name: str) -> None:
        """A cluster got a current binding: count it in its topology domains."""
        self._add(self.counts, name)


def _shifted(key: Key | None, topology: int) -> Key:
    assert key is not None
    return (key[0] + topology, key[1], key[2], key[3])

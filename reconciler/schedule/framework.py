"""The scheduler framework: typed plugin statuses, cycle state, plugin base class and the runner.

Mirrors KubeFleet's `pkg/scheduler/framework` (spec §1.3): a profile lists plugins per extension
point (PostBatch, PreFilter, Filter, PreScore, Score); PreFilter/PreScore may return Skip to turn
off that plugin's Filter/Score for the cycle; Filter stops at the first non-success status; Score
sums per-plugin scores; any plugin error aborts the cycle (`ScheduleError`). Plugins whose results
depend only on the placement and the cluster (not on bindings) declare `static = True` and the
runner memoises them across the cycles of one `schedule` call. Used by `cycle` and the plugins.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .clusters import ClusterView
from .errors import ScheduleError


class Code(Enum):
    """KubeFleet's status codes (their names are the strings shown in decisions)."""

    SUCCESS = "Success"
    ERROR = "InternalError"
    UNSCHEDULABLE = "ClusterUnschedulable"
    ALREADY_SELECTED = "ClusterAlreadySelected"
    SKIP = "Skip"


@dataclass(frozen=True)
class Status:
    """What a plugin returns at one extension point."""

    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    def __str__(self) -> str:
        """KubeFleet's `Status.String()`: `<code>, <reason1>, <reason2>`."""
        return ", ".join([self.code.value, *self.reasons])

    @property
    def ok(self) -> bool:
        return self.code is Code.SUCCESS


SUCCESS = Status(Code.SUCCESS)


def unschedulable(plugin: str, *reasons: str) -> Status:
    """The cluster is filtered out, with reasons."""
    return Status(Code.UNSCHEDULABLE, reasons, plugin)


def skip(plugin: str, reason: str = "") -> Status:
    """Turn off this plugin's Filter (from PreFilter) or Score (from PreScore) for the cycle."""
    return Status(Code.SKIP, (reason,) if reason else (), plugin)


def error(plugin: str, message: str) -> Status:
    """The cycle cannot be computed; the whole cycle aborts."""
    return Status(Code.ERROR, (message,), plugin)


@dataclass(frozen=True, order=True)
class ClusterScore:
    """Scores compared lexicographically: topology spread, then affinity, then obsolete (§1.4)."""

    topology: int = 0
    affinity: int = 0
    obsolete: int = 0

    def __add__(self, other: ClusterScore) -> ClusterScore:
        return ClusterScore(
            self.topology + other.topology,
            self.affinity + other.affinity,
            self.obsolete + other.obsolete,
        )


ZERO = ClusterScore()


@dataclass(frozen=True)
class PlacementInfo:
    """What the plugins read of the placement."""

    policy: Any
    """The PlacementPolicy (never None: PickAll when absent)."""
    namespace: str | None
    """The ResourcePlacement's namespace; None for a ClusterResourcePlacement."""


@dataclass
class CycleState:
    """Shared by the framework and the plugins during one cycle."""

    placement: PlacementInfo
    views: Mapping[str, ClusterView]
    clusters: Sequence[ClusterView]
    """Every cluster of the fleet, sorted by name."""
    current: frozenset[str]
    """Clusters with a Scheduled or Bound binding of the latest policy snapshot."""
    obsolete: frozenset[str]
    """Clusters with a binding of an older policy snapshot."""
    memo: dict[Any, Any]
    """Lives for one `schedule` call: results of static plugins, fleet-wide min/max."""
    data: dict[str, Any] = field(default_factory=dict)
    """Per-plugin state for this cycle only (e.g. topology domain counts)."""
    skipped_filters: set[str] = field(default_factory=set)
    skipped_scores: set[str] = field(default_factory=set)
    desired_batch: int = 0
    batch_limit: int = 0


class Plugin:
    """A scheduler plugin; override the extension points it connects to."""

    name = "Plugin"
    static = False
    """True when Filter/Score depend only on the placement and the cluster."""

    def post_batch(self, state: CycleState) -> tuple[int, Status]:
        return 0, skip(self.name)

    def pre_filter(self, state: CycleState) -> Status:
        return SUCCESS

    def filter(self, state: CycleState, view: ClusterView) -> Status:
        return SUCCESS

    def pre_score(self, state: CycleState) -> Status:
        return SUCCESS

    def score(self, state: CycleState, view: ClusterView) -> tuple[ClusterScore, Status]:
        return ZERO, SUCCESS


@dataclass(frozen=True)
class Profile:
    """The plugins run at each extension point, in order."""

    name: str
    post_batch: tuple[Plugin, ...]
    pre_filter: tuple[Plugin, ...]
    filter: tuple[Plugin, ...]
    pre_score: tuple[Plugin, ...]
    score: tuple[Plugin, ...]


@dataclass(frozen=True)
class Evaluation:
    """The outcome of Filter (and Score) over every cluster in one cycle."""

    passed: tuple[str, ...]
    filtered: Mapping[str, Status]
    """Clusters a filter rejected, with the first rejecting status."""
    already_selected: frozenset[str]
    scores: Mapping[str, ClusterScore]
    """Scores of passed clusters (empty when Score was not run)."""


def _raise_on_error(status: Status) -> None:
    if status.code is Code.ERROR:
        raise ScheduleError(f"{status.plugin}: {'; '.join(status.reasons)}")


def run_post_batch(profile: Profile, state: CycleState) -> int:
    """The batch size limit: min over PostBatch plugins, never above the desired batch size."""
    limit = state.desired_batch
    for plugin in profile.post_batch:
        value, status = plugin.post_batch(state)
        _raise_on_error(status)
        if status.ok and 0 <= value < limit:
            limit = value
    state.batch_limit = limit
    return limit


def run_pre_filter(profile: Profile, state: CycleState) -> None:
    for plugin in profile.pre_filter:
        status = plugin.pre_filter(state)
        _raise_on_error(status)
        if status.code is Code.SKIP:
            state.skipped_filters.add(plugin.name)


def run_pre_score(profile: Profile, state: CycleState) -> None:
    for plugin in profile.pre_score:
        status = plugin.pre_score(state)
        _raise_on_error(status)
        if status.code is Code.SKIP:
            state.skipped_scores.add(plugin.name)


def _run_filters(plugins: Sequence[Plugin], state: CycleState, view: ClusterView) -> Status:
    """The first non-success Filter status of `plugins` for one cluster (SUCCESS if none)."""
    for plugin in plugins:
        status = plugin.filter(state, view)
        if status.code is Code.SUCCESS:
            continue
        _raise_on_error(status)
        if status.code in (Code.UNSCHEDULABLE, Code.ALREADY_SELECTED):
            return status
        raise ScheduleError(f"{plugin.name}: filter returned an unknown status {status}")
    return SUCCESS


def _split_static_prefix(
    plugins: Sequence[Plugin], skipped: set[str]
) -> tuple[tuple[Plugin, ...], tuple[Plugin, ...]]:
    """The leading static Filter plugins (results memoised per run) and the rest, in order."""
    active = [p for p in plugins if p.name not in skipped]
    cut = 0
    while cut < len(active) and active[cut].static:
        cut += 1
    return tuple(active[:cut]), tuple(active[cut:])


def _static_filter(
    plugins: tuple[Plugin, ...], state: CycleState
) -> tuple[list[ClusterView], dict[str, Status]]:
    """Clusters passing the static prefix, and the first failing status of the others; computed
    once per `schedule` call (static plugins depend only on the placement and the cluster)."""
    key = ("static-filter", tuple(p.name for p in plugins))
    cached: tuple[list[ClusterView], dict[str, Status]] | None = state.memo.get(key)
    if cached is None:
        passed: list[ClusterView] = []
        failed: dict[str, Status] = {}
        for view in state.clusters:
            status = _run_filters(plugins, state, view)
            if status.ok:
                passed.append(view)
            else:
                failed[view.name] = status
        cached = state.memo[key] = (passed, failed)
    return cached


def filter_cluster(profile: Profile, state: CycleState, view: ClusterView) -> Status:
    """The first non-success Filter status for one cluster (SUCCESS when all pass)."""
    active = [p for p in profile.filter if p.name not in state.skipped_filters]
    return _run_filters(active, state, view)


def _sum_scores(plugins: Sequence[Plugin], state: CycleState, view: ClusterView) -> ClusterScore:
    topology = affinity = obsolete = 0
    for plugin in plugins:
        score, status = plugin.score(state, view)
        if status is not SUCCESS and not status.ok:
            _raise_on_error(status)
            raise ScheduleError(f"{plugin.name}: score returned an unknown status {status}")
        topology += score.topology
        affinity += score.affinity
        obsolete += score.obsolete
    return ClusterScore(topology, affinity, obsolete)


def _score_all(
    profile: Profile, state: CycleState, names: Sequence[str]
) -> dict[str, ClusterScore]:
    """Summed scores; static plugins' part is memoised per cluster for the whole run."""
    active = [p for p in profile.score if p.name not in state.skipped_scores]
    static = [p for p in active if p.static]
    dynamic = [p for p in active if not p.static]
    memo = state.memo
    out: dict[str, ClusterScore] = {}
    for name in names:
        view = state.views[name]
        base = ZERO
        if static:
            base = memo.get(("static-score", name)) or ZERO
            if ("static-score", name) not in memo:
                base = memo[("static-score", name)] = _sum_scores(static, state, view)
        out[name] = base + _sum_scores(dynamic, state, view) if dynamic else base
    return out


def score_cluster(profile: Profile, state: CycleState, view: ClusterView) -> ClusterScore:
    """The summed score of one cluster over the Score plugins not skipped."""
    return _score_all(profile, state, [view.name])[view.name]


def evaluate(profile: Profile, state: CycleState, with_scores: bool) -> Evaluation:
    """PreFilter + Filter over every cluster, then (optionally) PreScore + Score on the passed."""
    run_pre_filter(profile, state)
    static, dynamic = _split_static_prefix(profile.filter, state.skipped_filters)
    candidates, static_failed = _static_filter(static, state)
    filtered = {n: s for n, s in static_failed.items() if s.code is Code.UNSCHEDULABLE}
    already = {n for n, s in static_failed.items() if s.code is Code.ALREADY_SELECTED}
    passed: list[str] = []
    for view in candidates:
        status = _run_filters(dynamic, state, view) if dynamic else SUCCESS
        if status.ok:
            passed.append(view.name)
        elif status.code is Code.ALREADY_SELECTED:
            already.add(view.name)
        else:
            filtered[view.name] = status
    scores: dict[str, ClusterScore] = {}
    if with_scores:
        run_pre_score(profile, state)
        scores = _score_all(profile, state, passed)
    return Evaluation(tuple(passed), filtered, frozenset(already), scores)


def _rank_key(scores: Mapping[str, ClusterScore]) -> Callable[[str], tuple[int, int, int, str]]:
    """(score, name) as a plain tuple: the same order, compared without Python calls."""

    def key(name: str) -> tuple[int, int, int, str]:
        s = scores[name]
        return (s.topology, s.affinity, s.obsolete, name)

    return key


def rank_scored(scores: Mapping[str, ClusterScore]) -> list[str]:
    """Best first; equal scores put the lexicographically larger name first (§1.4)."""
    return sorted(scores, key=_rank_key(scores), reverse=True)


def top_scored(scores: Mapping[str, ClusterScore], count: int) -> list[str]:
    """The first `count` names of `rank_scored(scores)`."""
    return heapq.nlargest(count, scores, key=_rank_key(scores))

"""The static part of the default profile for one placement over the whole fleet, made afresh or
updated from an earlier pass's for only the clusters that changed.

The static Filter plugins (ClusterAffinity required terms, ClusterEligibility, NamespaceAffinity,
TaintToleration) and the static Score plugin (ClusterAffinity preferred terms) read only the
placement's policy and one cluster; topology spread reads a cluster only through its values of
the constraints' keys (its signature). `Statics` keeps, per placement, the clusters that pass
the static filters (sorted by name), the first failing status of the others, every cluster's
signature with the number of clusters per topology value, and the candidates' static scores
with the PreScore memo they were made with (the fleet-wide min/max of property sorters). `make`
runs the plugins once per class of clusters (`classes`; the classes of a pass's clusters are
worked out once for the placements that read the same labels); `update` starts from an earlier
`Statics` of the same policy and reruns the plugins for the changed clusters only (all the
scores again when the PreScore memo changed); `reads_same` tells, without those copies, when
the changed clusters read as before (the earlier `Statics` then stands). Never mutated once
made. Raises `ScheduleError` as the plugins do. Used by `incremental` (and through it `reuse`).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .classes import filter_classes, score_class
from .clusters import ClusterView
from .framework import (
    ZERO,
    ClusterScore,
    CycleState,
    Plugin,
    Profile,
    Status,
    _run_filters,
    _split_static_prefix,
    _sum_scores,
    run_pre_filter,
    run_pre_score,
)
from .topologyspreadconstraints import NAME as SPREAD
from .topologyspreadconstraints import ordered_specs

Signature = tuple[str | None, ...]
Spec = tuple[str, int, bool]
"""(topology key, maxSkew, DoNotSchedule) of one spread constraint."""


@dataclass(frozen=True)
class Statics:
    """One placement's static results over one pass's fleet."""

    candidates: list[str]
    """Clusters passing the static filters, sorted by name."""
    failed: Mapping[str, Status]
    """The others, with the first failing status."""
    sig: Mapping[str, Signature]
    """Every cluster's values of the spread constraints' keys (in constraint order)."""
    values: tuple[Mapping[str, int], ...]
    """Per constraint: clusters per topology value (the domains are the values present)."""
    scored: bool
    """`base` holds the candidates' static scores (PreScore ran)."""
    base: Mapping[str, ClusterScore]
    score_memo: Mapping[Any, Any]
    """The cycle memo after PreScore (the property sorters' min/max) `base` was made with."""

    def domains(self) -> list[list[str]]:
        """Per constraint, every value some cluster carries, sorted."""
        return [sorted(v for v, n in counts.items() if n) for counts in self.values]


def _signature(view: ClusterView, specs: Sequence[Spec]) -> Signature:
    got = view.labels.get
    return tuple([got(k) for k, _, _ in specs])


def _count_values(sig: Mapping[str, Signature], width: int) -> tuple[dict[str, int], ...]:
    counts: tuple[dict[str, int], ...] = tuple({} for _ in range(width))
    for s in sig.values():
        for i, value in enumerate(s):
            if value is not None:
                counts[i][value] = counts[i].get(value, 0) + 1
    return counts


def make(plugins: Sequence[Plugin], state: CycleState, specs: Sequence[Spec]) -> Statics:
    """The static filters over every cluster, run once per class of clusters that read the same;
    no scores yet (`with_scores`)."""
    firsts, index = filter_classes(state.placement, state.clusters)
    statuses = [_run_filters(plugins, state, view) for view in firsts]
    passed: list[str] = []
    failed: dict[str, Status] = {}
    if all(status.ok for status in statuses):
        passed = [view.name for view in state.clusters]
    else:
        for view, number in zip(state.clusters, index, strict=True):
            status = statuses[number]
            if status.ok:
                passed.append(view.name)
            else:
                failed[view.name] = status
    if specs:
        sig = {v.name: _signature(v, specs) for v in state.clusters}
    else:
        sig = dict.fromkeys((v.name for v in state.clusters), ())
    return Statics(passed, failed, sig, _count_values(sig, len(specs)), False, {}, {})


def update(
    before: Statics,
    changed: Collection[str],
    plugins: Sequence[Plugin],
    state: CycleState,
    specs: Sequence[Spec],
) -> Statics:
    """`make` for this pass from `before` (same policy and placement, an earlier fleet), given
    the clusters added, removed or changed since: only those are filtered again."""
    candidates = list(before.candidates)
    failed = dict(before.failed)
    sig = dict(before.sig)
    values = tuple(dict(v) for v in before.values)
    base = dict(before.base)
    for name in changed:
        at = bisect_left(candidates, name)
        if at < len(candidates) and candidates[at] == name:
            del candidates[at]
        failed.pop(name, None)
        base.pop(name, None)
        for i, value in enumerate(sig.pop(name, ())):
            if value is not None:
                values[i][value] -= 1
        view = state.views.get(name)
        if view is None:
            continue
        status = _run_filters(plugins, state, view)
        if status.ok:
            insort(candidates, name)
        else:
            failed[name] = status
        sig[name] = _signature(view, specs) if specs else ()
        for i, value in enumerate(sig[name]):
            if value is not None:
                values[i][value] = values[i].get(value, 0) + 1
    return Statics(candidates, failed, sig, values, before.scored, base, before.score_memo)


def with_scores(
    statics: Statics, plugins: Sequence[Plugin], state: CycleState, changed: Collection[str] | None
) -> Statics:
    """`statics` with the candidates' static scores (after PreScore): only the `changed`
    candidates scored again when `statics` has scores made with an equal PreScore memo, every
    candidate (once per class) otherwise."""
    memo = dict(state.memo)
    if not plugins:
        base = dict.fromkeys(statics.candidates, ZERO)
    elif statics.scored and changed is not None and statics.score_memo == memo:
        base = dict(statics.base)
        for name in changed:
            if name in state.views and name not in statics.failed:
                base[name] = _sum_scores(plugins, state, state.views[name])
    else:
        key_of = score_class(state.placement)
        known: dict[Hashable, ClusterScore] = {}
        base = {}
        for name in statics.candidates:
            view = state.views[name]
            key = key_of(view)
            score = known.get(key)
            if score is None:
                score = known[key] = _sum_scores(plugins, state, view)
            base[name] = score
    return Statics(
        statics.candidates, statics.failed, statics.sig, statics.values, True, base, memo
    )


def prepare(
    profile: Profile,
    state: CycleState,
    scores: bool,
    before: tuple[Statics, Collection[str]] | None = None,
) -> tuple[Statics, list[Spec]]:
    """PreFilter, the static filters (`make`, or `update` from `before`: an earlier `Statics`
    of the same policy and the clusters changed since), and with `scores` PreScore and the
    static scores; with the spread constraints Filter evaluates (none when it is skipped)."""
    run_pre_filter(profile, state)
    static, _ = _split_static_prefix(profile.filter, state.skipped_filters)
    specs = ordered_specs(state.placement.policy) if SPREAD not in state.skipped_filters else []
    if before is None:
        made = make(static, state, specs)
    else:
        made = update(before[0], before[1], static, state, specs)
    if scores:
        run_pre_score(profile, state)
        active = _static_scores(profile, state)
        made = with_scores(made, active, state, before[1] if before is not None else None)
    return made, specs


def _static_scores(profile: Profile, state: CycleState) -> list[Plugin]:
    """The static score plugins PreScore left active, in the profile's order."""
    return [p for p in profile.score if p.name not in state.skipped_scores and p.static]


def reads_same(
    profile: Profile,
    state: CycleState,
    before: Statics,
    changed: Collection[str],
) -> bool:
    """Whether `prepare(profile, state, before.scored, (before, changed))` would make a
    `Statics` equal to `before`: every changed cluster present now just when it was, with the
    same first failing static status, signature and static score, and PreScore leaving an equal
    memo. Runs what `prepare` runs for them, in its order (PreFilter, the static filters,
    PreScore, the static scores), so a plugin raises as there; without `update`'s copies of
    every cluster's results (a relabel that only a filtered cluster's preference reads: ~40
    PickN placements a pass at fleet-1k)."""
    run_pre_filter(profile, state)
    static, _ = _split_static_prefix(profile.filter, state.skipped_filters)
    specs = ordered_specs(state.placement.policy) if SPREAD not in state.skipped_filters else []
    passing: list[ClusterView] = []
    for name in changed:
        view = state.views.get(name)
        if view is None or name not in before.sig:  # `sig`: every cluster of its fleet
            if (view is None) != (name not in before.sig):
                return False
            continue
        status = _run_filters(static, state, view)
        if (None if status.ok else status) != before.failed.get(name):
            return False
        if (_signature(view, specs) if specs else ()) != before.sig.get(name):
            return False
        if status.ok:
            passing.append(view)
    if not before.scored:
        return True
    run_pre_score(profile, state)
    active = _static_scores(profile, state)
    if dict(state.memo) != before.score_memo:
        return False
    return all(
        (_sum_scores(active, state, view) if active else ZERO) == before.base.get(view.name)
        for view in passing
    )

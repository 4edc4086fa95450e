"""Reuse of one RollingUpdate placement's rollout across passes, once it has settled.

The rollout of a placement (`rollstage`: observe the agents' reports, pick the bindings to move,
settle deletions) reads the plan `place` made, the report entries of its clusters about it, the
content the previous output gave each cluster, which clusters are still declared and which are
assumed ready - and the pass's clock. A rollout that changed nothing (its state came out as it
went in), waits for nothing and set no timer does not depend on the clock: with the same inputs
at any later time it gives the same result again. `rollout_inputs` keys exactly those inputs;
`reuse` applies the remembered result, `keep` remembers a settled one (`reconciler.stagememo`).
What the key reads about the placement's clusters (their report entries, whether they are
declared, assumed ready) is last pass's very objects while none of them changed
(`reconciler.rollfacts`), so an unchanged placement costs a few identity checks, not a step per
cluster; a reused rollout hands out the remembered dicts themselves, which cannot change
(`reconciler.rollkept.Frozen`), and the pass that remembers a rollout hands its plan those very
dicts at once (`keep`), so the later stages key it as the next pass will.

Never reused: held and External placements (drivers move them), placements with bindings being
deleted or an eviction this pass.

`same_manifests` gives a placement that `place` recomputed (e.g. because one cluster joined) the
very manifest tuple of last pass when the new one is equal: the per-cluster memos of the later
stages (`rollview`, `layoutcells`, `layoutdiff`) compare a cluster's manifests by identity, so
an equal but new tuple would make every cluster of the placement miss. Called by `rollstage`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from itertools import compress, repeat
from operator import is_
from typing import Any

from gitfleet.api.report import PlacementReport
from reconciler.manifests import Manifest
from reconciler.placement import PlacementPlan
from reconciler.priorindex import given_content
from reconciler.rollfacts import facts
from reconciler.rollkept import Frozen, frozen
from reconciler.rollout.model import PlacementView
from reconciler.rollsplice import Rows
from reconciler.rollview import ReportEntries, cluster_names
from reconciler.stagememo import IdentityMemo, StageMemo
from reconciler.state import PlacementState


@dataclass(frozen=True)
class _Rolled:
    state: PlacementState
    desired: Frozen[str, str]
    reports: Frozen[str, PlacementReport]
    apply_strategies: Frozen[str, Mapping[str, Any]]
    view: PlacementView


_ROLLOUTS: StageMemo[_Rolled] = StageMemo()
_GIVEN: StageMemo[tuple[str | None, ...]] = StageMemo()
"""Placement key -> the content each of its clusters was given, with the prior index (by its
token) and the clusters it was read for."""
_indexes: IdentityMemo[int] = IdentityMemo()
_NO_ROWS: dict[str, Any] = {}
_bound_names: IdentityMemo[tuple[tuple[str, ...], frozenset[str]]] = IdentityMemo()
_tokens = itertools.count()
_MANIFESTS: StageMemo[tuple[Manifest, ...]] = StageMemo()
"""Placement key -> the manifest tuple it was last given (with the last equal tuple seen)."""


def same_manifests(plan: PlacementPlan) -> None:
    """Replace `plan.manifests` with last pass's tuple when they are equal (element by
    element: mostly the very same `Manifest` objects), else remember the new one."""
    if plan.held:
        return
    inputs = (plan.manifests,)
    found = _MANIFESTS.get(plan.key, inputs)
    if found is None:
        _MANIFESTS.put(plan.key, inputs, plan.manifests)
    else:
        plan.manifests = found


def index_token(prior_index: object) -> int:
    """A number naming this prior index object (the same object gives the same number while
    it is remembered, a number is never reused); once per pass, by `rollstage.roll_out`."""
    _indexes.next_round()
    _bound_names.next_round()
    found = _indexes.get(prior_index)
    if found is None:
        found = next(_tokens)
        _indexes.put(prior_index, found)
    return found


def _given(
    key: str, names: tuple[str, ...], prior_index: Mapping[str, Any], token: int | None
) -> tuple[str | None, ...]:
    """The content each cluster of `names` was given (its previous index entry's), read again
    only when the placement's previous rows or its clusters changed: the rows of a merged index
    (`priorindex.RowsIndex.by_placement`) are the same object while unchanged, whatever other
    placements did; another index is read again whenever it is another object than last time
    (an unchanged output is the very same prior index, `priorindex.recorded_prior_index`)."""
    by_placement = getattr(prior_index, "by_placement", None)
    if isinstance(by_placement, dict):
        rows = by_placement.get(key, _NO_ROWS)
        inputs: tuple[Any, ...] = (rows, names)  # rows compare by identity first
        found = _GIVEN.get(key, inputs)
        if found is None:
            found = _given_rows(key, names, rows)
            _GIVEN.put(key, inputs, found)
        return found
    inputs = (token, names)
    found = _GIVEN.get(key, inputs) if token is not None else None
    if found is None:
        empty: Mapping[str, Any] = {}
        found = tuple([given_content(prior_index.get(c, empty).get(key)) for c in names])
        if token is not None:
            _GIVEN.put(key, inputs, found)
    return found


_GIVEN_ROWS: Rows[str | None] = Rows()
"""Placement key -> the content each cluster was given, by the very previous index row it was
read from (a placement whose rows changed for one cluster reads that cluster's row only)."""


def _given_rows(
    key: str, names: tuple[str, ...], rows: Mapping[str, Any]
) -> tuple[str | None, ...]:
    """`given_content` of each cluster's row of `rows`, reused per cluster by its row object."""
    got = list(map(rows.get, names))  # rows compare by identity first
    found = _GIVEN_ROWS.lookup(key, names, got)
    for i in list(compress(range(len(found)), map(is_, found, repeat(None)))):
        found[i] = given_content(got[i])
    _GIVEN_ROWS.end(key, names, got, found)
    return tuple(found)


def _names(key: str, bindings: tuple[Any, ...]) -> tuple[tuple[str, ...], frozenset[str]]:
    """The clusters of `bindings` in order and as a set, once per bindings tuple (an unchanged
    placement's state keeps its very tuple from pass to pass; a changed one reads only the
    bindings that are not last call's objects, `rollview.cluster_names`)."""
    found = _bound_names.get(bindings)
    if found is None:
        names = tuple(cluster_names(key, bindings))
        found = (names, frozenset(names))
        _bound_names.put(bindings, found)
    return found


def bound_names(key: str, bindings: tuple[Any, ...]) -> tuple[tuple[str, ...], frozenset[str]]:
    """The clusters of placement `key`'s `bindings`, in order and as a set (remembered per
    bindings tuple, as `rollout_inputs` read them)."""
    return _names(key, bindings)


def given_contents(
    plan: PlacementPlan, prior_index: Mapping[str, Any], token: int | None
) -> tuple[str | None, ...] | None:
    """The content each of `plan`'s bindings' clusters was given, in the bindings' order, as
    `rollout_inputs` read it (so mostly remembered), or None when it cannot be read."""
    names = _names(plan.key, plan.state.bindings)[0]
    try:
        return _given(plan.key, names, prior_index, token)
    except Exception:  # an unreadable previous row: the rollout reads it again, and reports it
        return None


def rollout_inputs(
    plan: PlacementPlan,
    entries: ReportEntries,
    prior_index: Mapping[str, Mapping[str, Mapping[str, Any]]],
    clusters: frozenset[str],
    assume: frozenset[str],
    token: int | None = None,
) -> tuple[Any, ...] | None:
    """Everything the rollout of `plan` reads, or None when it is never reused (or its
    inputs cannot be read: the rollout then runs, and its own guard reports any fault).
    `token`: `index_token(prior_index)`."""
    if plan.held or plan.strategy_type == "External" or plan.state.deleting:
        return None
    key, (names, named) = plan.key, _names(plan.key, plan.state.bindings)
    try:
        given = _given(key, names, prior_index, token)
    except Exception:  # e.g. an unreadable previous row: no reuse, never a failed pass
        return None
    read = facts(key, names, named, entries, clusters, assume)
    return (
        plan.state,
        plan.manifests,
        frozen(plan.per_cluster),  # a reused plan's very dict (`placecarry.copy_plan`)
        dict(plan.renders),
        dict(plan.unavailable),
        plan.target_index,
        plan.rolling,
        (plan.kind, plan.name, plan.namespace, plan.placement_type, plan.number_of_clusters),
        plan.fixed_names,
        plan.apply_strategy,
        plan.scheduled,
        plan.declared,
        read.reports,
        given,
        read.declared,
        read.assumed,
    )


_REPORTS_AT = 12
"""Where `rollout_inputs` keeps its clusters' report entries (`rollfacts.Facts.reports`)."""


def known_reports(inputs: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
    """The report entry about the placement of each of its bindings' clusters, in their order,
    as `rollout_inputs` read them (() without any entries; None without inputs)."""
    return inputs[_REPORTS_AT] if inputs is not None else None


def reuse(plan: PlacementPlan, inputs: tuple[Any, ...] | None) -> PlacementView | None:
    """Apply the remembered rollout of `plan` (its view for the drivers), or None."""
    found = _ROLLOUTS.get(plan.key, inputs) if inputs is not None else None
    if found is None:
        return None
    plan.state = found.state
    plan.desired = found.desired  # `Frozen`: the very dicts of the pass that computed them
    plan.reports = found.reports
    plan.cluster_apply_strategies = found.apply_strategies
    return found.view


def keep(
    plan: PlacementPlan,
    inputs: tuple[Any, ...] | None,
    before: PlacementState,
    wakeup: datetime | None,
    view: PlacementView,
) -> None:
    """Remember the rollout just done when it settled (see the module docstring)."""
    settled = (
        inputs is not None
        and wakeup is None
        and not plan.held
        and not plan.waits
        and not plan.moved_to
        and not plan.rollout_note
        and plan.state == before
    )
    if not settled or inputs is None:
        _ROLLOUTS.drop(plan.key)
        return
    rolled = _Rolled(
        before,  # equal: keeping the object that went in keeps later stages' keys identical
        frozen(plan.desired),
        frozen(plan.reports),
        frozen(plan.cluster_apply_strategies),
        view,
    )
    _ROLLOUTS.put(plan.key, inputs, rolled)
    _hand_on(plan, rolled)


def _hand_on(plan: PlacementPlan, rolled: _Rolled) -> None:
    """The plan takes the frozen dicts just remembered (nothing changes them after the
    rollout): the later stages of this pass key it by the very dicts `reuse` hands on next
    pass, found by identity then, not compared cluster by cluster."""
    plan.desired = rolled.desired
    plan.reports = rolled.reports
    plan.cluster_apply_strategies = rolled.apply_strategies

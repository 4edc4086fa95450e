"""`statusentries.cluster_entries` looks again only at the clusters whose inputs changed
(`_changed`: per column, by identity over the selected names): a change to any one input of
one cluster (its decision, binding, desired content, override result, sync error, rollout wait
or prior conditions) gives the entries a fresh call gives, a cluster added or removed too, and
the others are not made again; a placement with two bindings on a cluster is looked at whole
and gives them as well."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo, statusentries
from reconciler.manifests import ClusterManifests
from reconciler.pass_ import reconcile
from reconciler.placement import PlacementPlan
from reconciler.schedule.outcome import Decision
from reconciler.state import State
from renderers import load_fleet

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
Edit = Callable[[PlacementPlan, str], PlacementPlan]


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    placememo.forget()
    yield
    placememo.forget()


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> PlacementPlan:
    """The generated fleet's placement with the most selected clusters, all bound."""
    root: Path = tmp_path_factory.mktemp("fleet")
    write_fleet(build_fleet(FleetSize(16, 12, 48, 6), seed=7), root)
    result = reconcile(load_fleet(WorkdirTree(root)), State(), None, NOW)
    return max(result.plans.values(), key=lambda p: (len(p.live_clusters()), p.key))


def _entries(plan: PlacementPlan, prior: dict[str, Any]) -> Any:
    made = statusentries.cluster_entries(plan, prior, {}, NOW)
    return made.entries, made.summaries, made.by_name


def _settled(plan: PlacementPlan) -> dict[str, Any]:
    """The conditions as the next pass reads them back, once their times are kept."""
    first = _entries(plan, {})[2]
    prior: dict[str, Any] = _entries(plan, first)[2]
    assert prior == first
    return prior


def _with(plan: PlacementPlan, field: str, name: str, value: Any) -> PlacementPlan:
    changes: dict[str, Any] = {field: {**getattr(plan, field), name: value}}
    return dataclasses.replace(plan, **changes)


def _rebound(plan: PlacementPlan, name: str) -> PlacementPlan:
    bindings = tuple(
        dataclasses.replace(b, resource_index=(b.resource_index or 0) + 7)
        if b.cluster == name
        else b
        for b in plan.state.bindings
    )
    return dataclasses.replace(plan, state=dataclasses.replace(plan.state, bindings=bindings))


def _redecided(plan: PlacementPlan, name: str) -> PlacementPlan:
    decisions = tuple(
        Decision(d.cluster, d.selected, d.reason + " again") if d.cluster == name else d
        for d in plan.decisions
    )
    return dataclasses.replace(plan, decisions=decisions)


def _dropped(plan: PlacementPlan, name: str) -> PlacementPlan:
    return dataclasses.replace(
        plan, decisions=tuple(d for d in plan.decisions if d.cluster != name)
    )


def _twice_bound(plan: PlacementPlan, name: str) -> PlacementPlan:
    """A second binding on the cluster, on other content, after its live one."""
    bindings = plan.state.bindings
    other = _rebound(plan, name).state.bindings
    twice = tuple(b for b in other if b.cluster == name)
    state = dataclasses.replace(plan.state, bindings=bindings + twice)
    return dataclasses.replace(plan, state=state)


OVERRIDDEN = ClusterManifests(cluster_overrides=("x-0",))
EDITS: list[tuple[str, Edit]] = [
    ("decision", _redecided),
    ("binding", _rebound),
    ("desired content", lambda p, n: _with(p, "desired", n, "other")),
    ("override result", lambda p, n: _with(p, "per_cluster", n, OVERRIDDEN)),
    ("sync error", lambda p, n: _with(p, "sync_errors", n, "lost a conflict")),
    ("rollout wait", lambda p, n: _with(p, "waits", n, "waiting for 60s")),
    ("cluster removed", _dropped),
    ("two bindings on a cluster", _twice_bound),
]


@pytest.mark.parametrize(("name", "edit"), EDITS, ids=[n for n, _ in EDITS])
def test_one_changed_input_gives_the_fresh_entries(
    plan: PlacementPlan, name: str, edit: Edit, monkeypatch: pytest.MonkeyPatch
) -> None:
    selected = [d.cluster for d in plan.decisions if d.selected]
    assert len(selected) >= 8
    prior = _settled(plan)
    made: list[str] = []
    real = statusentries._entry

    def counting(p: PlacementPlan, inputs: tuple[Any, ...], *args: Any) -> Any:
        made.append(inputs[0].cluster)
        return real(p, inputs, *args)

    monkeypatch.setattr(statusentries, "_entry", counting)
    target = selected[len(selected) // 2]
    edited = edit(plan, target)
    warm = _entries(edited, prior)
    warm_made = list(made)
    placememo.forget()
    assert warm == _entries(edited, prior), name
    assert set(warm_made) <= {target}, name  # the others kept their entries


def test_changed_prior_conditions_give_the_fresh_entries(plan: PlacementPlan) -> None:
    prior = _settled(plan)
    name = next(iter(prior))
    stamp = "2020-01-01T00:00:00Z"
    older = {**prior, name: tuple(_stamped(c, stamp) for c in prior[name])}
    warm = _entries(plan, older)
    placememo.forget()
    assert warm == _entries(plan, older)
    assert {c.last_transition_time for c in warm[2][name]} == {stamp}  # kept from the prior


def _stamped(cond: Any, stamp: str) -> Any:
    return cond.model_copy(update={"last_transition_time": stamp})


def test_an_entry_made_anew_is_looked_at_again_next_pass(plan: PlacementPlan) -> None:
    """An entry whose conditions are new objects (another generation's were read) is not kept;
    the next pass, with nothing else changed, makes it again rather than finding none."""
    prior = _settled(plan)
    name = next(iter(prior))
    regen = {
        **prior,
        name: tuple(c.model_copy(update={"observed_generation": 0}) for c in prior[name]),
    }
    written = _entries(plan, regen)[2]
    again = _entries(plan, written)
    placememo.forget()
    assert again == _entries(plan, written)

"""`statusrows.FileRows` gives a placement's kept file only while the plan's fields equal the
kept ones and its prior value is the very object it was made from: a field changed (a dict or
list changed in place too), a prior value of another identity, a file that could not be reused,
a placement added each make that placement's file again, and no other. In a pass, a placement
whose rollout wait changed in place gets the status file a fresh pass gives, alone."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo, statusdocs, statusentries
from reconciler.pass_ import reconcile
from reconciler.placement import PlacementPlan
from reconciler.state import State
from reconciler.statusrows import FileRows, Made
from renderers import load_fleet

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)


@dataclass
class _Plan:
    state: tuple[str, ...]
    desired: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    kind: str = "CRP"


class _Stage:
    """A stage over `FileRows`: a placement's file shows every input it was made from."""

    def __init__(self) -> None:
        self.rows = FileRows(("state", "kind"), {"desired": dict, "errors": list})
        self.made: list[str] = []
        self.reusable = True
        self.next_prior: dict[str, object] = {}

    def run(self, plans: dict[str, _Plan], priors: dict[str, object]) -> dict[str, bytes]:
        self.made.clear()
        return self.rows.files(plans, priors.__getitem__, "s/{}.yaml".format, self._make)

    def _make(self, key: str, plan: _Plan, prior: object) -> Made:
        self.made.append(key)
        text = f"{key} {plan.state} {sorted(plan.desired.items())} {plan.errors} {prior}"
        return Made(text.encode(), self.reusable, self.next_prior.get(key, prior))


def _fresh(plans: dict[str, _Plan], priors: dict[str, object]) -> dict[str, bytes]:
    return _Stage().run(plans, priors)


@pytest.fixture
def stage() -> _Stage:
    return _Stage()


def _fleet() -> tuple[dict[str, _Plan], dict[str, object]]:
    plans = {k: _Plan(("s", k), {"c1": "h1", "c2": "h2"}, []) for k in ("a", "b", "c")}
    return plans, {k: ("conds", k) for k in plans}


def test_the_very_inputs_give_the_kept_bytes_without_making_them(stage: _Stage) -> None:
    plans, priors = _fleet()
    first = stage.run(plans, priors)
    assert stage.made == ["a", "b", "c"]
    again = stage.run(plans, priors)
    assert stage.made == []
    assert all(again[p] is first[p] for p in first)
    plans["b"].state = ("s", "b")  # equal, another object: compared by value
    assert stage.run(plans, priors) == first
    assert stage.made == []


@pytest.mark.parametrize(
    "change",
    [
        lambda p, pr: p["b"].desired.__setitem__("c2", "h3"),  # in place: the kept one is a copy
        lambda p, pr: p["b"].desired.pop("c1"),
        lambda p, pr: p["b"].errors.append("broken"),
        lambda p, pr: setattr(p["b"], "state", ("s", "b", "new")),
        lambda p, pr: pr.__setitem__("b", ("conds", "b")),  # equal prior, another object
    ],
    ids=["dict changed in place", "dict key gone", "list appended", "field", "prior object"],
)
def test_a_changed_input_makes_that_placement_again(stage: _Stage, change: Any) -> None:
    plans, priors = _fleet()
    stage.run(plans, priors)
    change(plans, priors)
    files = stage.run(plans, priors)
    assert stage.made == ["b"]
    assert files == _fresh(plans, priors)
    assert stage.run(plans, priors) == files and stage.made == []


def test_a_file_that_cannot_be_reused_is_made_every_pass(stage: _Stage) -> None:
    plans, priors = _fleet()
    stage.reusable = False
    stage.run(plans, priors)
    stage.run(plans, priors)
    assert stage.made == ["a", "b", "c"]


def test_kept_with_the_prior_value_make_gives_them_with(stage: _Stage) -> None:
    plans, priors = _fleet()
    written = ("written", "b")
    stage.next_prior["b"] = written
    first = stage.run(plans, priors)
    stage.next_prior.clear()
    assert stage.run(plans, priors) == first and stage.made == ["b"]  # made with another
    stage.next_prior["b"] = written
    stage.run(plans, {**priors, "b": written})
    assert stage.made == ["b"]  # made again with the prior it was kept with
    stage.run(plans, {**priors, "b": written})
    assert stage.made == []


def test_placements_added_and_removed(stage: _Stage) -> None:
    plans, priors = _fleet()
    stage.run(plans, priors)
    del plans["a"]
    plans["d"], priors["d"] = _Plan(("s", "d")), ("conds", "d")
    files = stage.run(plans, priors)
    assert stage.made == ["d"]
    assert files == _fresh(plans, priors)
    assert list(files) == ["s/b.yaml", "s/c.yaml", "s/d.yaml"]


@pytest.fixture
def settled(tmp_path: Path) -> Iterator[tuple[dict[str, PlacementPlan], State]]:
    """A generated fleet's plans and the output of a pass whose condition times are kept."""
    placememo.forget()
    write_fleet(build_fleet(FleetSize(16, 12, 48, 6), seed=7), tmp_path)
    fleet = load_fleet(WorkdirTree(tmp_path))
    result = reconcile(fleet, State(), None, NOW)
    result = reconcile(fleet, result.state, None, NOW)
    yield dict(result.plans), result.state
    placememo.forget()


def test_a_wait_changed_in_place_rewrites_that_status_alone(
    settled: tuple[dict[str, PlacementPlan], State], monkeypatch: pytest.MonkeyPatch
) -> None:
    plans, prior = settled
    before = statusdocs.placement_status_files(plans, prior, {}, NOW)
    made: list[str] = []
    real = statusdocs._placement_file

    def counting(key: str, *args: Any, **kwargs: Any) -> Any:
        made.append(key)
        return real(key, *args, **kwargs)

    key, plan = max(plans.items(), key=lambda kv: (len(kv[1].live_clusters()), kv[0]))
    plan.waits[plan.live_clusters()[0]] = "waiting: a test"  # in place, as the rollout does
    monkeypatch.setattr(statusdocs, "_placement_file", counting)
    warm = statusdocs.placement_status_files(plans, prior, {}, NOW)
    assert made == [key]
    changed = sorted(p for p in warm if warm[p] != before[p])
    assert changed == [f"status/placements/{key}.yaml"]
    assert b"rolloutWaiting: 'waiting: a test'" in warm[changed[0]]
    placememo.forget()
    assert warm == statusdocs.placement_status_files(plans, prior, {}, NOW)


def test_a_status_that_read_the_clock_is_made_again(
    settled: tuple[dict[str, PlacementPlan], State],
) -> None:
    """A condition that changed since the prior output takes the pass's time: the file is not
    kept, and a later pass on the same inputs writes its own time."""
    plans, prior = settled
    statusdocs.placement_status_files(plans, prior, {}, NOW)
    key, plan = max(plans.items(), key=lambda kv: (len(kv[1].live_clusters()), kv[0]))
    plan.sync_errors[plan.live_clusters()[0]] = "a conflict"
    path = f"status/placements/{key}.yaml"
    later = datetime(2026, 11, 21, 11, tzinfo=UTC)
    first = statusdocs.placement_status_files(plans, prior, {}, NOW)[path]
    again = statusdocs.placement_status_files(plans, prior, {}, later)[path]
    assert b"2026-11-21T10:00:00Z" in first and b"2026-11-21T11:00:00Z" not in first
    assert b"2026-11-21T11:00:00Z" in again


def test_the_pass_after_one_that_set_condition_times_makes_no_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold pass sets every condition's time from its clock. The next pass reads those
    conditions back as its prior ones: with them the same inputs give the same documents at
    any time, so it makes no status file and no per-cluster entry, and writes what a pass
    without any remembered result writes."""
    placememo.forget()
    write_fleet(build_fleet(FleetSize(16, 12, 48, 6), seed=7), tmp_path)
    fleet = load_fleet(WorkdirTree(tmp_path))
    first = reconcile(fleet, State(), None, NOW)
    made: list[str] = []

    def counting(name: str, real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            made.append(name)
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(statusdocs, "_status_file", counting("file", statusdocs._status_file))
    monkeypatch.setattr(statusentries, "_entry", counting("entry", statusentries._entry))
    later = datetime(2026, 11, 21, 11, tzinfo=UTC)
    warm = reconcile(fleet, first.state, None, later)
    assert made == []
    placememo.forget()
    fresh = reconcile(fleet, first.state, None, later)
    assert made and {made[0]} <= {"file", "entry"}
    status = [p for p in fresh.files if p.startswith("status/placements/")]
    assert status and all(warm.files[p] == fresh.files[p] for p in status)
    assert warm.files == fresh.files
    placememo.forget()


def test_entries_that_took_the_clock_come_again_with_the_conditions_they_wrote(
    settled: tuple[dict[str, PlacementPlan], State], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entries made without prior conditions take the clock's time; given back the conditions
    they wrote (equal objects, as a restarted hub parses them) they are not made again, at a
    later time too, and equal the ones made afresh."""
    plans, _ = settled
    plan = max(plans.values(), key=lambda p: (len(p.live_clusters()), p.key))
    written = statusentries.cluster_entries(plan, {}, {}, NOW).by_name
    made: list[str] = []
    real = statusentries._entry

    def counting(plan: Any, *args: Any) -> Any:
        made.append(plan.key)
        return real(plan, *args)

    monkeypatch.setattr(statusentries, "_entry", counting)
    later = datetime(2026, 11, 21, 11, tzinfo=UTC)
    again = statusentries.cluster_entries(plan, copy.deepcopy(written), {}, later)
    assert made == [] and len(again.entries) > 1
    placememo.forget()
    fresh = statusentries.cluster_entries(plan, written, {}, later)
    assert made and again.entries == fresh.entries and again.by_name == fresh.by_name

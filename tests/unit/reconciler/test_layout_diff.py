"""A placement's layout patched cluster by cluster (`reconciler.layoutdiff`) and the files unit
that names its changed paths (`unitfiles.patched_unit`) give exactly what laying out afresh
gives: a chain of passes over a generated fleet - clusters added, removed and relabelled, a
placement's spec changed, a resource edited and its rollout advancing wave by wave - computed
with the memos each pass leaves for the next equals the same chain computed with every memo
forgotten before each pass, and adding or removing a cluster patches placements instead of
laying them out in full."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from benchmarks.hub_scenarios import _edit_yaml, scenarios
from gitfleet.repo.workdir import WorkdirTree
from reconciler import layoutdiff, placememo
from reconciler.assemble import assemble_clusters
from reconciler.binding import Binding
from reconciler.layoutcells import clean_layout
from reconciler.manifests import ClusterManifests, Manifest
from reconciler.pass_ import PassResult, reconcile
from reconciler.placement import PlacementPlan
from reconciler.stagememo import forget_stages
from reconciler.state import PlacementState, Snapshot, State, read_state
from reconciler.status import Cond
from reconciler.unitfiles import compose, keep_base, patched_unit
from renderers import load_fleet
from tests.unit.reconciler.test_place_memo import _same

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
Step = tuple[str, Callable[[Path], object] | None]


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    placememo.forget()
    yield
    placememo.forget()


@pytest.fixture
def patched(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The placement keys `relaid` patched (instead of a full layout), in order."""
    calls: list[str] = []
    real = layoutdiff.relaid

    def counting(plan: Any, *args: Any) -> Any:
        found = real(plan, *args)
        if found is not None:
            calls.append(plan.key)
        return found

    monkeypatch.setattr("reconciler.assemble.relaid", counting)
    return calls


def _steps(tmp: Path) -> tuple[Any, list[Step]]:
    fleet = build_fleet(FleetSize(24, 14, 60, 8), seed=3)
    write_fleet(fleet, tmp)
    edits = dict(scenarios(fleet))

    def edit(name: str, k: int) -> Callable[[Path], object] | None:
        found = edits.get(name)
        return None if found is None else (lambda clone: found(clone, k))

    def tier(value: str) -> Callable[[Path], object]:
        """Relabel the first dev cluster's tier (the Deployment overrides read it)."""
        cluster = next(c for c in fleet.clusters if c.labels["env"] == "dev")

        def change(obj: dict[str, Any]) -> None:
            obj["metadata"]["labels"]["tier"] = value

        return lambda clone: _edit_yaml(clone / f"clusters/{cluster.name}.yaml", change)

    steps: list[Step] = [
        ("add a cluster", edit("add a cluster", 1)),
        ("add another", edit("add a cluster", 2)),
        ("relabel", edit("relabel one cluster", 0)),
        ("relabel to bronze", tier("bronze")),
        ("remove the first", edit("remove a cluster", 1)),
        ("change a placement", edit("change one placement", 0)),
        ("edit a resource", edit("edit one resource", 0)),
        ("rollout wave", None),
        ("relabel back", edit("relabel one cluster", 1)),
        ("relabel to gold", tier("gold")),
        ("rollout wave again", None),
        ("edit fleet-wide", edit("edit fleet-wide resource", 0)),
        ("add during rollout", edit("add a cluster", 3)),
        ("remove the second", edit("remove a cluster", 2)),
        ("placement back", edit("change one placement", 1)),
        ("settle", None),
    ]
    return fleet, steps


def _chain(tmp: Path, forget: bool, steps: list[Step]) -> list[PassResult]:
    """Every step's pass, each from the last one's output (`forget`: no memo survives a pass)."""
    result = reconcile(load_fleet(WorkdirTree(tmp)), State(), None, NOW)
    out = [result]
    for k, (_, step) in enumerate(steps):
        if step is not None:
            step(tmp)
        if forget:
            placememo.forget()
        prior = read_state(result.files)[0]
        later = NOW + timedelta(minutes=k + 1)
        result = reconcile(load_fleet(WorkdirTree(tmp)), prior, None, later)
        out.append(result)
    return out


def test_patched_layouts_equal_fresh_ones_across_a_chain(
    tmp_path: Path, patched: list[str]
) -> None:
    _, steps = _steps(tmp_path / "a")
    remembered = _chain(tmp_path / "a", False, steps)
    assert patched, "no placement was patched"
    _, again = _steps(tmp_path / "b")
    fresh = _chain(tmp_path / "b", True, again)
    for (name, _), mine, theirs in zip([("start", None), *steps], remembered, fresh, strict=True):
        try:
            _same(mine, theirs)
        except AssertionError as exc:
            raise AssertionError(f"step {name!r}: {exc}") from exc


def test_adding_a_cluster_patches_the_placements_that_bind_it(
    tmp_path: Path, patched: list[str]
) -> None:
    _, steps = _steps(tmp_path)
    first = reconcile(load_fleet(WorkdirTree(tmp_path)), State(), None, NOW)
    settled = reconcile(load_fleet(WorkdirTree(tmp_path)), read_state(first.files)[0], None, NOW)
    add = steps[0][1]
    assert add is not None
    add(tmp_path)
    patched.clear()
    added = reconcile(load_fleet(WorkdirTree(tmp_path)), read_state(settled.files)[0], None, NOW)
    bind = [k for k, p in added.plans.items() if "bench-added-1" in p.bound_clusters()]
    assert bind and sorted(patched) == sorted(bind)


def _patch_cases() -> list[tuple[str, dict[str, bytes | None]]]:
    return [
        ("change one", {"u/a": b"A2"}),
        ("drop one", {"u/b": None}),
        ("add one", {"u/c": b"C"}),
        ("equal bytes", {"u/a": b"A"}),
        ("drop and add", {"u/a": None, "u/d": b"D"}),
    ]


@pytest.mark.parametrize(("name", "changes"), _patch_cases(), ids=[c[0] for c in _patch_cases()])
def test_a_patched_unit_composes_as_a_fresh_one(name: str, changes: dict[str, Any]) -> None:
    base = {"u/a": b"A", "u/b": b"B"}
    other = {"v/x": b"X"}
    first = compose({"u": base, "v": other})
    keep_base(first, {"u": base, "v": other})
    unit = patched_unit(base, changes)
    assert base == {"u/a": b"A", "u/b": b"B"}  # never changed
    expect = {**base, **{p: d for p, d in changes.items() if d is not None}}
    expect = {p: d for p, d in expect.items() if changes.get(p, b"") is not None}
    assert unit == expect
    got = compose({"u": unit, "v": other})
    assert got.files == {**expect, **other}
    assert got.since is not None
    differ = {p for p in {*base, *expect} if base.get(p) != expect.get(p)}
    assert got.since[1] == differ


def test_a_patched_unit_compared_with_another_base_is_compared_whole() -> None:
    base = {"u/a": b"A", "u/b": b"B"}
    first = compose({"u": base})
    keep_base(first, {"u": base})
    unit = patched_unit({"u/a": b"A", "u/b": b"B2"}, {"u/a": b"A3"})  # from another dict
    got = compose({"u": unit})
    assert got.files == {"u/a": b"A3", "u/b": b"B2"}
    assert got.since is not None and got.since[1] == {"u/a", "u/b"}


def _manifest(name: str, data: bytes) -> Manifest:
    ident = {"apiVersion": "v1", "kind": "ConfigMap", "name": name}
    return Manifest(f"configmap_{name}.yaml", data, ident, "sha256:" + name)


DEFAULT = (_manifest("a", b"a: 1\n"), _manifest("b", b"b: 1\n"))
CLUSTERS = ("c1", "c2", "c3", "c4")


def _plan() -> PlacementPlan:
    bindings = tuple(Binding(c, "Bound", 0, 3, content="d") for c in CLUSTERS)
    state = PlacementState(
        key="web",
        policy_snapshots=(Snapshot(0, "p0"),),
        resource_snapshots=(Snapshot(3, "h3"),),
        bindings=bindings,
    )
    plan = PlacementPlan(
        key="web",
        state=state,
        scheduled=Cond("Scheduled", "True", "Scheduled", "ok"),
        manifests=DEFAULT,
        name="web",
        apply_strategy={"type": "ClientSideApply"},
        desired=dict.fromkeys(CLUSTERS, "d"),
    )
    plan.per_cluster["c2"] = ClusterManifests(("o-0",), (), (_manifest("a", b"a: 2\n"),))
    plan.cluster_apply_strategies["c3"] = {"type": "ServerSideApply"}
    return plan


def _bind(plan: PlacementPlan, cluster: str) -> None:
    plan.state = replace(
        plan.state, bindings=(*plan.state.bindings, Binding(cluster, "Bound", 0, 3, content="d"))
    )
    plan.desired[cluster] = "d"


def _unbind(plan: PlacementPlan, cluster: str) -> None:
    plan.state = replace(
        plan.state, bindings=tuple(b for b in plan.state.bindings if b.cluster != cluster)
    )
    del plan.desired[cluster]


CHANGES: list[tuple[str, Callable[[PlacementPlan], object]]] = [
    ("cluster added", lambda p: _bind(p, "c5")),
    ("cluster removed", lambda p: _unbind(p, "c1")),
    ("overridden cluster removed", lambda p: _unbind(p, "c2")),
    (
        "override changed",
        lambda p: p.per_cluster.update(
            c1=ClusterManifests(("o-1",), (), (_manifest("a", b"a: 3\n"), DEFAULT[1]))
        ),
    ),
    ("override gone", lambda p: p.per_cluster.pop("c2")),
    ("strategy changed", lambda p: p.cluster_apply_strategies.update(c3={"type": "ReportDiff"})),
    ("strategy gone", lambda p: p.cluster_apply_strategies.pop("c3")),
    ("strategy given", lambda p: p.cluster_apply_strategies.update(c4={"type": "ReportDiff"})),
    ("default manifests", lambda p: setattr(p, "manifests", (DEFAULT[0],))),
    ("apply strategy", lambda p: setattr(p, "apply_strategy", {"type": "ServerSideApply"})),
    ("name", lambda p: setattr(p, "name", "other")),
    (
        "new snapshot",
        lambda p: setattr(
            p, "state", replace(p.state, resource_snapshots=(Snapshot(3, "h3"), Snapshot(4, "h4")))
        ),
    ),
    ("content moved on", lambda p: p.desired.update(c4="e")),
]

LAID_AFRESH = {"default manifests", "apply strategy", "name", "new snapshot"}
"""Changes every cluster's layout reads: the placement is laid out in full."""


def _assembled(plan: PlacementPlan) -> dict[str, bytes]:
    views: Any = dict.fromkeys((*CLUSTERS, "c5"))
    return dict(assemble_clusters({"web": plan}, {}, State(), views, {}).files)


@pytest.mark.parametrize(("name", "change"), CHANGES, ids=[c[0] for c in CHANGES])
def test_a_patched_placement_equals_a_fresh_layout(
    name: str, change: Callable[[PlacementPlan], object], patched: list[str]
) -> None:
    plan = _plan()
    _assembled(plan)
    change(plan)
    patched.clear()
    again = _assembled(plan)
    assert patched == ([] if name in LAID_AFRESH else ["web"])
    forget_stages()
    assert again == _assembled(plan)


def test_an_unchanged_placement_is_patched_on_its_changed_cluster_only(
    patched: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = _plan()
    _assembled(plan)
    made: list[str] = []

    def spy(*args: Any) -> Any:
        made.append(args[1])
        return clean_layout(*args)

    monkeypatch.setattr("reconciler.layoutdiff.clean_layout", spy)
    _bind(plan, "c5")
    _assembled(plan)
    assert patched == ["web"] and made == ["c5"]

"""The hub's own last output read from memory (`reconciler.ownprior`): a writer's values are
given only for a tree holding the very bytes objects it wrote; passes whose prior is the last
pass's own tree (states, `state/prior/` records and cluster status conditions taken from
memory, cluster status files made only for clusters that changed) write the same tree as a
fresh process reading a copy of that prior from its bytes."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.api.output import cluster_status_path, placement_state_path
from gitfleet.repo.workdir import WorkdirTree
from reconciler import (
    clusterstatus,
    placememo,
    priorindex,
    priorparse,
    priorstate,
    state,
    statusdocs,
)
from reconciler.clusterstatus import cluster_status_files
from reconciler.ownprior import OwnFiles
from reconciler.pass_ import reconcile
from reconciler.priorshards import IndexRecord, PlacementPrior
from reconciler.schedule.clusters import ClusterView
from reconciler.stagememo import forget_stages
from reconciler.state import State, read_state
from renderers import load_fleet
from tests.unit.schedule.fleet import cluster

NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)


def _cold() -> None:
    """A fresh process: nothing remembered, derived or emitted."""
    forget_stages()
    placememo.forget()
    priorparse._derived.clear()
    priorstate._blocks.clear()
    state._emitted.clear()


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    _cold()
    yield
    _cold()


def _copy(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """The same tree made of other bytes objects (as read back from Git)."""
    return {p: bytes(bytearray(d)) for p, d in files.items()}


A, B = b"a: 1\n", b"b: 2\n"
WROTE = {"x/a.yaml": A, "x/b.yaml": B}


@pytest.mark.parametrize(
    ("tree", "known"),
    [
        (WROTE, True),
        ({**WROTE, "x/c.yaml": b"more"}, True),  # other paths are the reader's business
        (_copy(WROTE), False),  # equal bytes, other objects: read them
        ({**WROTE, "x/b.yaml": bytes(bytearray(B))}, False),
        ({"x/a.yaml": A}, False),  # one missing
        ({}, False),
    ],
)
def test_values_only_for_the_very_files_written(tree: dict[str, bytes], known: bool) -> None:
    own: OwnFiles[int] = OwnFiles()
    assert own.values(WROTE) is None  # nothing written yet
    own.wrote(WROTE, {"a": 1})
    assert (own.values(tree) == {"a": 1}) is known
    assert (own.values(tree) == {"a": 1}) is known  # the verdict kept for this tree object
    own.wrote({"x/a.yaml": bytes(bytearray(A))}, {"a": 2})  # the next pass wrote another
    assert own.values(tree) is None


def _fleet(tmp: Path, clusters: int) -> Path:
    write_fleet(build_fleet(FleetSize(clusters, 6, 30, 4), seed=5), tmp)
    return tmp


def _edit_resource(fleet: Path, step: int) -> None:
    path = next(p for p in sorted((fleet / "resources").rglob("*.yaml")) if "configmap" in p.name)
    path.write_text(path.read_text().replace("\ndata:\n", f"\ndata:\n  step{step}: 'x'\n", 1))


def _add_cluster(fleet: Path, step: int) -> None:
    first = sorted((fleet / "clusters").glob("*.yaml"))[0]
    text = first.read_text().replace(first.stem, f"added-{step}")
    (fleet / "clusters" / f"added-{step}.yaml").write_text(text)


def _remove_cluster(fleet: Path, step: int) -> None:
    (fleet / "clusters" / f"added-{step - 1}.yaml").unlink()


def _nothing(_fleet: Path, _step: int) -> None:
    pass


EDITS: list[Callable[[Path, int], None]] = [
    _edit_resource,
    _nothing,
    _add_cluster,
    _remove_cluster,
    _edit_resource,
    _nothing,
]


@pytest.mark.parametrize("clusters", [9, 130])  # 130: states and records in shards
def test_passes_on_their_own_prior_equal_fresh_passes(
    tmp_path: Path, clusters: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet = _fleet(tmp_path, clusters)
    snapshots, outputs = [], []
    result = reconcile(load_fleet(WorkdirTree(fleet)), State(), None, NOW)
    for step, edit in enumerate(EDITS):
        edit(fleet, step)
        snapshots.append(load_fleet(WorkdirTree(fleet)))
        with monkeypatch.context() as patched:  # the own tree: no state file is read
            patched.setattr(state, "read_placement_state", _refused)
            prior, problems = read_state(result.files)
            assert problems == [] and prior.placements == result.state.placements
        assert state.own_states(result.files) is not None
        assert clusterstatus._OWN.values(result.files) is not None
        outputs.append(result.files)
        with monkeypatch.context() as patched:  # records and conditions from memory
            for module, name in READERS:
                patched.setattr(module, name, _refused)
            result = reconcile(snapshots[-1], prior, None, NOW + timedelta(minutes=step))
    outputs.append(result.files)
    for step, snapshot in enumerate(snapshots):
        _cold()
        prior, problems = read_state(_copy(outputs[step]))
        assert problems == [] and state.own_states(prior.output) is None
        fresh = reconcile(snapshot, prior, None, NOW + timedelta(minutes=step))
        assert dict(fresh.files) == dict(outputs[step + 1]), EDITS[step].__name__


def test_an_index_from_the_own_tree_looks_at_changed_placements_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet = _fleet(tmp_path, 9)
    result = reconcile(load_fleet(WorkdirTree(fleet)), State(), None, NOW)
    looked: list[str] = []
    real = priorindex._placement_rows
    monkeypatch.setattr(
        priorindex,
        "_placement_rows",
        lambda output, ps, prior: looked.append(ps.key) or real(output, ps, prior),
    )
    for step in range(4):
        _edit_resource(fleet, step)
        prior, _ = read_state(result.files)
        looked.clear()
        index = priorindex.read_prior_index(result.files)
        assert index == priorindex.parsed_prior_index(_copy(result.files))
        if step:  # the last index made from the own tree is patched
            assert 0 < len(looked) < len(prior.placements)
        result = reconcile(load_fleet(WorkdirTree(fleet)), prior, None, NOW)


def _record(content: str) -> PlacementPrior:
    entry = {"cluster": "a", "name": "web", "contentHash": content}
    return PlacementPrior("web", IndexRecord({"name": "web"}, (), (entry,)), None)


def test_an_index_from_the_own_tree_follows_a_record_that_changed_alone() -> None:
    web, one, two = state.PlacementState("web"), _record("h1"), _record("h2")
    rows = {"web": priorindex._placement_rows({}, web, one)}
    priorindex._OWN_INDEX.put("", (), ({"web": web}, {"web": one}, priorindex._full_merge(rows)))
    own = {placement_state_path("web"): web}
    index = priorindex._own_index({}, own, {"web": two})  # the same state, another record
    assert isinstance(index, dict) and index["a"]["web"]["contentHash"] == "h2"
    assert priorindex._own_index({}, own, {}) is priorindex._UNKNOWN  # a state without one


def _refused(*_args: object) -> None:
    raise AssertionError("read a file the last pass wrote")


READERS = [
    (priorstate, "joined_prior"),
    (priorindex, "parsed_prior_index"),
    (priorindex, "read_placement_state"),
    (statusdocs, "status_conditions"),
    (statusdocs, "derive_own"),  # a cluster status file, by blob id
]
"""What reads the last pass's records and status files back from their bytes."""


def test_a_tree_with_another_state_file_is_read() -> None:
    result_files = state.state_files(State({"web": state.PlacementState("web", generation=2)}))
    tree = dict(result_files)
    assert read_state(tree)[0].placements.keys() == {"web"}
    extra = state.state_files(State({"api": state.PlacementState("api", generation=1)}))
    state.state_files(State({"web": state.PlacementState("web", generation=2)}))  # last wrote
    with_extra = {**tree, placement_state_path("api"): extra[placement_state_path("api")]}
    assert state.own_states(with_extra) is None  # a state file the last pass did not write
    assert read_state(with_extra)[0].placements.keys() == {"web", "api"}


Step = tuple[dict[str, str | None], bool, int]
"""Cluster -> eligibility verdict (None: eligible), has a status source, hours after T0. A file
whose verdict was timed by its pass's clock is made again the next pass (then it settles)."""
CLUSTER_STEPS: list[Step] = [
    ({"c1": None, "c2": None, "c3": None}, True, 0),
    ({"c1": None, "c2": None, "c3": None}, True, 1),
    ({"c1": None, "c2": "no heartbeat", "c3": None}, True, 2),  # timed now: made again
    ({"c1": None, "c2": "no heartbeat", "c3": None}, True, 3),
    ({"c1": None, "c2": "no heartbeat", "c3": None}, True, 4),
    ({"c1": None, "c2": "no heartbeat", "c3": None, "c4": None}, True, 5),
    ({"c2": None, "c3": None, "c4": None}, True, 6),
    ({"c2": None, "c3": None, "c4": None}, False, 7),
    ({"c2": None, "c3": None, "c4": None}, False, 8),
    ({"c2": None, "c3": None, "c4": None}, False, 9),
]


MEMBERS = {n: cluster(n).cluster for n in ("c1", "c2", "c3", "c4")}
"""The same objects pass after pass, as a hub's loader keeps unchanged clusters."""


def _cluster_files(step: Step, prior: Mapping[str, bytes]) -> dict[str, bytes]:
    reasons, has_status, hours = step
    views = {n: ClusterView(n, MEMBERS[n], reason) for n, reason in reasons.items()}
    return cluster_status_files(
        views, has_status, "Strict", State(output=prior), NOW + timedelta(hours=hours)
    )


def test_cluster_status_files_from_their_own_prior_equal_fresh_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[str] = []
    real = clusterstatus._status_file

    def counting(view: ClusterView, *rest: object) -> tuple[bytes, object]:
        made.append(view.name)
        return real(view, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(clusterstatus, "_status_file", counting)
    outputs: list[dict[str, bytes]] = [{}]
    looked: list[list[str]] = []
    for step in CLUSTER_STEPS:
        made.clear()
        outputs.append(_cluster_files(step, outputs[-1]))
        looked.append(sorted(made))
    all3 = ["c2", "c3", "c4"]
    assert looked[1:] == [
        ["c1", "c2", "c3"],
        ["c2"],
        ["c2"],
        [],
        ["c4"],
        ["c2", "c4"],
        all3,
        all3,
        [],
    ]
    other = _cluster_files(CLUSTER_STEPS[-1], _copy(outputs[3]))  # not its own prior: all read
    forget_stages()
    assert other == _cluster_files(CLUSTER_STEPS[-1], _copy(outputs[3])) != outputs[-1]
    for i, step in enumerate(CLUSTER_STEPS):
        forget_stages()
        prior = _copy(outputs[i])
        assert _cluster_files(step, prior) == outputs[i + 1], i
    c2 = cluster_status_path("c2")
    assert b"T14:00:00Z" in outputs[3][c2] and outputs[4][c2] == outputs[3][c2]  # kept its time


def _placement(key: str, count: int, generation: int = 1) -> state.PlacementState:
    bindings = tuple(
        state.Binding(f"member-{i:04d}", "Bound", 1, generation, content=f"sha256:{i % 3}")
        for i in range(count)
    )
    return state.PlacementState(key, generation=generation, bindings=bindings)


SNAP1, SNAP2 = state.Snapshot(1, "h1"), state.Snapshot(2, "h2", "c0ffee")
STATES: list[State] = [
    State({"web": _placement("web", 150)}),
    State({"web": _placement("web", 150)}),  # equal, other objects
    State({"web": _placement("web", 50)}),  # its shards go
    State({"web": _placement("web", 250)}, overrides={"o": (SNAP1,)}),
    State({"web": _placement("web", 250, 2)}, overrides={"o": (SNAP1,)}),
    State({"api": _placement("api", 3), "web": _placement("web", 250, 2)}, overrides={"o": ()}),
    State({"api": _placement("api", 4)}, overrides={"o": (SNAP1, SNAP2)}),
    State({"api": _placement("api", 4)}),
]


def test_state_files_one_after_another_equal_fresh_ones() -> None:
    written = []
    for st in STATES:
        written.append(state.state_files(st))
    for st, files in zip(STATES, written, strict=True):
        _cold()
        assert state.state_files(st) == files
        assert read_state(_copy(files))[0].placements == st.placements

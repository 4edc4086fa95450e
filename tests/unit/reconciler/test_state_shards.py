"""A placement's bindings in shard files (`reconciler.stateshards`): one state file up to 100
bindings, shards above; both shapes read back; one binding added or removed rewrites one shard;
a missing or unreadable shard is a problem naming it; passes equal a fresh pass."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from benchmarks.hub_scenarios import _add_cluster, _remove_cluster
from gitfleet.api.output import binding_shard_path, placement_state_path
from gitfleet.api.shards import shard_count, shard_of
from gitfleet.load.yamlio import dump_yaml
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo, priorparse, state, stateshards
from reconciler.pass_ import reconcile
from reconciler.state import (
    Binding,
    BindingDecision,
    PlacementState,
    Snapshot,
    State,
    read_state,
    state_files,
)
from renderers import load_fleet

NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)
NAMES = [f"member-{i:04d}" for i in range(1200)]


def _forget() -> None:
    """Nothing remembered: the next write emits every file, the next read parses it."""
    placememo.forget()
    priorparse._derived.clear()
    state._emitted.clear()


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    _forget()
    yield
    _forget()


def _binding(rng: random.Random, cluster: str) -> Binding:
    """Bindings that group (the same but for the name) or not (their own content)."""
    kind = rng.randrange(3)
    content = f"sha256:{(kind == 2) * rng.randrange(1 << 30):064d}"
    decision = BindingDecision(f'picked "{cluster}"' if kind else "picked", None, None)
    return Binding(cluster, "Bound", 1, 2, decision=decision, content=content)


def _placement(bindings: dict[str, Binding], key: str = "web") -> PlacementState:
    return PlacementState(
        key,
        generation=3,
        spec_hash="abc",
        policy_snapshots=(Snapshot(1, "p"),),
        resource_snapshots=(Snapshot(2, "r", "c0ffee"),),
        bindings=tuple(bindings[c] for c in sorted(bindings)),
        selected=(("/ConfigMap/x/y", "a.yaml"),),
        deleting=(Binding("gone-1", "Unscheduled", 1, 2, removing=3),),
    )


def _state(count: int, seed: int = 0, key: str = "web") -> tuple[State, dict[str, Binding]]:
    rng = random.Random(seed)
    bindings = {c: _binding(rng, c) for c in NAMES[:count]}
    return State(placements={key: _placement(bindings, key)}), bindings


def _files(st: State) -> dict[str, bytes]:
    return {p: d for p, d in state_files(st).items() if p != state.OVERRIDES_FILE}


@pytest.mark.parametrize(
    ("count", "shards"), [(0, 1), (1, 1), (99, 1), (100, 1), (101, 4), (250, 8), (1000, 32)]
)
def test_one_file_up_to_100_bindings_and_every_shard_above(count: int, shards: int) -> None:
    st, _ = _state(count)
    files = _files(st)
    head = yaml.safe_load(files[placement_state_path("web")])
    shard_paths = sorted(p for p in files if p.startswith("state/bindings/"))
    assert shard_count(count) == shards
    if shards == 1:
        assert shard_paths == [] and "bindingShards" not in head and "bindings" in head
        assert len(files) == 1
    else:
        assert head["bindingShards"] == shards and "bindings" not in head
        assert head["deleting"][0]["cluster"] == "gone-1"
        assert shard_paths == sorted(binding_shard_path("web", i) for i in range(shards))
    for i, path in enumerate(sorted(shard_paths, key=lambda p: int(p.rsplit("/", 1)[1][:-5]))):
        doc = yaml.safe_load(files[path])
        assert (doc["kind"], doc["metadata"]["name"], doc["shard"]) == (
            "PlacementBindings",
            "web",
            i,
        )
        names = [b["cluster"] for b in doc["bindings"]]
        names += [n for g in doc.get("bindingGroups", []) for n in g["clusters"]]
        assert names and all(shard_of(n, shards) == i for n in names)


@pytest.mark.parametrize("count", [0, 7, 100, 101, 333, 1000])
def test_written_then_read_gives_the_same_state_remembered_or_parsed(count: int) -> None:
    st, _ = _state(count, seed=count)
    files = _files(st)
    remembered, problems = read_state(files)
    assert problems == [] and remembered.placements == st.placements
    assert remembered.placements["web"] is st.placements["web"]  # not parsed: the one written
    _forget()
    parsed, problems = read_state(files)
    assert problems == [] and parsed.placements == st.placements


def test_an_unsharded_state_file_with_many_bindings_is_read() -> None:
    """A state file the previous version wrote: every binding in it."""
    st, _ = _state(400)
    ps = st.placements["web"]
    old = {placement_state_path("web"): dump_yaml(state.placement_state_doc(ps)).encode()}
    read, problems = read_state(old)
    assert problems == [] and read.placements["web"] == ps
    assert sorted(_files(read)) != [placement_state_path("web")]  # written sharded again


@pytest.mark.parametrize("seed", range(8))
def test_one_binding_added_changed_or_removed_rewrites_one_shard(seed: int) -> None:
    rng = random.Random(seed)
    st, bindings = _state(600, seed)
    before = _files(st)
    cluster = rng.choice(NAMES[:700])
    if cluster in bindings and rng.random() < 0.5:
        del bindings[cluster]
    else:
        bindings[cluster] = replace(_binding(rng, cluster), resource_index=9)
    after = _files(State(placements={"web": _placement(bindings)}))
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    assert changed == {binding_shard_path("web", shard_of(cluster, 16))}
    assert after[placement_state_path("web")] is before[placement_state_path("web")]


@pytest.mark.parametrize(
    ("fault", "says"),
    [
        ("missing", "binding shard 5 of 16 is missing"),
        ("garbage", "unreadable binding shard (YAMLError)"),
        ("kind", "unreadable binding shard (ValueError)"),
        ("a content short", "unreadable binding shard (ValueError)"),
        ("other shard", "holds shard 6 of 'web', not 5 of 'web'"),
        ("other placement", "holds shard 5 of 'api', not 5 of 'web'"),
    ],
)
def test_a_missing_or_unreadable_shard_is_a_problem_naming_it(fault: str, says: str) -> None:
    st, _ = _state(700)
    files = _files(st)
    files.update(_files(_state(700, key="api")[0]))
    path = binding_shard_path("web", 5)
    if fault == "missing":
        del files[path]
    elif fault == "garbage":
        files[path] = b"bindings: [\n"
    elif fault == "kind":
        files[path] = files[path].replace(b"kind: PlacementBindings", b"kind: Nope")
    elif fault == "a content short":  # a group's `contents` one value short of its clusters
        head, listed, tail = files[path].partition(b"  contents:\n")
        assert listed
        files[path] = head + listed + tail.split(b"\n", 1)[1]
    elif fault == "other shard":
        files[path] = files[binding_shard_path("web", 6)]
    else:
        files[path] = files[binding_shard_path("api", 5)]
    _forget()
    read, problems = read_state(files)
    assert problems == [f"{path}: {says}: the state of state/placements/web.yaml ignored"]
    assert set(read.placements) == {"api"}


def test_an_absurd_shard_count_is_a_problem() -> None:
    st, _ = _state(300)
    files = _files(st)
    head = placement_state_path("web")
    files[head] = files[head].replace(b"bindingShards: 8", b"bindingShards: 3000000")
    read, problems = read_state(files)
    assert read.placements == {} and len(problems) == 1 and "bindingShards: 3000000" in problems[0]


def test_a_state_file_with_bindings_and_shards_is_unreadable() -> None:
    st, _ = _state(300)
    files = _files(st)
    head = placement_state_path("web")
    files[head] = files[head].replace(b"bindingShards: 8", b"bindingShards: 8\nbindings: []")
    read, problems = read_state(files)
    assert read.placements == {} and problems == [
        f"{head}: unreadable state file ignored (ValueError)"
    ]


@pytest.mark.parametrize("seed", range(4))
def test_written_pass_after_pass_equals_written_fresh(seed: int) -> None:
    """Adds, removes and changes (crossing 100 bindings and a power of two of shards) written
    from last pass's memos give the bytes a fresh write gives, and read back as the state."""
    rng = random.Random(seed)
    bindings = {c: _binding(rng, c) for c in rng.sample(NAMES[:300], 90)}
    for step in range(40):
        for _ in range(rng.randrange(1, 12)):
            cluster = rng.choice(NAMES[:300])
            if cluster in bindings and rng.random() < 0.3:
                del bindings[cluster]
            else:
                bindings[cluster] = _binding(rng, cluster)
        st = State(placements={"web": _placement(dict(bindings))})
        files = _files(st)
        assert read_state(files) == (State(st.placements, files), []), step
        kept = (priorparse._derived.copy(), dict(state._emitted))
        _forget()
        assert _files(st) == files, step
        priorparse._derived.update(kept[0])
        state._emitted.update(kept[1])


def test_a_pass_does_not_parse_the_shards_it_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    st, bindings = _state(500)
    _files(st)
    bindings[NAMES[700]] = _binding(random.Random(1), NAMES[700])
    files = _files(State(placements={"web": _placement(bindings)}))

    def refuse(_doc: object) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(stateshards, "parse_shard", refuse)
    monkeypatch.setattr(state, "parse_state_head", refuse)
    read, problems = read_state(files)
    assert problems == [] and read.placements["web"].bindings == tuple(
        bindings[c] for c in sorted(bindings)
    )


def test_passes_adding_and_removing_clusters_equal_a_fresh_pass(tmp_path: Path) -> None:
    """A fleet whose placements bind more than 100 clusters: passes that add and remove a
    cluster write the output a fresh pass (nothing remembered, the prior output read) writes."""
    write_fleet(build_fleet(FleetSize(230, 3, 20, 2), seed=5), tmp_path)
    first = reconcile(load_fleet(WorkdirTree(tmp_path)), State(), None, NOW)
    assert any(p.startswith("state/bindings/") for p in first.files)
    prior_files, prior = first.files, first.state
    for step in (_add_cluster, _remove_cluster):
        step(tmp_path, 1)
        result = reconcile(load_fleet(WorkdirTree(tmp_path)), prior, None, NOW)
        _forget()
        fresh_prior, problems = read_state(prior_files)
        assert problems == []
        fresh = reconcile(load_fleet(WorkdirTree(tmp_path)), fresh_prior, None, NOW)
        assert dict(result.files) == dict(fresh.files)
        shards = {p for p in result.files if p.startswith("state/bindings/")}
        changed = {p for p in shards if prior_files.get(p) != result.files[p]}
        heads = {p.rsplit("/", 2)[1] for p in shards}
        assert 0 < len(changed) <= len(heads) < len(shards) // 4
        prior_files, prior = result.files, result.state


def test_a_shard_with_other_bytes_is_read_again_not_taken_from_the_last_read() -> None:
    """The reader skips shards whose blob ids it read last time; a shard replaced under the
    same state file (another binding content, the same count) must be read again."""
    st, bindings = _state(333, seed=5)
    files = _files(st)
    _forget()
    first, _ = read_state(files)
    cluster = NAMES[7]
    changed = dict(bindings)
    changed[cluster] = replace(bindings[cluster], content=f"sha256:{'9' * 64}")
    other = _files(State(placements={"web": _placement(changed)}))
    shard = binding_shard_path("web", shard_of(cluster, shard_count(333)))
    assert other[placement_state_path("web")] == files[placement_state_path("web")]
    mixed = {**files, shard: other[shard]}
    _forget()
    read_state(files)  # the reader's last read: every shard of `files`
    again, problems = read_state(mixed)
    assert problems == [] and again.placements["web"] == _placement(changed)
    assert first.placements["web"] == st.placements["web"]


@pytest.mark.parametrize(
    ("order", "sharded"),
    [("sorted", True), ("repeated", False), ("swapped", False), ("reversed", False)],
)
def test_only_bindings_one_a_cluster_in_cluster_order_are_sharded(
    order: str, sharded: bool
) -> None:
    _, by_cluster = _state(150)
    bindings = [by_cluster[c] for c in sorted(by_cluster)]
    if order == "repeated":
        bindings[70] = replace(bindings[70], cluster=bindings[69].cluster)
    elif order == "swapped":
        bindings[10], bindings[11] = bindings[11], bindings[10]
    elif order == "reversed":
        bindings.reverse()
    assert (stateshards.bindings_shards(tuple(bindings)) > 1) is sharded
    ps = replace(_placement(by_cluster), bindings=tuple(bindings))
    files = _files(State(placements={"web": ps}))
    assert (len(files) > 1) is sharded
    assert read_state(files)[0].placements["web"].bindings == tuple(bindings)

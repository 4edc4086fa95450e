"""PlacementDecision slices by stable hash shards (issue 18): up to 100 clusters one slice as
before; more, one slice a shard, so one cluster joining or leaving changes exactly one slice file
(until the shard count crosses a power of two); a shard beyond 100 clusters spills into indexes
`count * k + i`; the revision is per slice. The pass's kept slices (`publish`) written after an
add or a removal equal a fresh pass's, and only the changed shard is written again."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.api.shards import shard_count, shard_of
from gitfleet.load.model import FleetSnapshot
from gitfleet.repo.workdir import WorkdirTree
from reconciler import decisions, placememo, publish
from reconciler.decisions import decision_documents
from reconciler.output import yaml_bytes
from reconciler.pass_ import reconcile
from reconciler.placement import PlacementPlan
from reconciler.schedule.outcome import Decision
from reconciler.stagememo import forget_stages
from reconciler.state import Binding, PlacementState, State, read_state
from reconciler.status import Cond
from renderers import load_fleet

NOW = datetime(2026, 11, 26, 10, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    placememo.forget()
    forget_stages()
    yield
    placememo.forget()
    forget_stages()


def _names(n: int, prefix: str = "c") -> list[str]:
    return [f"{prefix}-{i:04d}" for i in range(n)]


def _files(clusters: list[str], key: str = "web") -> dict[str, bytes]:
    reasons = {c: f"picked {c[-1]}" for c in clusters}
    docs = decision_documents(key, key, "", clusters, reasons)
    return {path: yaml_bytes(doc) for path, doc in docs}


def _differ(old: dict[str, bytes], new: dict[str, bytes]) -> set[str]:
    """Paths added, removed or with other bytes."""
    return {p for p in old.keys() | new.keys() if old.get(p) != new.get(p)}


def _listed(data: bytes) -> list[str]:
    return [e["clusterProfileRef"]["name"] for e in yaml.safe_load(data)["decisions"]]


EDITS = [  # (clusters before, clusters after, how many slice files differ)
    ("one slice: add", _names(40), [*_names(40), "new"], 1),
    ("one slice: remove", _names(40), _names(40)[1:], 1),
    ("one slice: the last one leaves", ["a"], [], 1),
    ("4 shards: add first", _names(150), ["a-new", *_names(150)], 1),
    ("4 shards: add last", _names(150), [*_names(150), "zz-new"], 1),
    ("4 shards: remove", _names(150), _names(150)[:7] + _names(150)[8:], 1),
    ("32 shards: add", _names(1000), [*_names(1000), "m-new"], 1),
    ("32 shards: remove", _names(1000), _names(1000)[:500] + _names(1000)[501:], 1),
    ("32 shards: remove first", _names(1000), _names(1000)[1:], 1),
]


@pytest.mark.parametrize(("case", "before", "after", "count"), EDITS, ids=[e[0] for e in EDITS])
def test_one_cluster_joining_or_leaving_changes_one_slice(
    case: str, before: list[str], after: list[str], count: int
) -> None:
    old, new = _files(before), _files(after)
    changed = _differ(old, new)
    assert len(changed) == count, case
    [cluster] = set(before) ^ set(after)
    path = f"decisions/web-{shard_of(cluster, shard_count(len(after)))}.yaml"
    assert changed == {path}, case
    assert (cluster in after) == (path in new and cluster in _listed(new[path])), case


@pytest.mark.parametrize(("before", "after"), [(100, 101), (101, 100), (400, 401), (401, 400)])
def test_a_shard_count_crossing_a_power_of_two_reslices_all(before: int, after: int) -> None:
    old, new = _files(_names(before)), _files(_names(after))
    assert shard_count(before) != shard_count(after)
    assert _differ(old, new) == old.keys() | new.keys()


def test_shard_i_is_slice_i_with_its_own_revision() -> None:
    clusters = _names(1000)
    files = _files(list(reversed(clusters)))
    assert len(files) == 32
    seen: list[str] = []
    for i in range(32):
        doc = yaml.safe_load(files[f"decisions/web-{i}.yaml"])
        listed = _listed(files[f"decisions/web-{i}.yaml"])
        assert listed == sorted(c for c in clusters if shard_of(c, 32) == i)
        meta = doc["metadata"]
        assert meta["name"] == f"web-{i}"
        assert meta["labels"]["multicluster.x-k8s.io/decision-index"] == str(i)
        want = hashlib.sha256("\n".join(listed).encode()).hexdigest()[:16]
        assert meta["annotations"]["gitfleet.io/decision-revision"] == want
        seen += listed
    assert sorted(seen) == clusters


def test_one_slice_keeps_the_whole_list_revision() -> None:
    clusters = _names(100)
    [(path, doc)] = decision_documents("web", "web", "", list(reversed(clusters)))
    assert path == "decisions/web-0.yaml"
    assert "multicluster.x-k8s.io/decision-index" not in doc["metadata"]["labels"]
    want = hashlib.sha256("\n".join(clusters).encode()).hexdigest()[:16]
    assert doc["metadata"]["annotations"]["gitfleet.io/decision-revision"] == want


def _crafted(n: int, shard: int, shards: int) -> list[str]:
    """`n` names that all hash to `shard` of `shards`."""
    out: list[str] = []
    i = 0
    while len(out) < n:
        name = f"x-{i:05d}"
        if shard_of(name, shards) == shard:
            out.append(name)
        i += 1
    return out


def test_a_shard_beyond_100_spills_past_the_shard_count() -> None:
    clusters = _crafted(230, 3, 8)  # 230 names: 8 shards, every one in shard 3
    files = _files(clusters)
    assert sorted(files) == [
        "decisions/web-11.yaml",
        "decisions/web-19.yaml",
        "decisions/web-3.yaml",
    ]
    assert _listed(files["decisions/web-3.yaml"]) == clusters[:100]
    assert _listed(files["decisions/web-11.yaml"]) == clusters[100:200]
    assert _listed(files["decisions/web-19.yaml"]) == clusters[200:]
    labels = yaml.safe_load(files["decisions/web-19.yaml"])["metadata"]["labels"]
    assert labels["multicluster.x-k8s.io/decision-index"] == "19"
    for data in files.values():  # each spilled slice has the revision of its own clusters
        meta = yaml.safe_load(data)["metadata"]
        want = hashlib.sha256("\n".join(_listed(data)).encode()).hexdigest()[:16]
        assert meta["annotations"]["gitfleet.io/decision-revision"] == want


@pytest.mark.parametrize(("n", "indexes"), [(100, [0]), (101, [0, 1]), (250, [0, 1, 2])])
def test_a_forced_single_shard_spills_in_sorted_chunks(
    monkeypatch: pytest.MonkeyPatch, n: int, indexes: list[int]
) -> None:
    monkeypatch.setattr(decisions, "SLICE_TARGET", 1000)
    clusters = _names(n)
    files = _files(list(reversed(clusters)))
    assert sorted(files) == [f"decisions/web-{i}.yaml" for i in indexes]
    for i in indexes:
        assert _listed(files[f"decisions/web-{i}.yaml"]) == clusters[100 * i : 100 * (i + 1)]
        labels = yaml.safe_load(files[f"decisions/web-{i}.yaml"])["metadata"]["labels"]
        assert labels.get("multicluster.x-k8s.io/decision-index") == (
            str(i) if len(indexes) > 1 else None
        )


@pytest.mark.parametrize("n", [0, 7, 150, 1000])
def test_slices_are_deterministic(n: int) -> None:
    clusters = _names(n)
    first = _files(clusters)
    shuffled = clusters[1::2] + clusters[::2] + clusters[:3]  # another order, some twice
    assert _files(shuffled) == first
    forget_stages()
    assert _files(list(reversed(clusters))) == first


def _plan(clusters: list[str], reasons: dict[str, str] | None = None) -> PlacementPlan:
    plan = PlacementPlan("web", PlacementState("web"), Cond("Scheduled", "True", "", ""))
    plan.name = "web"
    plan.state = PlacementState("web", bindings=tuple(Binding(c, "Bound", 0) for c in clusters))
    plan.decisions = tuple(Decision(c, True, (reasons or {}).get(c, "picked")) for c in clusters)
    return plan


def _fresh_files(plan: PlacementPlan) -> dict[str, bytes]:
    forget_stages()
    return publish.decision_files({"web": plan}, State())


STEPS = [  # (name, clusters after the step)
    ("added", [*_names(1000), "m-new"]),
    ("removed", _names(1000)[:300] + _names(1000)[301:]),
    ("added to shard 5", [*_names(1000), *_crafted(1, 5, 32)]),
    ("two added", [*_names(1000), "a-new", "z-new"]),
    ("one added, one removed", [*_names(1000)[1:], "a-new"]),
    ("as before", _names(1000)),
]


@pytest.mark.parametrize(("step", "after"), STEPS, ids=[s[0] for s in STEPS])
def test_a_pass_after_an_edit_writes_one_slice_and_equals_a_fresh_pass(
    monkeypatch: pytest.MonkeyPatch, step: str, after: list[str]
) -> None:
    old = publish.decision_files({"web": _plan(_names(1000))}, State())
    calls: list[int] = []
    real = publish.shard_documents

    def counting(*args: Any) -> Any:
        calls.append(args[4])
        return real(*args)

    monkeypatch.setattr(publish, "shard_documents", counting)
    warm = publish.decision_files({"web": _plan(after)}, State())
    shards = sorted({shard_of(c, 32) for c in set(_names(1000)) ^ set(after)})
    assert sorted(calls) == shards, step
    assert _differ(old, warm) == {f"decisions/web-{i}.yaml" for i in shards}, step
    calls.clear()
    assert warm == _fresh_files(_plan(after)), step
    assert len(calls) == 32


def test_a_pass_across_a_power_of_two_equals_a_fresh_pass() -> None:
    publish.decision_files({"web": _plan(_names(400))}, State())
    for n in (401, 400, 399, 401):
        warm = publish.decision_files({"web": _plan(_names(n))}, State())
        assert warm == _fresh_files(_plan(_names(n))), n  # the next pass follows this one


def test_a_crafted_spill_is_patched_like_a_fresh_pass() -> None:
    full, other = _crafted(110, 0, 4), _crafted(10, 1, 4)  # 4 shards: 0 spills into 4
    steps = [
        full[:101] + other,
        full[:102] + other,  # its spill grows
        full[1:102] + other,
        full[:100] + other,  # its spill goes: web-4 is removed
        full[:101] + other,
        full[:100],  # one shard: the slices are cut again
    ]
    publish.decision_files({"web": _plan(steps[0])}, State())
    for clusters in steps:
        warm = publish.decision_files({"web": _plan(clusters)}, State())
        assert warm == _fresh_files(_plan(clusters)), len(clusters)  # the next pass follows it
        assert ("decisions/web-4.yaml" in warm) == (len(set(clusters) & set(full)) > 100)


def test_a_held_placement_keeps_only_its_own_slices() -> None:
    output = {
        "decisions/web-0.yaml": b"a",
        "decisions/web-31.yaml": b"b",
        "decisions/web-api-0.yaml": b"c",
        "decisions/web-x.yaml": b"d",
        "decisions/web-1.yml": b"e",
    }
    prior = State(output=output)
    plan = _plan(["a"])
    plan.held = True
    assert publish.decision_files({"web": plan}, prior) == {
        "decisions/web-0.yaml": b"a",
        "decisions/web-31.yaml": b"b",
    }


def _copy_as(fleet: FleetSnapshot, source: str, name: str) -> FleetSnapshot:
    old = fleet.clusters[source]
    meta = old.metadata.model_copy(update={"name": name})
    clusters = {**fleet.clusters, name: old.model_copy(update={"metadata": meta})}
    return dataclasses.replace(fleet, clusters=clusters)


def _without(fleet: FleetSnapshot, name: str) -> FleetSnapshot:
    return dataclasses.replace(
        fleet, clusters={k: v for k, v in fleet.clusters.items() if k != name}
    )


def _decisions(files: dict[str, bytes]) -> dict[str, bytes]:
    return {p: b for p, b in files.items() if p.startswith("decisions/")}


def _members(files: dict[str, bytes]) -> dict[str, set[str]]:
    """Placement key -> the clusters its slices list."""
    out: dict[str, set[str]] = {}
    for path, data in _decisions(files).items():
        key = path.removeprefix("decisions/").rsplit("-", 1)[0]
        out.setdefault(key, set()).update(_listed(data))
    return out


def _expected(old: dict[str, bytes], new: dict[str, bytes]) -> set[str]:
    """The slices a change of membership must rewrite: the shard of each cluster that came or
    went (every slice of a placement whose shard count changed)."""
    before, after = _members(old), _members(new)
    out: set[str] = set()
    for key in before.keys() | after.keys():
        was, now = before.get(key, set()), after.get(key, set())
        count = shard_count(len(now))
        if count != shard_count(len(was)):
            out |= {p for p in _decisions({**old, **new}) if p.startswith(f"decisions/{key}-")}
        else:
            out |= {f"decisions/{key}-{shard_of(c, count)}.yaml" for c in was ^ now}
    return out


def test_passes_adding_and_removing_a_cluster_rewrite_only_its_slices(tmp_path: Path) -> None:
    write_fleet(build_fleet(FleetSize(240, 6, 12, 0), seed=7), tmp_path)
    fleet = load_fleet(WorkdirTree(tmp_path))
    result = reconcile(fleet, State(), None, NOW)
    assert "decisions/platform-monitoring-7.yaml" in result.files  # a sharded placement
    edits = [
        lambda f: _copy_as(f, sorted(f.clusters)[0], "aaa-new"),
        lambda f: _without(f, sorted(f.clusters)[100]),
        lambda f: _without(f, "aaa-new"),
        lambda f: f,
    ]
    for step, edit in enumerate(edits):
        fleet = edit(fleet)
        prior = read_state(result.files)[0]
        warm = reconcile(fleet, prior, None, NOW)
        placememo.forget()
        fresh = reconcile(fleet, prior, None, NOW)
        assert _decisions(warm.files) == _decisions(fresh.files), step
        changed = _differ(_decisions(result.files), _decisions(fresh.files))
        assert changed == _expected(result.files, fresh.files), step
        assert bool(changed) == (step < 3), step
        result = fresh

"""Sharded `state/prior/` records (reconciler.priorshards): one file up to 100 clusters, a head
and shards above; read back to the same record as one file; one cluster joining or leaving
rewrites one shard; a missing or broken shard makes the readers parse the files; a restarted hub
writes what a running one does."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.api.output import (
    PRIOR_STATE_PREFIX,
    placement_prior_path,
    placement_prior_shard_path,
    placement_status_path,
)
from gitfleet.api.shards import shard_count, shard_of
from gitfleet.load.yamlio import dump_yaml
from reconciler import priorindex, statusdocs
from reconciler.pass_ import reconcile
from reconciler.priorindex import parsed_prior_index, read_prior_index, recorded_prior_index
from reconciler.priorstate import implied_row, implied_rows, prior_files, read_placement_prior
from reconciler.stagememo import forget_stages
from reconciler.state import Binding, State, read_state
from tests.unit.reconciler.test_priorstate import (
    NOW,
    _refused,
    cold_caches,
    load,
    with_records,
    without_records,
)

HEADER = {"name": "web", "applyStrategy": {"type": "ClientSideApply"}}
COND = {"lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1, "status": "True"}


def _binding(cluster: str) -> Binding:
    return Binding(cluster, "Bound", 0, resource_index=1, content="sha256:" + "a" * 64)


def _status(clusters: list[str]) -> bytes:
    """A status file: clusters grouped by their conditions, some alone, one entry unnamed."""
    entries: list[dict[str, Any]] = []
    for c in clusters:
        text = f'placed on "{c}"' if sum(map(ord, c)) % 7 else f"placed {c} alone"
        cond = {**COND, "type": "Scheduled", "reason": "Scheduled", "message": text}
        entries.append({"clusterName": c, "conditions": [cond]})
    entries.append({"conditions": [{**COND, "type": "Scheduled", "reason": "NotFound"}]})
    top = [{**COND, "type": "Placed", "reason": "Done", "message": "ok"}]
    status = {"conditions": top, "perClusterPlacementStatuses": entries}
    return dump_yaml({"kind": "ClusterResourcePlacement", "status": status}).encode()


def _inputs(clusters: list[str]) -> tuple[Any, Any, dict[str, bytes]]:
    bindings = tuple(_binding(c) for c in clusters)
    rows: dict[str, Mapping[str, Any]] = {
        b.cluster: implied_row("web", HEADER, b) or {} for b in bindings
    }
    if "c-0003" in rows:  # one row the binding does not imply: written whole
        rows["c-0003"] = {**rows["c-0003"], "resourceSnapshotIndex": 0}
    return {"web": bindings}, {"web": rows}, {placement_status_path("web"): _status(clusters)}


def _names(n: int, extra: str = "") -> list[str]:
    return sorted([f"c-{i:04d}" for i in range(n)] + ([extra] if extra else []))


def _files(clusters: list[str]) -> dict[str, bytes]:
    placements, rows, output = _inputs(clusters)
    return {**output, **prior_files(placements, rows, output)}


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    cold_caches()
    forget_stages()
    yield
    cold_caches()
    forget_stages()


@pytest.mark.parametrize("n", [1, 60, 100, 101, 250, 777])
def test_one_file_up_to_100_clusters_else_a_head_and_its_shards(n: int) -> None:
    clusters = _names(n)
    files = _files(clusters)
    paths = sorted(p for p in files if p.startswith(PRIOR_STATE_PREFIX))
    count = shard_count(n)
    assert (count == 1) == (n <= 100)
    head = yaml.safe_load(files[placement_prior_path("web")])
    if count == 1:
        assert paths == [placement_prior_path("web")] and head["kind"] == "PlacementPrior"
        return
    assert head["kind"] == "ShardedPlacementPrior" and head["shards"]["count"] == count
    assert "clusters" not in head["index"] and len(head["conditions"]["perCluster"]) == 1
    used = {shard_of(c, count) for c in clusters}
    assert paths == sorted(
        [placement_prior_path("web")] + [placement_prior_shard_path("web", i) for i in used]
    )
    for i in used:
        doc = yaml.safe_load(files[placement_prior_shard_path("web", i)])
        names = doc["index"].get("clusters", []) + [
            e["cluster"] for e in doc["index"].get("entries", [])
        ]
        assert sorted(names) == [c for c in clusters if shard_of(c, count) == i]
        assert dump_yaml(doc).encode() == files[placement_prior_shard_path("web", i)]
    assert dump_yaml(head).encode() == files[placement_prior_path("web")]


@pytest.mark.parametrize("n", [60, 101, 250])
def test_the_record_read_back_equals_the_status_and_the_rows(n: int) -> None:
    clusters = _names(n)
    placements, rows, _ = _inputs(clusters)
    files = _files(clusters)
    for parse in (False, True):  # remembered by the writer, then parsed from the bytes
        if parse:
            cold_caches()
            forget_stages()
        record = read_placement_prior(files, "web")
        assert record is not None and record.index is not None and record.conditions is not None
        assert implied_rows("web", record.index, placements["web"]) == rows["web"]
        assert record.conditions == priorstate_status(files)
        assert list(record.conditions[1]) == list(priorstate_status(files)[1])


def priorstate_status(files: Mapping[str, bytes]) -> Any:
    from reconciler.priorstate import status_conditions

    cold_caches()
    return status_conditions(files, "web")


def _changed(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> set[str]:
    paths = {p for p in {*before, *after} if p.startswith(PRIOR_STATE_PREFIX)}
    return {p for p in paths if before.get(p) != after.get(p)}


@pytest.mark.parametrize(("n", "extra"), [(250, "c-0100x"), (250, "zz-new"), (130, "c-0000a")])
def test_one_cluster_joining_or_leaving_rewrites_its_shard(n: int, extra: str) -> None:
    small, large = _names(n), _names(n, extra)
    count = shard_count(n)
    assert shard_count(n + 1) == count
    expected = {placement_prior_shard_path("web", shard_of(extra, count))}
    for before, after in ((small, large), (large, small)):
        _files(before)  # the running hub's memos
        old = _fresh_files(before)
        new = _files(after)
        assert new == _fresh_files(after)  # the patched record equals a fresh one
        changed = _changed(old, new)
        # the head changes only with its part: here the per-cluster status count never does
        assert changed == expected, changed
        cold_caches()
        forget_stages()
        _files(before)


def _fresh_files(clusters: list[str]) -> dict[str, bytes]:
    cold_caches()
    forget_stages()
    return _files(clusters)


def test_crossing_the_shard_count_rewrites_the_head() -> None:
    before, after = _names(200), _names(200, "c-9999")
    assert shard_count(200) != shard_count(201)
    _files(before)
    changed = _changed(_fresh_files(before), _files(after))
    assert placement_prior_path("web") in changed


def _broken_shards(files: Mapping[str, bytes]) -> Iterator[dict[str, bytes]]:
    """The record with one shard missing, unreadable, of another count or placement, or
    holding a cluster of another shard."""
    shard = sorted(p for p in files if p.startswith(PRIOR_STATE_PREFIX) and p.count("/") == 3)[0]
    yield {p: d for p, d in files.items() if p != shard}
    yield {**files, shard: b"index: [unclosed\n"}
    doc = yaml.safe_load(files[shard])
    for change in ({"shard": {**doc["shard"], "count": 16}}, {"metadata": {"name": "other"}}):
        yield {**files, shard: dump_yaml({**doc, **change}).encode()}
    stray = {**doc, "index": {**doc["index"], "clusters": [*doc["index"]["clusters"], "c-zzzz"]}}
    if shard_of("c-zzzz", doc["shard"]["count"]) != doc["shard"]["number"]:
        yield {**files, shard: dump_yaml(stray).encode()}


def test_a_missing_or_broken_shard_reads_no_record() -> None:
    files = _files(_names(250))
    seen = 0
    for broken in _broken_shards(files):
        cold_caches()
        forget_stages()
        assert read_placement_prior(broken, "web") is None
        seen += 1
    assert seen == 5
    cold_caches()
    assert read_placement_prior(files, "web") is not None


@pytest.fixture
def big_fleet(tmp_path: Path) -> Iterator[Path]:
    write_fleet(build_fleet(FleetSize(140, 8, 40, 6), seed=3), tmp_path)
    yield tmp_path
    cold_caches()


def test_a_big_fleet_restarts_from_sharded_records_as_from_its_files(
    big_fleet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = reconcile(load(big_fleet), State(), None, NOW)
    recorded, plain = with_records(first), without_records(first.files)
    assert any(p.count("/") == 3 for p in recorded if p.startswith(PRIOR_STATE_PREFIX))
    assert recorded_prior_index(recorded) == {
        c: e for c, e in parsed_prior_index(recorded).items() if e
    }
    _add_cluster(big_fleet)
    later = NOW + timedelta(minutes=5)
    warm = with_records(reconcile(load(big_fleet), read_state(recorded)[0], None, later))
    cold_caches()
    forget_stages()
    from_files = with_records(reconcile(load(big_fleet), read_state(plain)[0], None, later))
    cold_caches()
    forget_stages()
    with monkeypatch.context() as patched:  # the restart from state/ parses no index or status
        for module, name in ((priorindex, "parsed_prior_index"), (statusdocs, "status_conditions")):
            patched.setattr(module, name, _refused)
        from_state = with_records(reconcile(load(big_fleet), read_state(recorded)[0], None, later))
    assert from_state == from_files == warm
    changed = _changed(recorded, warm)
    shards = [p for p in changed if p.count("/") == 3]
    assert shards and len(shards) <= sum(p.count("/") == 2 for p in changed)


def test_a_broken_shard_after_a_restart_falls_back_to_the_files(big_fleet: Path) -> None:
    recorded = with_records(reconcile(load(big_fleet), State(), None, NOW))
    later = NOW + timedelta(minutes=5)
    cold_caches()
    forget_stages()
    plain = without_records(recorded)
    expected = with_records(reconcile(load(big_fleet), read_state(plain)[0], None, later))
    for broken in _broken_shards(recorded):
        cold_caches()
        forget_stages()
        assert recorded_prior_index(broken) is None
        assert read_prior_index(broken) == parsed_prior_index(broken)
        cold_caches()
        forget_stages()  # the pass reads the index and status files instead, and does not fail
        assert (
            with_records(reconcile(load(big_fleet), read_state(broken)[0], None, later)) == expected
        )


def _add_cluster(fleet: Path) -> None:
    from benchmarks import hub_scenarios

    hub_scenarios._add_cluster(fleet, 1)


def test_a_running_hub_makes_only_the_changed_shard_and_parses_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from reconciler import priorshards, priorstate

    before, after = _names(250), _names(250, "c-0100x")
    _files(before)
    made: list[int] = []
    real = priorshards._shard

    def counted(key: str, number: int, *args: Any) -> Any:
        made.append(number)
        return real(key, number, *args)

    monkeypatch.setattr(priorshards, "_shard", counted)
    for name in ("parse_prior_shard", "parse_sharded_head", "_joined"):
        monkeypatch.setattr(priorshards, name, _refused)
    monkeypatch.setattr(priorstate, "parse_placement_prior", _refused)
    files = _files(after)
    assert made == [shard_of("c-0100x", shard_count(250))]
    record = read_placement_prior(files, "web")  # what the pass wrote: remembered, not parsed
    # nor joined again
    assert record is not None and record.index is not None and "c-0100x" in record.index.clusters


def test_a_shard_with_other_bytes_is_read_again_not_taken_from_the_last_read() -> None:
    """The reader skips shards whose blob ids it read last time; one shard replaced under
    the same head (another cluster in it) must be read again."""
    n = 250
    before, after = _names(n), _names(n, "c-new")
    files, other = _files(before), _files(after)
    count = shard_count(n)
    shard = placement_prior_shard_path("web", shard_of("c-new", count))
    cold_caches()
    forget_stages()
    first = read_placement_prior(files, "web")
    assert first is not None and first.index is not None and "c-new" not in first.index.clusters
    head = placement_prior_path("web")
    mixed = {**files, shard: other[shard], head: other[head]}
    again = read_placement_prior(mixed, "web")
    assert again is not None and again.index is not None and "c-new" in again.index.clusters
    mixed_head_kept = {**files, shard: other[shard]}
    kept = read_placement_prior(mixed_head_kept, "web")
    assert kept is not None and kept.index is not None and "c-new" in kept.index.clusters

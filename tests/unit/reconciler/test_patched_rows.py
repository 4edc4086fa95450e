"""Stage results patched or reused per changed placement or cluster (issue 18: work in
proportion to the change) equal the results made from scratch, after any sequence of edits:
`priorindex` (cluster -> placement -> row, from per-placement rows, in the same order),
`priorrows.placement_rows` (placement -> cluster -> row, from the new cluster index files), the
rollout's given contents read from a merged index, the sealing stage's "any Secret" answer,
`StageMemo` keeping the newest of equal inputs, the desired content hash from manifests, and
`placememo`'s cluster-view digests and declared texts reused across passes."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any, cast

import pytest

from gitfleet.api import ClusterResourcePlacement
from gitfleet.api.canonical import placement_content_hash
from gitfleet.api.indexrow import read_row
from gitfleet.api.output import cluster_index_path
from gitfleet.load.yamlio import dump_yaml
from reconciler import (
    placememo,
    priorindex,
    priorparse,
    priorrows,
    priorstate,
    rollmemo,
    sealing,
)
from reconciler.manifests import ClusterManifests, Manifest, manifests_content_hash
from reconciler.placement import PlacementPlan
from reconciler.priorindex import RowsIndex, given_content
from reconciler.priorparse import load_bounded
from reconciler.schedule.fleetfacts import FleetFacts
from reconciler.stagememo import StageMemo, forget_stages
from reconciler.state import PlacementState
from reconciler.status import Cond
from tests.unit.schedule.fleet import cluster as cluster_view

Rows = dict[str, dict[str, dict[str, Any]]]
KEYS = ["web", "api", "team-a/api", "team-b/cache", "zeta"]
CLUSTERS = [f"c{i:02d}" for i in range(12)]


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


def _row(key: str, content: str) -> dict[str, Any]:
    namespace, _, name = key.rpartition("/")
    row: dict[str, Any] = {"key": key, "name": name, "contentHash": content}
    if namespace:
        row["namespace"] = namespace
    return row


def _placement(rng: random.Random, key: str) -> dict[str, dict[str, Any]]:
    return {c: _row(key, f"h{rng.randrange(3)}") for c in rng.sample(CLUSTERS, rng.randrange(6))}


def _edit(rng: random.Random, by_placement: Rows) -> Rows:
    """A new per-placement table: unchanged placements keep their very rows mapping."""
    out = dict(by_placement)
    for _ in range(rng.randrange(1, 3)):
        key = rng.choice(KEYS)
        what = rng.randrange(4)
        if what == 0:
            out.pop(key, None)  # the placement goes
        elif what == 1:
            out[key] = _placement(rng, key)  # new rows (new clusters too)
        elif what == 2 and key in out:  # one cluster's row changes, one goes
            rows = dict(out[key])
            if rows:
                rows[rng.choice(sorted(rows))] = _row(key, "changed")
                rows.pop(rng.choice(sorted(rows)))
            out[key] = rows
        elif key in out:  # equal rows, another object
            out[key] = {c: dict(r) for c, r in out[key].items()}
    return out


def _shape(index: dict[str, dict[str, dict[str, Any]]]) -> list[Any]:
    return [(c, list(inner.items())) for c, inner in index.items()]


@pytest.mark.parametrize("seed", range(40))
def test_a_patched_prior_index_equals_a_full_merge(seed: int) -> None:
    rng = random.Random(seed)
    by_placement: Rows = {k: _placement(rng, k) for k in rng.sample(KEYS, 3)}
    last = priorindex._full_merge(by_placement)
    patches = 0
    for _ in range(12):
        by_placement = _edit(rng, by_placement)
        patched = priorindex._patched(last, by_placement)
        full = priorindex._full_merge(by_placement)
        if patched is None:  # too much changed: the caller merges afresh
            patched = full
        assert _shape(patched) == _shape(full)
        assert patched.by_placement is by_placement
        last = patched
        patches += patched is not full
    assert patches  # not every step merged afresh


def test_an_unchanged_placement_keeps_the_clusters_it_alone_is_on() -> None:
    rows = {"web": {"a": _row("web", "1")}, "api": {"b": _row("api", "1")}}
    last = priorindex._full_merge(rows)
    patched = priorindex._patched(last, {**rows, "api": {"b": _row("api", "2")}})
    assert patched is not None
    assert patched["a"] is last["a"] and patched["b"] is not last["b"]


def _index_bytes(rows: list[dict[str, Any]]) -> bytes:
    return dump_yaml({"placements": rows}).encode()


def _reference_rows(output: dict[str, bytes]) -> Rows | None:
    """`placement_rows` as it was: every index file parsed, every row placed."""
    out: Rows = {}
    for cluster, path in priorrows._cluster_indexes(output):
        entries = priorstate.index_entries(load_bounded(output[path]))
        for key, row in entries.items():
            if "objects" in row:
                return None
            out.setdefault(key, {})[cluster] = row
    return out


@pytest.mark.parametrize("seed", range(30))
def test_placement_rows_from_changed_index_files_equal_a_full_read(seed: int) -> None:
    rng = random.Random(seed)
    output: dict[str, bytes] = {}
    for _ in range(10):
        for cluster in rng.sample(CLUSTERS, rng.randrange(1, 5)):
            path = cluster_index_path(cluster)
            what = rng.randrange(4)
            if what == 0:
                output.pop(path, None)
            elif what == 1 and path in output:
                output[path] = bytes(bytearray(output[path]))  # equal bytes, another object
            else:
                keys = sorted(rng.sample(KEYS, rng.randrange(4)))
                output[path] = _index_bytes([_row(k, f"h{rng.randrange(3)}") for k in keys])
        named = CLUSTERS if seed % 2 else None  # the clusters named (some without a file)
        got = priorrows.placement_rows(output, named)
        assert got == _reference_rows(output)
        assert got is not None and all(got.values())


def test_placement_rows_keep_an_unchanged_placements_mapping() -> None:
    output = {
        cluster_index_path("a"): _index_bytes([_row("web", "1")]),
        cluster_index_path("b"): _index_bytes([_row("api", "1")]),
    }
    first = priorrows.placement_rows(output)
    output[cluster_index_path("b")] = _index_bytes([_row("api", "2")])
    second = priorrows.placement_rows(output)
    assert first is not None and second is not None
    read = read_row(_row("api", "2"))  # as read back: the default apply strategy filled in
    assert second["web"] is first["web"] and second["api"] == {"b": read}


def test_placement_rows_keep_the_mapping_of_a_placement_whose_row_is_the_same_object() -> None:
    web, api = read_row(_row("web", "1")), read_row(_row("api", "1"))
    output = {cluster_index_path("a"): _index_bytes([_row("api", "1"), _row("web", "1")])}
    path = cluster_index_path("a")
    priorparse.remember(output[path], "cluster-index", {"api": api, "web": web})
    first = priorrows.placement_rows(output, ["a"])
    changed = read_row(_row("api", "2"))  # the index file changes in the api row only
    output[path] = _index_bytes([_row("api", "2"), _row("web", "1")])
    priorparse.remember(output[path], "cluster-index", {"api": changed, "web": web})
    second = priorrows.placement_rows(output, ["a"])
    assert first is not None and second is not None
    assert second["web"] is first["web"] and second["api"] == {"a": changed}


def test_an_index_that_lists_objects_is_never_recorded_even_after_a_patch() -> None:
    output = {cluster_index_path("a"): _index_bytes([_row("web", "1")])}
    assert priorrows.placement_rows(output) is not None
    output[cluster_index_path("b")] = _index_bytes([{**_row("api", "1"), "objects": []}])
    assert priorrows.placement_rows(output) is None
    del output[cluster_index_path("b")]
    assert priorrows.placement_rows(output) == _reference_rows(output)


@pytest.mark.parametrize("seed", range(20))
def test_given_contents_from_a_merged_index_equal_the_long_way(seed: int) -> None:
    rng = random.Random(seed)
    by_placement: Rows = {k: _placement(rng, k) for k in KEYS}
    index: RowsIndex = priorindex._full_merge(by_placement)
    for step in range(10):
        by_placement = _edit(rng, by_placement)
        index = priorindex._patched(index, by_placement) or priorindex._full_merge(by_placement)
        for key in KEYS:
            names = tuple(CLUSTERS[:4] if step % 2 else sorted(rng.sample(CLUSTERS, 4)))
            want = tuple(given_content(index.get(c, {}).get(key)) for c in names)
            assert rollmemo._given(key, names, index, step) == want


def test_given_contents_follow_the_placements_rows_alone() -> None:
    rows = {"web": {"a": _row("web", "1")}, "api": {"a": _row("api", "1")}}
    index = priorindex._full_merge(rows)
    assert rollmemo._given("web", ("a", "b"), index, None) == ("1", None)
    patched = priorindex._patched(index, {**rows, "web": {"b": _row("web", "2")}})
    assert patched is not None
    assert rollmemo._given("web", ("a", "b"), patched, None) == (None, "2")


def _manifest(name: str, kind: str) -> Manifest:
    identity = {"apiVersion": "v1", "kind": kind, "name": name}
    return Manifest(f"{name}.yaml", b"x", identity, "sha256:" + name)


def test_any_secret_follows_the_per_cluster_manifests() -> None:
    plan = PlacementPlan("web", PlacementState("web"), Cond("Scheduled", "True", "", ""))
    plan.manifests = (_manifest("a", "ConfigMap"),)
    plan.per_cluster = {"c1": ClusterManifests(("o-0",), (), plan.manifests)}
    assert not sealing._any_secret(plan)
    plan.per_cluster = {
        **plan.per_cluster,
        "c2": ClusterManifests(("o-0",), (), (_manifest("s", "Secret"),)),
    }
    assert sealing._any_secret(plan)
    plan.per_cluster = {"c1": plan.per_cluster["c1"]}
    assert not sealing._any_secret(plan)
    plan.manifests = (_manifest("s", "Secret"),)
    assert sealing._any_secret(plan)


def test_any_secret_looks_only_at_the_clusters_that_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A placement that held no Secret gains a cluster, its manifests made anew (equal): only
    the new cluster's manifests are looked at, and a Secret there is found; a Secret in the
    placement's own manifests is found however few clusters changed."""
    plan = PlacementPlan("gains", PlacementState("gains"), Cond("Scheduled", "True", "", ""))
    plan.manifests = (_manifest("a", "ConfigMap"),)
    plan.per_cluster = {
        f"c{i}": ClusterManifests(("o-0",), (), (_manifest(f"m{i}", "ConfigMap"),))
        for i in range(50)
    }
    assert not sealing._any_secret(plan)
    looked: list[Manifest] = []
    check = sealing._is_secret_manifest
    monkeypatch.setattr(sealing, "_is_secret_manifest", lambda m: looked.append(m) or check(m))
    plan.manifests = (_manifest("a", "ConfigMap"),)  # equal, not the same tuple
    new = ClusterManifests(("o-0",), (), (_manifest("new", "ConfigMap"),))
    plan.per_cluster = {**plan.per_cluster, "c50": new}
    assert not sealing._any_secret(plan)
    assert [m.identity["name"] for m in looked] == ["new"]
    secret = ClusterManifests(("o-0",), (), (_manifest("s", "Secret"),))
    plan.per_cluster = {**plan.per_cluster, "c51": secret}
    assert sealing._any_secret(plan)
    plan.per_cluster = {k: v for k, v in plan.per_cluster.items() if k != "c51"}
    assert not sealing._any_secret(plan)  # after True: looked at whole
    plan.manifests = (_manifest("a", "ConfigMap"), _manifest("t", "Secret"))
    plan.per_cluster = {**plan.per_cluster, "c52": new}
    assert sealing._any_secret(plan)


def test_a_stage_memo_hit_keeps_the_newest_equal_inputs() -> None:
    memo: StageMemo[str] = StageMemo()
    old, new = ("a", [1, 2]), ("a", [1, 2])
    memo.put("k", old, "result")
    assert memo.get("k", new) == "result"
    last = memo.last("k")
    assert last is not None and last[0] is new
    assert memo.get("k", ("a", [1, 3])) is None
    assert memo.get("k", new) == "result"


@pytest.mark.parametrize(
    "names",
    [[], ["a"], ["b", "a", "c"], ["a", "a"]],
)
def test_manifests_content_hash_equals_the_hash_of_their_entries(names: list[str]) -> None:
    manifests = tuple(_manifest(n, "ConfigMap") for n in names)
    manifests += tuple(
        Manifest(f"{n}.yaml", b"y", {"kind": "X", "file": "f", "hash": "h"}, "sha256:" + n * 2)
        for n in names
    )
    assert manifests_content_hash(manifests) == placement_content_hash(m.entry for m in manifests)


def _facts(labels: dict[str, dict[str, str]], ineligible: str = "") -> FleetFacts:
    views = {
        n: cluster_view(n, dict(ls), ineligible=ineligible or None) for n, ls in labels.items()
    }
    return FleetFacts(views, None)


@pytest.mark.parametrize(
    ("keys", "later", "same"),
    [
        (frozenset({"env"}), _facts({"a": {"env": "prod", "x": "2"}, "b": {"env": "dev"}}), True),
        (frozenset({"env"}), _facts({"a": {"env": "dev", "x": "1"}, "b": {"env": "dev"}}), False),
        (frozenset({"env"}), _facts({"a": {"env": "prod", "x": "1"}}), False),
        (
            frozenset({"env"}),
            _facts({"a": {"env": "prod", "x": "1"}, "b": {"env": "dev"}, "c": {}}),
            False,
        ),
        (None, _facts({"a": {"env": "prod", "x": "2"}, "b": {"env": "dev"}}), False),
        (
            frozenset({"env"}),
            _facts({"a": {"env": "prod", "x": "1"}, "b": {"env": "dev"}}, "not joined"),
            False,
        ),
    ],
    ids=["unread-label", "read-label", "removed", "added", "all-labels", "eligibility"],
)
def test_a_plan_sees_the_same_views_only_when_its_clusters_read_the_same(
    keys: frozenset[str] | None, later: FleetFacts, same: bool
) -> None:
    first = _facts({"a": {"env": "prod", "x": "1"}, "b": {"env": "dev"}})
    kept = placememo._Kept(cast(Any, None), first, keys)
    assert placememo._same_views(kept, later) is same


def test_a_placements_declared_text_follows_the_object() -> None:
    spec = {"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "a"}]}
    doc = {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
    }
    one = ClusterResourcePlacement.model_validate({**doc, "metadata": {"name": "p"}, "spec": spec})
    two = ClusterResourcePlacement.model_validate({**doc, "metadata": {"name": "q"}, "spec": spec})
    assert placememo._declared(one) == placememo._declared(one)
    assert '"name":"q"' in placememo._declared(two) and '"name":"p"' in placememo._declared(one)


def test_remember_at_hashes_a_file_again_only_for_another_bytes_object(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bytes] = []
    monkeypatch.setattr(priorparse, "remember", lambda data, tag, value: seen.append(data))
    data = b"kind: X\n"
    priorparse.remember_at("state/a.yaml", data, "t", 1)
    priorparse.remember_at("state/a.yaml", data, "t", 1)  # the same object: nothing to do
    priorparse.remember_at("state/b.yaml", data, "t", 1)  # another file
    priorparse.remember_at("state/a.yaml", data, "u", 1)  # another reader
    copy = bytes(bytearray(data))
    priorparse.remember_at("state/a.yaml", copy, "t", 1)  # equal bytes, another object
    assert seen == [data, data, data, copy]


def test_a_remembered_files_blob_id_is_not_hashed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    hashed: list[bytes] = []
    real = priorparse._blob_id
    monkeypatch.setattr(priorparse, "_blob_id", lambda data: hashed.append(data) or real(data))
    data, copy = b"kind: Y\n", bytes(bytearray(b"kind: Y\n"))
    priorparse.remember(data, "t", 1)
    assert hashed == [data]
    assert priorparse.blob_key({"a": data}, "a") == real(data)
    assert priorparse.derive_own({"a": data}, "a", "t", lambda doc: 2) == 1  # nothing read
    assert hashed == [data]  # the very object: its kept id
    assert priorparse.blob_key({"a": copy}, "a") == real(data)
    assert hashed == [data, copy]  # equal bytes, another object: hashed


def test_blob_ids_are_kept_for_a_bounded_number_of_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(priorparse, "MAX_ID_BYTES", 20)
    first, second = b"kind: first-file\n", b"kind: second-file\n"
    priorparse.remember(first, "t", 1)
    priorparse.remember(second, "t", 2)
    assert id(first) not in priorparse._ids and priorparse._ids[id(second)][0] is second
    assert priorparse._ids_held == len(second)

"""The shortcuts the warm pass takes give exactly what the long way gives: a ClusterIndex file
built from per-row pieces equals the whole document emitted at once; an output tree's sorted
paths are sorted whatever the last tree was; the hub's change description from listings equals
the one from blob ids; a settled pass observes no rollout and emits no status or index file.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.api.output import (
    cluster_index_doc,
    cluster_index_path,
    placement_index_doc,
    placement_index_path,
)
from gitfleet.repo import treefiles
from gitfleet.repo.gitwrite import blob_id
from gitfleet.repo.treefiles import BlobIdMemo, WrittenOutput
from gitfleet.repo.workdir import WorkdirTree
from reconciler import indexfiles, placememo, publish, rollstage, statusdocs
from reconciler.assemblememo import ThreeRounds
from reconciler.commitmsg import describe_changes
from reconciler.output import OutputFiles, yaml_bytes
from reconciler.pass_ import reconcile
from reconciler.stagememo import IdentityMemo, RoundMemo
from reconciler.state import State, read_state
from renderers import load_fleet
from tests.helpers.outputs import next_output

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
STRATEGY = {"type": "ClientSideApply", "whenToApply": "Always"}


def _row(name: str, namespace: str = "", **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"key": f"{namespace}.{name}" if namespace else name, "name": name}
    if namespace:
        row["namespace"] = namespace
    return {**row, "applyStrategy": STRATEGY, "contentHash": "sha256:" + "0" * 64, **extra}


ROWS = [
    ("none", []),
    ("one", [_row("a")]),
    ("unsorted", [_row("b"), _row("a"), _row("c", "ns")]),
    ("namespaced first by namespace", [_row("z", "b"), _row("a", "b"), _row("m", "a")]),
    ("objects left out", [_row("a", objects=[{"file": "x.yaml", "kind": "ConfigMap"}])]),
    ("quoting", [_row("a", note="yes: no\n'quoted' \"x\" #"), _row("b", n=[1, {"k": None}])]),
    ("unicode", [_row("größe", extra="✓")]),
]


@pytest.mark.parametrize(("name", "rows"), ROWS, ids=[n for n, _ in ROWS])
def test_index_file_from_rows_equals_the_whole_document(name: str, rows: list[Any]) -> None:
    """Emitted from its rows' pieces: afresh, again with the same rows, and with one row
    changed (a new row object) among the very rows of the last time."""
    placememo.forget()
    path = cluster_index_path("eu-1")
    changed = [*rows[:-1], {**rows[-1], "contentHash": "sha256:" + "1" * 64}] if rows else []
    for now in (rows, rows, changed, [dict(r) for r in changed]):
        units: dict[str, Mapping[str, bytes]] = {}
        indexfiles.write_indexes(["eu-1"], {"eu-1": now}, units)
        files = units["index/eu-1"]
        assert files[path] == yaml_bytes(cluster_index_doc("eu-1", now))
        for row in now:
            listed = placement_index_doc(row["key"], row.get("objects") or [])
            assert files[placement_index_path("eu-1", row["key"])] == yaml_bytes(listed)


def test_sorted_paths_follow_the_tree_not_the_last_one() -> None:
    first = OutputFiles({"b": b"", "a": b"", "c/d": b""})
    assert first.sorted_paths() == ["a", "b", "c/d"]
    same = OutputFiles({"c/d": b"1", "a": b"2", "b": b"3"})
    assert same.sorted_paths() == ["a", "b", "c/d"]
    other = OutputFiles({"c/d": b"", "a": b"", "aa": b""})
    assert other.sorted_paths() == ["a", "aa", "c/d"]
    assert first.sorted_paths() == ["a", "b", "c/d"]


class _Tree:
    """A listed previous output (what `GitTree` gives the hub; after a restart it is listed
    without sizes: `sized=False`)."""

    def __init__(self, files: dict[str, bytes], sized: bool = True) -> None:
        self._listing = {p: (blob_id(d), len(d) if sized else -1) for p, d in files.items()}

    def files(self) -> list[str]:
        return sorted(self._listing)

    def oid(self, path: str) -> str:
        return self._listing[path][0]

    def listing(self) -> dict[str, tuple[str, int]]:
        return self._listing


@pytest.mark.parametrize("sized", [True, False])
def test_change_description_from_listings_equals_the_one_from_blob_ids(sized: bool) -> None:
    before = {"clusters/eu/p/a.yaml": b"a", "clusters/eu/p/b.yaml": b"b", "status/x.yaml": b"x"}
    after = {"clusters/eu/p/a.yaml": b"a2", "clusters/us/p/a.yaml": b"a", "status/x.yaml": b"x"}
    listing = BlobIdMemo().listing(after)
    fast = describe_changes(_Tree(before, sized), after, listing=listing)
    slow = describe_changes(_Tree(before, sized), after)
    assert fast.changes == slow.changes
    assert set(fast.changes) == {
        "clusters/eu/p/a.yaml",
        "clusters/us/p/a.yaml",
        "clusters/eu/p/b.yaml",
    }
    assert fast.changes["clusters/eu/p/b.yaml"] is None
    assert dict(fast.placements) == dict(slow.placements) == {"p": {"eu", "us"}}


@pytest.mark.parametrize("seed", range(24))
def test_change_description_from_whole_listings_equals_the_one_from_blob_ids_at_random(
    seed: int,
) -> None:
    """A whole listing (a restart's or a cold pass's: no candidates) against the listed tree,
    with nothing, some or all paths changed, added or removed, sized or not."""
    rng = random.Random(seed)
    pool = [f"clusters/c{i}/p{j}/o.yaml" for i in range(5) for j in range(3)]
    pool += ["status/x.yaml", "state/y.yaml"]
    before = {p: f"{p}{rng.randrange(3)}".encode() for p in pool if rng.random() < 0.7}
    count = rng.choice([0, 0, 1, 3, len(pool)])
    after = next_output(rng, before, pool, count, lambda r, p: f"{p}{r.randrange(3)}".encode())
    for sized in (True, False):
        listing = BlobIdMemo().listing(after)
        fast = describe_changes(_Tree(before, sized), after, listing=listing)
        slow = describe_changes(_Tree(before, sized), after)
        assert fast.changes == slow.changes
        assert dict(fast.placements) == dict(slow.placements)


def test_a_whole_listing_hashes_each_bytes_object_once(monkeypatch: pytest.MonkeyPatch) -> None:
    hashed: list[bytes] = []

    def counted(data: bytes) -> str:
        hashed.append(data)
        return blob_id(data)

    monkeypatch.setattr(treefiles, "blob_id", counted)
    shared, other = b"shared", bytes(bytearray(b"shared"))  # equal, another object
    files = {"a": shared, "b": shared, "c": other, "d": b"d", "e": shared}
    memo = BlobIdMemo()
    listing = memo.listing(files)
    assert listing == {p: (blob_id(d), len(d)) for p, d in files.items()}
    assert list(listing) == list(files) and sorted(map(id, hashed)) == sorted(
        {id(shared), id(other), id(files["d"])}
    )
    hashed.clear()
    assert memo.listing({"x": other, "y": shared}) == {"x": listing["c"], "y": listing["a"]}
    assert hashed == []  # known objects: not hashed again


@pytest.mark.parametrize("sized", [True, False])
def test_changes_since_the_written_output_equal_a_full_comparison(sized: bool) -> None:
    """Only paths whose bytes are new objects are compared: equal bytes in a new object,
    changed, added and removed paths all come out as a full comparison finds them."""
    before = {f"clusters/c{i}/p/a.yaml": f"a{i}".encode() for i in range(6)}
    output = WrittenOutput()
    listing, maybe = output.changes(None, before)
    assert maybe is None and listing == BlobIdMemo().listing(before)
    output.wrote("c1", before, listing)
    after = dict(before)
    after["clusters/c0/p/a.yaml"] = bytes(bytearray(b"a0"))  # equal content, new object
    after["clusters/c1/p/a.yaml"] = b"changed"
    after["clusters/new/p/a.yaml"] = b"a2"
    del after["clusters/c2/p/a.yaml"]
    assert output.changes("other", after)[1] is None  # not the commit it wrote: everything
    listing, maybe = output.changes("c1", after)
    assert listing == BlobIdMemo().listing(after)
    assert maybe is not None and "clusters/c3/p/a.yaml" not in maybe
    fast = describe_changes(_Tree(before, sized), after, listing=listing, candidates=maybe)
    assert fast.changes == describe_changes(_Tree(before, sized), after).changes
    assert set(fast.changes) == {
        "clusters/c1/p/a.yaml",
        "clusters/new/p/a.yaml",
        "clusters/c2/p/a.yaml",
    }


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """How often the rollout observes a placement and status, index and decision files are
    made."""
    calls = {"observe": 0, "status": 0, "index": 0, "decisions": 0}

    def counting(name: str, real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(rollstage, "_observe", counting("observe", rollstage._observe))
    monkeypatch.setattr(
        statusdocs, "placement_status_doc", counting("status", statusdocs.placement_status_doc)
    )
    monkeypatch.setattr(indexfiles, "_piece", counting("index", indexfiles._piece))
    monkeypatch.setattr(publish, "shard_documents", counting("decisions", publish.shard_documents))
    placememo.forget()
    yield calls
    placememo.forget()


def test_a_settled_pass_rolls_out_and_emits_nothing_again(
    tmp_path: Path, counted: dict[str, int]
) -> None:
    write_fleet(build_fleet(FleetSize(16, 10, 50, 6), seed=7), tmp_path)
    fleet = load_fleet(WorkdirTree(tmp_path))
    result = reconcile(fleet, State(), None, NOW)
    for _ in range(2):  # the first passes settle the rollout and the condition times
        result = reconcile(fleet, read_state(result.files)[0], None, NOW)
    assert all(counted.values()), counted
    counted.update(observe=0, status=0, index=0, decisions=0)
    again = reconcile(fleet, read_state(result.files)[0], None, NOW)
    assert counted == {"observe": 0, "status": 0, "index": 0, "decisions": 0}
    assert again.files == result.files


def test_identity_memo_keeps_what_the_last_two_rounds_used() -> None:
    memo: IdentityMemo[str] = IdentityMemo()
    a, b, equal_to_a = ["a"], ["b"], ["a"]
    memo.put(a, "A")
    memo.put(b, "B")
    assert memo.get(a) == "A" and memo.get(equal_to_a) is None  # identity, not equality
    memo.next_round()
    assert memo.get(a) == "A"  # used in this round: kept for the next
    memo.next_round()
    assert memo.get(a) == "A" and memo.get(b) is None  # b went unused for a whole round


def test_a_round_that_used_nothing_is_no_round() -> None:
    """Passes whose callers took their results from a memo above (quiet passes) keep what the
    last pass that used the memo held: the next change finds its unchanged objects' values."""
    memo: IdentityMemo[str] = IdentityMemo()
    by_key: RoundMemo[str] = RoundMemo()
    three: ThreeRounds[str] = ThreeRounds()
    a, b = ["a"], ["b"]
    memo.put(a, "A")
    memo.put(b, "B")
    by_key.get("k", lambda: "made")
    three.put("k", "kept")
    for _ in range(5):  # quiet passes: no memo is used
        memo.next_round()
        by_key.next_round()
        three.next_round()
    assert memo.get(a) == "A" and memo.get(b) == "B"
    assert by_key.get("k", lambda: "again") == "made"
    assert three.get("k") == "kept"
    memo.next_round()  # the round above used `a` and `b`
    assert memo.get(a) == "A"
    memo.next_round()  # this round used `a` only: `b` is dropped
    memo.next_round()  # a round that used nothing: `a` stays
    assert memo.get(a) == "A" and memo.get(b) is None


def test_the_written_output_reads_back_from_memory() -> None:
    """The prior of the next pass is the very files the last pass returned, with the blob ids
    and order a Git tree of them gives."""
    files = {"b/x.yaml": b"x", "a.yaml": b"a", "b/a.yaml": b"a"}
    output = WrittenOutput()
    listing, _ = output.changes(None, files)
    output.wrote("c1", files, listing)
    assert output.files("c2") is None and output.files(None) is None
    mine = output.files("c1")
    assert mine is not None and dict(mine) == files and mine["a.yaml"] is files["a.yaml"]
    assert mine.sorted_paths() == ["a.yaml", "b/a.yaml", "b/x.yaml"]
    assert all(mine.oid(p) == blob_id(d) for p, d in files.items())


@pytest.mark.parametrize("assembled", [False, True])
def test_the_written_sorted_paths_follow_each_pass(assembled: bool) -> None:
    """The sorted paths of the written output are the files' sorted paths after each pass:
    the same paths, one added, some removed, both, a commit the hub did not write, and a pass
    that was not written. A pass's tree made by `OutputFiles.of_assembly` gives the paths
    outside `clusters/` only for a prefix outside it."""
    files = {f"clusters/{i:03}.yaml": b"x" for i in range(0, 40, 2)}
    output, commit = WrittenOutput(), None
    steps: list[tuple[set[str], set[str]]] = [
        (set(), set()),
        ({"clusters/001.yaml"}, set()),
        (set(), {"clusters/000.yaml", "clusters/038.yaml"}),
        ({"a.yaml", "clusters/017.yaml", "z/1.yaml"}, {"clusters/010.yaml"}),
        (set(), {"z/1.yaml"}),
    ]
    for i, (added, removed) in enumerate(steps):
        files = {p: d for p, d in files.items() if p not in removed}
        files.update({p: f"{i}".encode() for p in added})
        files["clusters/002.yaml"] = f"changed {i}".encode()
        if assembled:
            tree = OutputFiles.of_assembly({p: files[p] for p in files if p[0] == "c"}, None)
            tree.add({p: files[p] for p in files if p[0] != "c"})
            files = tree
        listing, _ = output.changes(commit, files)
        if i == len(steps) - 1:
            output.changes(commit, {**files, "unwritten.yaml": b""})  # asked, never written
        commit = f"c{i}"
        output.wrote(commit, files, listing)
        mine = output.files(commit)
        assert mine is not None and mine.sorted_paths() == sorted(files), i
        outside = sorted(p for p in files if p[0] != "c") if assembled else sorted(files)
        assert mine.sorted_paths("z/") == outside, i

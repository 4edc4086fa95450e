"""The prior index merged from the placements' rows: patched from the last one (only the
clusters of placements whose rows are other objects redone) it equals the index built whole,
in its order too; the content each cluster was given follows a placement's rows by identity."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from reconciler import priorindex, rollmemo
from reconciler.priorindex import MergedIndex, placement_rows_of
from reconciler.stagememo import forget_stages

Found = dict[str, dict[str, dict[str, Any]]]


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


def _rows(key: str, clusters: list[str], tag: int) -> dict[str, dict[str, Any]]:
    namespace, _, name = key.rpartition(".")
    head = {"key": key, "name": name, **({"namespace": namespace} if namespace else {})}
    return {c: {**head, "contentHash": f"{c}-{tag}"} for c in clusters}


def _ordered(index: MergedIndex) -> list[tuple[str, list[tuple[str, Any]]]]:
    return [(c, list(rows.items())) for c, rows in index.items()]


@pytest.mark.parametrize("seed", range(30))
def test_a_patched_index_equals_the_whole_one(seed: int) -> None:
    """Steps change one placement's rows (other clusters too), drop one, add one (possibly on
    a new cluster), or change nothing; each patched index equals the whole one."""
    rng = random.Random(seed)
    pool = [f"c{i}" for i in range(12)]
    keys = ["a", "ns.b", "c", "ns.a", "z"]
    found: Found = {k: _rows(k, rng.sample(pool[:8], rng.randint(1, 6)), 0) for k in keys}
    last = priorindex._whole(dict(found))
    for step in range(1, 12):
        found = dict(found)
        what = rng.choice(["change", "drop", "add", "none"])
        if what == "change" and found:
            key = rng.choice(sorted(found))
            found[key] = _rows(key, rng.sample(pool, rng.randint(0, 8)), step)
        elif what == "drop" and found:
            del found[rng.choice(sorted(found))]
        elif what == "add":
            key = f"new{step}"
            found[key] = _rows(key, rng.sample(pool, rng.randint(1, 4)), step)
        patched = priorindex._patched(last, found)
        whole = priorindex._whole(found)
        assert _ordered(patched) == _ordered(whole), (seed, step, what)
        assert patched.by_placement == found
        if what == "none":
            assert patched is last
        last = patched


def test_the_rows_of_a_placement_are_found_in_a_merged_index_only() -> None:
    found: Found = {"a": _rows("a", ["c1"], 0)}
    merged = priorindex._whole(found)
    assert placement_rows_of(merged, "a") is found["a"]
    assert placement_rows_of(merged, "b") is None
    assert placement_rows_of(dict(merged), "a") is None


def test_the_content_given_follows_the_rows_by_identity() -> None:
    """Read again when the placement's rows are another object or the clusters differ; the
    very rows and clusters give the remembered tuple."""
    rows = _rows("a", ["c1", "c2"], 0)
    first = rollmemo._given("a", ("c1", "c2", "c3"), priorindex._whole({"a": rows}), None)
    assert first == ("c1-0", "c2-0", None)
    again = rollmemo._given("a", ("c1", "c2", "c3"), priorindex._whole({"a": rows}), None)
    assert again is first
    assert rollmemo._given("a", ("c2",), priorindex._whole({"a": rows}), None) == ("c2-0",)
    assert rollmemo._given("a", ("c1", "c2"), priorindex._whole({"a": rows}), None) == (
        "c1-0",
        "c2-0",
    )
    changed = _rows("a", ["c1", "c2"], 1)
    index = priorindex._whole({"a": changed})
    assert rollmemo._given("a", ("c1", "c2"), index, None) == ("c1-1", "c2-1")

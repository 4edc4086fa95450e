"""The kept part of the assembly (`assembleheld`): a rollout's kept rows and a held unit's
files are last pass's very objects while what they are made of is (so the index rows, index
files, composition and size totals skip them by identity), and made again, equal to a fresh
making, as soon as a previous entry, an apply strategy or a previous file is another object."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from gitfleet.api.output import object_path
from reconciler import assembleheld
from reconciler.binding import Binding
from reconciler.placement import PlacementPlan
from reconciler.stagememo import forget_stages
from reconciler.state import PlacementState, Snapshot
from reconciler.status import Cond


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


def _plan(strategy: dict[str, Any] | None = None) -> PlacementPlan:
    bindings = tuple(Binding(f"c{i}", "Bound", 0, 1, content="old") for i in range(4))
    state = PlacementState(
        key="web", resource_snapshots=(Snapshot(1, "h1"), Snapshot(2, "h2")), bindings=bindings
    )
    plan = PlacementPlan(key="web", state=state, scheduled=Cond("Scheduled", "True", "", ""))
    plan.apply_strategy = strategy or {"type": "ClientSideApply"}
    return plan


def _entry(cluster: str, n: int = 2) -> dict[str, Any]:
    objects = [{"kind": "ConfigMap", "name": f"m{i}", "file": f"m{i}.yaml"} for i in range(n)]
    return {"key": "web", "name": "web", "resourceSnapshotIndex": 1, "objects": objects}


def _index() -> dict[str, dict[str, dict[str, Any]]]:
    return {f"c{i}": {"web": _entry(f"c{i}")} for i in range(4)}


VIEWS: dict[str, Any] = {f"c{i}": object() for i in range(4)}


def test_kept_rows_are_last_pass_objects_while_their_entries_are() -> None:
    index = _index()
    first = assembleheld.rollout_kept(_plan(), index, VIEWS)
    assert sorted(first) == ["c0", "c1", "c2", "c3"]
    assert first["c1"] == {**index["c1"]["web"], "applyStrategy": {"type": "ClientSideApply"}}
    again = assembleheld.rollout_kept(_plan(), index, VIEWS)
    assert all(again[c] is first[c] for c in first)
    index["c2"] = {"web": _entry("c2")}  # an equal entry, another object
    third = assembleheld.rollout_kept(_plan(), index, VIEWS)
    assert third["c2"] is not first["c2"] and third["c2"] == first["c2"]
    assert third["c1"] is first["c1"]
    other = assembleheld.rollout_kept(_plan({"type": "ServerSideApply"}), index, VIEWS)
    assert other["c1"]["applyStrategy"] == {"type": "ServerSideApply"}


def _output(index: dict[str, dict[str, dict[str, Any]]]) -> dict[str, bytes]:
    out = {}
    for cluster, entries in index.items():
        for obj in entries["web"]["objects"]:
            out[object_path(cluster, "web", obj["file"])] = f"{cluster} {obj['name']}\n".encode()
    return out


def _held(
    held: dict[str, dict[str, dict[str, Any]]], output: dict[str, bytes]
) -> tuple[Any, Any, Any]:
    units: dict[str, Any] = {}
    parts: dict[str, Any] = {}
    sizes: dict[str, Any] = {}
    assembleheld.write_held(held, output, units, parts, sizes)
    return units.get("held/web"), parts["held/web"], sizes.get("held/web")


def test_a_held_unit_is_last_pass_objects_while_rows_and_files_are() -> None:
    index = _index()
    output = _output(index)
    rows = {c: e["web"] for c, e in index.items()}
    files, listed, sizes = _held({"web": rows}, output)
    assert files == output and listed == {c: [e] for c, e in rows.items()}
    assert sizes == {c: 2 * len(f"{c} m0\n") for c in rows}
    same = _held({"web": dict(rows)}, dict(output))  # other mappings, the very rows and bytes
    assert same[0] is files and same[1] is listed and same[2] is sizes
    path = object_path("c3", "web", "m1.yaml")
    moved = {**output, path: output[path][:-1] + b"\n"}  # equal bytes, another object
    redone = _held({"web": rows}, moved)
    assert redone[0] is not files and redone[0] == files
    swapped = {**rows, "c2": _entry("c2")}  # an equal row, another object
    listed_now = _held({"web": swapped}, moved)[1]
    assert listed_now is not redone[1] and listed_now["c2"][0] is swapped["c2"]
    fewer = dict(rows)
    fewer.pop("c0")
    shrunk = _held({"web": fewer}, moved)
    assert "c0" not in shrunk[1] and not any("/c0/" in p for p in shrunk[0])


def test_a_held_unit_missing_a_file_is_made_again() -> None:
    index = _index()
    output = _output(index)
    path = object_path("c0", "web", "m0.yaml")
    partial = {p: d for p, d in output.items() if p != path}
    rows = {c: e["web"] for c, e in index.items()}
    files, _, _ = _held({"web": rows}, partial)
    assert path not in files
    again, _, _ = _held({"web": rows}, output)  # the file is there now
    assert again[path] is output[path]


def _laid(cluster: str, strategy: dict[str, Any], n: int = 2) -> dict[str, Any]:
    """The row a layout made on `cluster` (its objects carry their hashes)."""
    entry = _entry(cluster, n)
    objects = [{**o, "hash": f"sha256:{o['name']}"} for o in entry["objects"]]
    return {**entry, "applyStrategy": strategy, "contentHash": "sha256:c", "objects": objects}


@pytest.mark.parametrize(
    ("laid", "same"),
    [
        (_laid("c1", {"type": "ClientSideApply"}), True),
        (_laid("c1", {"type": "ServerSideApply"}), False),  # another apply strategy
        (_laid("c1", {"type": "ClientSideApply"}, 1), False),  # other objects
        ({**_laid("c1", {"type": "ClientSideApply"}), "resourceSnapshotIndex": 2}, False),
    ],
)
def test_a_kept_cluster_takes_its_laid_out_row_when_it_lists_the_same(
    laid: dict[str, Any], same: bool
) -> None:
    index = _index()
    for c in index:
        index[c]["web"] = {**index[c]["web"], "contentHash": "sha256:c"}
    kept = assembleheld.rollout_kept(_plan(), index, VIEWS, {"c1": [laid], "c2": [laid, laid]})
    fresh = {**index["c1"]["web"], "applyStrategy": {"type": "ClientSideApply"}}
    assert (kept["c1"] is laid) is same
    if not same:
        assert kept["c1"] == fresh
    assert kept["c2"] is not laid  # two rows there: never taken
    again = assembleheld.rollout_kept(_plan(), index, VIEWS, {})
    assert again["c1"] is kept["c1"]  # the very entry again: last pass's row

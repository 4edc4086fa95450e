"""A ClusterIndex row leaves out the default apply strategy and every reader gets it back
(`gitfleet.api.indexrow`): the hub's writers (`cluster_index_doc`, `indexfiles`), its prior
readers (`priorstate.index_entries`, what `indexfiles` remembers of its own files), `gitfleet
status` (`outputread`) and the agent's model; an older row spelling the default reads the same."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.api.indexrow import DEFAULT_APPLY_STRATEGY, read_row, written_row
from gitfleet.api.output import (
    ClusterIndex,
    cluster_index_doc,
    cluster_index_path,
    placement_index_doc,
    placement_index_path,
)
from gitfleet.api.placement import ApplyStrategy
from gitfleet.outputread import status_from_files
from reconciler import indexfiles
from reconciler.output import yaml_bytes
from reconciler.priorparse import derive_own, load_bounded
from reconciler.priorstate import index_entries
from reconciler.stagememo import forget_stages

HASH = "sha256:" + "0" * 64
SSA = ApplyStrategy(type="ServerSideApply").model_dump(
    by_alias=True, exclude_none=True, mode="json"
)


def _row(strategy: dict[str, Any] | None, key: str = "app") -> dict[str, Any]:
    row: dict[str, Any] = {
        "key": key,
        "name": key,
        "resourceSnapshotIndex": 3,
        "policySnapshotIndex": 1,
        "contentHash": HASH,
    }
    if strategy is not None:
        row["applyStrategy"] = strategy
    return row


# The row as the hub holds it -> whether the file keeps `applyStrategy`, the row read back.
ROUND_TRIP = [
    ("default, as the placement stage dumps it", DEFAULT_APPLY_STRATEGY, False),
    ("ServerSideApply: every field kept", SSA, True),
    ("only whenToTakeOver differs", {**DEFAULT_APPLY_STRATEGY, "whenToTakeOver": "Never"}, True),
    ("force differs", {**DEFAULT_APPLY_STRATEGY, "serverSideApplyConfig": {"force": True}}, True),
    ("allowCoOwnership spelled out", {**DEFAULT_APPLY_STRATEGY, "allowCoOwnership": False}, True),
]


@pytest.mark.parametrize(("what", "strategy", "kept"), ROUND_TRIP, ids=[r[0] for r in ROUND_TRIP])
def test_written_row_omits_only_the_default_and_reads_back(
    what: str, strategy: dict[str, Any], kept: bool
) -> None:
    row = _row(dict(strategy))
    written = written_row({**row, "objects": [{"kind": "ConfigMap"}]})
    assert ("applyStrategy" in written) == kept, what
    assert "objects" not in written
    assert read_row(written) == row
    data = yaml_bytes(cluster_index_doc("c1", [{**row, "objects": []}]))
    assert (b"applyStrategy" in data) == kept
    assert index_entries(load_bounded(data)) == {"app": row}
    agent = ClusterIndex.model_validate(load_bounded(data)).placements[0]
    assert agent.apply_strategy == ApplyStrategy.model_validate(strategy)


def test_the_default_is_the_models() -> None:
    """One definition: the row's default is what the agent's model defaults to."""
    assert ApplyStrategy.model_validate(DEFAULT_APPLY_STRATEGY) == ApplyStrategy()
    bare = ClusterIndex.model_validate(cluster_index_doc("c1", [_row(None)]))
    assert bare.placements[0].apply_strategy == ApplyStrategy()


def _old_shape(rows: list[dict[str, Any]]) -> bytes:
    """A ClusterIndex as the hub wrote it before: every row's apply strategy spelled out."""
    doc = cluster_index_doc("c1", [])
    doc["placements"] = rows
    return yaml_bytes(doc)


def test_an_old_shape_index_reads_the_same() -> None:
    rows = [_row(dict(DEFAULT_APPLY_STRATEGY), "a"), _row(dict(SSA), "b")]
    old, new = _old_shape(rows), yaml_bytes(cluster_index_doc("c1", rows))
    assert old != new and new.count(b"applyStrategy") == 1
    assert index_entries(load_bounded(old)) == index_entries(load_bounded(new))
    assert index_entries(load_bounded(new)) == {"a": rows[0], "b": rows[1]}
    for data in (old, new):
        agent = ClusterIndex.model_validate(load_bounded(data))
        assert [p.apply_strategy for p in agent.placements] == [
            ApplyStrategy(),
            ApplyStrategy(type="ServerSideApply"),
        ]
        files = {
            cluster_index_path("c1"): data,
            "status/clusters/c1.yaml": b"kind: MemberCluster\n",
        }
        shown = status_from_files(files, "cluster", "c1", "")["index"]["placements"]
        assert [p["applyStrategy"] for p in shown] == [DEFAULT_APPLY_STRATEGY, SSA]


def test_index_files_remember_what_reading_them_gives() -> None:
    """The hub's own index files: the bytes leave the default out, and what it remembers of
    them (read by the next pass instead of parsing) is what parsing them gives."""
    forget_stages()
    rows = [
        {**_row(dict(DEFAULT_APPLY_STRATEGY), "a"), "objects": []},
        {**_row(dict(SSA), "b"), "objects": []},
    ]
    units: dict[str, Any] = {}
    indexfiles.write_indexes(["c1"], {"c1": rows}, units)
    files = dict(units["index/c1"])
    data = files[cluster_index_path("c1")]
    assert data == yaml_bytes(cluster_index_doc("c1", rows))
    assert data.count(b"applyStrategy") == 1
    assert files[placement_index_path("c1", "a")] == yaml_bytes(placement_index_doc("a", []))
    remembered = derive_own(files, cluster_index_path("c1"), "cluster-index", index_entries)
    assert remembered == index_entries(load_bounded(data))
    assert remembered["a"]["applyStrategy"] == DEFAULT_APPLY_STRATEGY

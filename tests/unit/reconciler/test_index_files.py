"""Index files patched row by row over a sequence of passes equal the whole documents, and
composing them patched equals their plain union (`reconciler.indexfiles`)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from gitfleet.api.output import (
    cluster_index_doc,
    cluster_index_path,
    placement_index_doc,
    placement_index_path,
)
from reconciler import indexfiles
from reconciler.output import yaml_bytes
from reconciler.stagememo import forget_stages
from reconciler.unitfiles import compose, keep_base

CLUSTERS = ["eu-1", "eu-2", "us-1"]
KEYS = [("", "a"), ("", "b"), ("ns", "c"), ("ms", "a"), ("", "z")]


def _row(namespace: str, name: str, version: int) -> dict[str, Any]:
    row: dict[str, Any] = {"key": f"{namespace}.{name}" if namespace else name, "name": name}
    if namespace:
        row["namespace"] = namespace
    objects = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": f"o{i}",
            "file": f"f{i}.yaml",
            "hash": "h",
        }
        for i in range(version % 3)
    ]
    return {**row, "contentHash": f"sha256:{version}", "objects": objects}


def _expected(
    index: Mapping[str, list[dict[str, Any]]], clusters: list[str] = CLUSTERS
) -> dict[str, bytes]:
    files = {}
    for cluster in clusters:
        rows = index.get(cluster, [])
        files[cluster_index_path(cluster)] = yaml_bytes(cluster_index_doc(cluster, rows))
        for row in rows:
            doc = placement_index_doc(row["key"], row.get("objects") or [])
            files[placement_index_path(cluster, row["key"])] = yaml_bytes(doc)
    return files


def _step(rng: random.Random, index: dict[str, list[dict[str, Any]]]) -> None:
    """One pass's change: a row changed, copied, added, removed, or the rows reordered."""
    cluster = rng.choice(CLUSTERS)
    rows = index.setdefault(cluster, [])
    what = rng.choice(["change", "copy", "add", "remove", "shuffle", "none", "rehash", "objects"])
    if what == "change" and rows:
        i = rng.randrange(len(rows))
        rows[i] = {**rows[i], "contentHash": f"sha256:x{rng.random()}"}
    elif what == "rehash" and rows:  # objects with other extra fields: the same files
        i = rng.randrange(len(rows))
        objects = [{**o, "hash": f"h{rng.random()}"} for o in rows[i]["objects"]]
        rows[i] = {**rows[i], "objects": objects}
    elif what == "objects" and rows:  # other objects, the same header
        i = rng.randrange(len(rows))
        count = rng.randrange(3)
        rows[i] = {**rows[i], "objects": _row("", "x", count)["objects"][::-1]}
    elif what == "copy" and rows:
        index[cluster] = [dict(r) for r in rows]
    elif what == "add":
        taken = {r["key"] for r in rows}
        free = [k for k in KEYS if _row(*k, 0)["key"] not in taken]
        if free:
            rows.append(_row(*rng.choice(free), rng.randrange(5)))
    elif what == "remove" and rows:
        rows.pop(rng.randrange(len(rows)))
    elif what == "shuffle":
        rng.shuffle(rows)


def test_patched_index_files_over_passes_equal_a_fresh_render() -> None:
    forget_stages()
    rng = random.Random(5)
    index: dict[str, list[dict[str, Any]]] = {"eu-1": [_row("", "a", 1), _row("ns", "c", 2)]}
    for _ in range(300):
        _step(rng, index)
        units: dict[str, Mapping[str, bytes]] = {}
        sizes = indexfiles.write_indexes(CLUSTERS, index, units)
        composed = compose(units)
        keep_base(composed, units)
        expected = _expected(index)
        assert composed.files == expected
        for cluster in CLUSTERS:
            unit = units["index/" + cluster]
            assert sizes[cluster] == sum(map(len, unit.values()))
    forget_stages()


def test_rows_in_the_very_tuples_of_the_last_pass_are_not_looked_at_again() -> None:
    """Rows handed as tuples, the very tuple again while a cluster's rows are the same objects
    (as `indexrows` hands them), clusters coming and going: the files equal a fresh render,
    and a pass that changed nothing returns the very sizes of the last."""
    forget_stages()
    rng = random.Random(7)
    index: dict[str, list[dict[str, Any]]] = {"eu-1": [_row("", "a", 1), _row("ns", "c", 2)]}
    tuples: dict[str, tuple[dict[str, Any], ...]] = {}
    last: dict[str, tuple[dict[str, Any], ...]] = {}
    last_sizes: dict[str, int] | None = None
    last_clusters: list[str] = []
    for _ in range(300):
        _step(rng, index)
        clusters = [c for c in CLUSTERS if c != "us-1" or rng.random() < 0.8]
        for cluster, rows in index.items():
            if cluster not in tuples or list(tuples[cluster]) != rows:
                tuples[cluster] = tuple(rows)
        handed = {c: t for c, t in tuples.items() if c in clusters}
        units: dict[str, Mapping[str, bytes]] = {}
        sizes = indexfiles.write_indexes(clusters, handed, units)
        composed = compose(units)
        keep_base(composed, units)
        assert composed.files == _expected({c: index.get(c, []) for c in clusters}, clusters)
        assert sizes == {c: sum(map(len, units["index/" + c].values())) for c in clusters}
        same = handed.keys() == last.keys() and all(handed[c] is last[c] for c in handed)
        if same and clusters == last_clusters:
            assert sizes is last_sizes
        last, last_sizes, last_clusters = handed, sizes, clusters
    forget_stages()


def test_unchanged_rows_keep_the_very_files() -> None:
    forget_stages()
    index = {"eu-1": [_row("", "a", 1), _row("ns", "c", 2)]}
    first: dict[str, Mapping[str, bytes]] = {}
    indexfiles.write_indexes(["eu-1"], index, first)
    again: dict[str, Mapping[str, bytes]] = {}
    copied = {"eu-1": [dict(r) for r in reversed(index["eu-1"])]}  # equal rows, other order
    indexfiles.write_indexes(["eu-1"], copied, again)
    assert again["index/eu-1"] is first["index/eu-1"]
    forget_stages()


def test_rows_repeating_a_key_are_laid_out_afresh() -> None:
    forget_stages()
    rows = [_row("", "a", 1), _row("", "a", 2)]
    for now in (rows, rows[:1], rows, []):
        units: dict[str, Mapping[str, bytes]] = {}
        indexfiles.write_indexes(["eu-1"], {"eu-1": now}, units)
        files = units["index/eu-1"]
        assert files[cluster_index_path("eu-1")] == yaml_bytes(cluster_index_doc("eu-1", now))
        paths = {cluster_index_path("eu-1")} | (
            {placement_index_path("eu-1", "a")} if now else set()
        )
        assert set(files) == paths
        if now:
            last = placement_index_doc("a", now[-1]["objects"])
            assert files[placement_index_path("eu-1", "a")] == yaml_bytes(last)
    forget_stages()

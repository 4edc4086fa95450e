"""`CleanLayouts`: a cluster's file paths and index row are last pass's very objects while its
manifest tuple (by identity), the index header and its apply strategy are unchanged, and made
again when any of them changes."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.api.limits import Limits
from gitfleet.api.output import object_path
from reconciler.layoutcells import Checked, CleanLayouts, checked_once
from reconciler.manifests import Manifest
from reconciler.stagememo import forget_stages

IDENT = {"apiVersion": "v1", "kind": "ConfigMap", "name": "a"}
MINE = (Manifest("configmap_a.yaml", b"kind: ConfigMap\n", IDENT, "sha256:1"),)
HEADER = {"key": "p", "name": "p", "resourceSnapshotIndex": 1, "policySnapshotIndex": 0}
STRATEGY = {"type": "ClientSideApply"}
CLEAN = ([m.entry for m in MINE], "sha256:c")


def _layout(cluster: str, mine: Any = MINE, header: Any = HEADER, strategy: Any = STRATEGY) -> Any:
    layouts = CleanLayouts("p")
    got = layouts.layout(cluster, mine, dict(header), dict(strategy), Checked(None, *CLEAN))
    layouts.done()
    return got


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    forget_stages()
    yield
    forget_stages()


def test_an_unchanged_cluster_gets_last_pass_objects() -> None:
    row, paths, size = _layout("eu")
    assert paths == (object_path("eu", "p", "configmap_a.yaml"),)
    assert size == len(b"kind: ConfigMap\n")
    assert row == {
        **HEADER,
        "applyStrategy": STRATEGY,
        "contentHash": "sha256:c",
        "objects": CLEAN[0],
    }
    again = _layout("eu")
    assert again[0] is row and again[1] is paths


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"mine": (Manifest("configmap_a.yaml", b"x\n", IDENT, "sha256:2"),)}, None),
        ({"mine": tuple(list(MINE))}, None),  # an equal tuple is another object: made again
        ({"header": {**HEADER, "resourceSnapshotIndex": 2}}, "resourceSnapshotIndex"),
        ({"strategy": {"type": "ServerSideApply"}}, "applyStrategy"),
    ],
)
def test_a_change_makes_the_layout_again(change: dict[str, Any], field: str | None) -> None:
    row = _layout("eu")[0]
    new_row, new_paths, new_size = _layout("eu", **change)
    assert new_row is not row
    if field is not None:
        assert new_row[field] != row[field]
    if "mine" in change:
        assert new_paths == (object_path("eu", "p", "configmap_a.yaml"),)
        assert new_size == len(change["mine"][0].data)


def test_another_cluster_is_laid_out_on_its_own() -> None:
    _layout("eu")
    _, paths, _ = _layout("us")
    assert paths == (object_path("us", "p", "configmap_a.yaml"),)


def test_a_tuple_is_checked_once_per_limits() -> None:
    first = checked_once(MINE, Limits())
    assert first.clean == CLEAN[0] and checked_once(MINE, Limits()) is first
    small = checked_once(MINE, Limits(max_object_bytes=4))
    assert small.clean is None and next(iter(small.rows(MINE)))[1] is not None
    assert [problem for _, problem in first.rows(MINE)] == [None]
    assert checked_once(tuple(list(MINE)), Limits()) is not first  # another tuple object

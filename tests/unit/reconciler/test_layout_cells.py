"""`CleanLayouts`: a cluster's file paths and index row are last pass's very objects while its
manifest tuple (by identity), the index header and its apply strategy are unchanged, and made
again when any of them changes."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.api.limits import Limits
from gitfleet.api.output import object_path
from reconciler.layoutcells import Checked, CleanLayouts, checked_once, clean_layout, next_round
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
    assert checked_once(tuple(list(MINE)), Limits()) is first  # the same files and hashes
    other = (Manifest("configmap_a.yaml", b"kind: ConfigMap\n", IDENT, "sha256:9"),)
    assert checked_once(other, Limits()) is not first  # another content hash


OTHER = (Manifest("configmap_a.yaml", b"kind: ConfigMap\n", IDENT, "sha256:9"),)


def test_a_check_by_content_lasts_three_passes() -> None:
    first = checked_once(MINE, Limits())
    for _ in range(2):  # a cluster laid out every other pass: kept in between
        next_round()
        checked_once(tuple(list(OTHER)), Limits())  # a pass that checked other manifests
        next_round()
        again = tuple(list(MINE))  # new manifest objects of the same content
        assert checked_once(again, Limits()) is first
    for _ in range(3):  # three passes that checked other manifests only
        next_round()
        checked_once(tuple(list(OTHER)), Limits())
    assert checked_once(tuple(list(MINE)), Limits()) is not first


def test_passes_that_check_nothing_keep_the_checks() -> None:
    """A pass whose placements were all reused checks no tuple: no round (`ThreeRounds`)."""
    first = checked_once(MINE, Limits())
    for _ in range(5):
        next_round()
    assert checked_once(tuple(list(MINE)), Limits()) is first


def test_a_layout_is_the_very_one_made_from_the_very_check_for_three_passes() -> None:
    checked = checked_once(MINE, Limits())
    first = clean_layout("p", "eu", MINE, dict(HEADER), dict(STRATEGY), checked)
    for _ in range(2):
        next_round()
    same = clean_layout("p", "eu", tuple(list(MINE)), dict(HEADER), dict(STRATEGY), checked)
    assert same is first
    assert clean_layout("p", "us", MINE, HEADER, STRATEGY, checked) is not first
    header = {**HEADER, "resourceSnapshotIndex": 2}
    other = clean_layout("p", "eu", MINE, header, STRATEGY, checked)
    assert other is not first and other[0]["resourceSnapshotIndex"] == 2
    strategy = {"type": "ServerSideApply"}
    moved = clean_layout("p", "eu", MINE, header, strategy, checked)
    assert moved[0]["applyStrategy"] == strategy
    again = Checked(None, *CLEAN)
    assert clean_layout("p", "eu", MINE, header, strategy, again)[0]["contentHash"] == "sha256:c"
    for _ in range(3):  # three passes that laid out another cluster only
        next_round()
        clean_layout("p", "us", MINE, header, strategy, again)
    assert clean_layout("p", "eu", MINE, header, strategy, again) is not moved


def test_a_placements_first_layouts_are_not_kept_for_manifests_of_the_same_content() -> None:
    """A placement's first layouts (a hub's first pass lays out every cluster) are not kept
    for new manifests of the same content; later ones are."""
    checked = Checked(None, *CLEAN)

    def laid(mine: Any) -> Any:
        layouts = CleanLayouts("p")
        got = layouts.layout("eu", mine, dict(HEADER), dict(STRATEGY), checked)
        layouts.done()
        next_round()
        return got

    first = laid(MINE)
    second = laid(tuple(list(MINE)))
    assert second == first and second is not first
    assert laid(tuple(list(MINE))) is second

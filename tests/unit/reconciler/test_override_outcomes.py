"""Override outcomes remembered across passes (`manifests.OverrideRenderer._outcome`): a new
snapshot of content seen before (an edit reverted) finds the objects that content made, the
very Manifests, without applying or serialising again; a failure is remembered with the
snapshot names its message reads, so it always names the current snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconciler import manifests
from reconciler.manifests import ClusterManifests, OverrideRenderer
from reconciler.override.snapshots import snapshot_name
from reconciler.select import build_index, select_resources
from reconciler.statetypes import Snapshot
from tests.unit.override.override_helpers import NS_SELECTOR, app_fleet, cro, index_of, rule, view

KEY = "ClusterResourceOverride/ns"
NOTES = {"who": "${MEMBER-CLUSTER-NAME}", "where": "${MEMBER-CLUSTER-LABEL-KEY-region}"}
VIEWS = [view("eu-1", region="eu"), view("eu-2", region="eu"), view("nowhere")]
"""Two clusters the override applies on, one whose missing label fails it."""


def _results(fleet: Any, index: int) -> list[ClusterManifests]:
    """Every cluster's result with the override named after snapshot `index`."""
    overrides = index_of(fleet)
    named = overrides.with_snapshots({KEY: (Snapshot(index, overrides.hashes()[KEY]),)})
    selection = select_resources(fleet.placements["app"], build_index(fleet.resources))
    placement = named.for_placement(fleet.placements["app"], selection.resources)
    names = {KEY: snapshot_name(KEY, index)}
    renderer = OverrideRenderer(placement, build_index(fleet.resources), names)
    return [renderer.for_cluster(selection, v) for v in VIEWS]


def test_a_new_snapshot_of_equal_content_finds_its_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifests._outcomes.clear()
    manifests._templates.clear()
    fleet = app_fleet(tmp_path, cro("ns", [NS_SELECTOR], [rule([_add(NOTES)])]))
    before = _results(fleet, 1)
    made: list[Any] = []
    real = manifests.with_name
    monkeypatch.setattr(manifests, "with_name", lambda t, n: made.append(n) or real(t, n))
    after = _results(fleet, 2)
    assert made == []  # nothing made again
    for was, now in zip(before[:2], after[:2], strict=True):
        assert was.manifests and now.manifests
        assert all(a is b for a, b in zip(was.manifests, now.manifests, strict=True))
        assert (was.cluster_overrides, now.cluster_overrides) == (("ns-1",), ("ns-2",))
    assert before[2].failures and after[2].failures
    assert all('Snapshot "ns-1"' in m for _, m in before[2].failures)
    assert all('Snapshot "ns-2"' in m for _, m in after[2].failures)
    assert _results(fleet, 1)[2].failures == before[2].failures  # the older name, remembered


def _add(value: dict[str, str]) -> dict[str, Any]:
    return {"op": "add", "path": "/metadata/annotations", "value": value}

"""What a pass `remember`s about the files it writes equals what the next pass would derive by
parsing them: the long-running hub and a restarted one see the same prior."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from benchmarks.hub_scenarios import _add_cluster, _annotate, _remove_cluster, _resource_of
from gitfleet.repo.workdir import WorkdirTree
from reconciler import (
    clusterrecord,
    clusterstatus,
    placememo,
    priorindex,
    priorparse,
    priorstate,
    state,
    statesnaps,
    statusdocs,
)
from reconciler import (
    stagememo as stages,
)
from reconciler.pass_ import reconcile
from reconciler.state import State
from renderers import load_fleet

NOW = datetime(2026, 1, 1, tzinfo=UTC)

READERS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "clusters/": ("cluster-index", priorindex._index_entries),
    "clusters/*/*/index.yaml": ("placement-index", priorindex.placement_objects),
    "status/placements/": (
        "placement-conditions",
        lambda doc: statusdocs._placement_conditions(statusdocs._status_of(doc)),
    ),
    "status/clusters/": (clusterstatus.TAG, clusterrecord.recorded_in),
    "state/placements/": ("placement-state", state.parse_state_head),
    "state/overrides.yaml": ("override-state", statesnaps._override_snapshots),
    "state/prior/": ("placement-prior", priorstate.parse_placement_prior),
}


def test_remembered_prior_equals_the_parsed_prior(tmp_path: Path) -> None:
    placememo.forget()  # every file emitted (and remembered) by these passes, whatever ran before
    write_fleet(build_fleet(FleetSize(12, 8, 40, 6), seed=3), tmp_path)
    first = reconcile(load_fleet(WorkdirTree(tmp_path)), State(), None, NOW)
    result = reconcile(load_fleet(WorkdirTree(tmp_path)), first.state, None, NOW)
    checked = set()
    for path, data in result.files.items():
        for prefix, (tag, derive) in READERS.items():
            if prefix.startswith("clusters/"):
                depth = 2 if prefix == "clusters/" else 3
                if path.count("/") != depth or not path.endswith("/index.yaml"):
                    continue
            elif not path.startswith(prefix):
                continue
            remembered = priorparse._derived[(tag, priorparse.blob_key(result.files, path))]
            assert derive(yaml.safe_load(data)) == remembered, path
            checked.add(tag)
    assert checked == {t for t, _ in READERS.values()}


def _kept_in_changed(before: Any, now: Any) -> int:
    """Rows that stayed the same object in placements whose rows were made again."""
    kept = 0
    for key, rows in now.by_placement.items():
        old = before.by_placement.get(key)
        if old is not None and old is not rows:
            kept += sum(1 for cluster, row in rows.items() if old.get(cluster) is row)
    return kept


def test_a_prior_index_read_pass_after_pass_keeps_unchanged_rows_and_equals_a_fresh_read(
    tmp_path: Path,
) -> None:
    """A cluster added binds a few placements: their other clusters' rows stay the very row
    objects; a resource edited gives its placement's rows new objects lists; every read equals
    the index read with nothing remembered."""
    placememo.forget()
    fleet = build_fleet(FleetSize(12, 8, 40, 6), seed=3)
    write_fleet(fleet, tmp_path)
    steps = [
        lambda: None,
        lambda: _add_cluster(tmp_path, 1),
        lambda: _annotate(_resource_of(fleet, ("platform",)))(tmp_path, 1),
        lambda: _remove_cluster(tmp_path, 1),
    ]
    state_, last, kept = State(), None, []
    for step in steps:
        step()
        result = reconcile(load_fleet(WorkdirTree(tmp_path)), state_, None, NOW)
        state_ = result.state
        read = priorindex.read_prior_index(result.files)
        if last is not None:
            kept.append(_kept_in_changed(last, read))
        stages.forget_stages()
        last = priorindex.read_prior_index(result.files)
        assert last == read
    assert kept[0] > 0 and kept[2] > 0  # the cluster added, then removed

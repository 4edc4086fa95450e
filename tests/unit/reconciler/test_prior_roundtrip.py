"""What a pass `remember`s about the files it writes equals what the next pass would derive by
parsing them: the long-running hub and a restarted one see the same prior."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo, priorconds, priorindex, priorparse, priorstate, state, statusdocs
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
    "status/clusters/": (
        "conditions",
        lambda doc: priorconds.conditions_of(statusdocs._status_of(doc).get("conditions")),
    ),
    "state/placements/": ("placement-state", state.parse_placement_state),
    "state/overrides.yaml": ("override-state", state._override_snapshots),
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

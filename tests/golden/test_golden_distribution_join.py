"""Golden fleet stepped through two passes: examples/replica-distribution (10 replicas over
subsets {6, 40%, rest} on 5 clusters), then cluster us-3 joins and the next pass starts from the
first pass's state. The second tree must equal `replica-distribution/join/expected/` byte for
byte (regenerate with `make golden-update`, then read the diff)."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from gitfleet.api import parse_time
from gitfleet.repo.workdir import WorkdirTree
from reconciler.pass_ import reconcile
from reconciler.state import State, read_state
from renderers import load_fleet
from tests.golden.test_golden import UPDATE, read_tree, write_tree

HERE = Path(__file__).parent
CASE = HERE / "replica-distribution"
EXAMPLE = HERE.parent.parent / "examples" / "replica-distribution"
NOW = parse_time("2026-11-21T10:00:00Z")


def _render(fleet_dir: Path, prior: State) -> dict[str, bytes]:
    result = reconcile(load_fleet(WorkdirTree(fleet_dir.resolve())), prior, None, NOW)
    assert not result.errors, result.errors
    return dict(result.files)


def test_cluster_joins_and_takes_from_nobodys_extra(tmp_path: Path) -> None:
    first = _render(EXAMPLE, State())
    fleet = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, fleet)
    shutil.copy(CASE / "join" / "us-3.yaml", fleet / "clusters" / "us-3.yaml")
    prior, problems = read_state(first)
    assert not problems
    second = _render(fleet, prior)
    status = yaml.safe_load(second["status/replicadistributions/shop/web.yaml"])["status"]
    us = next(s for s in status["subsetStatuses"] if s["name"] == "us")
    assert [(c["name"], c["replicas"]) for c in us["clusters"]] == [
        ("us-1", 1),
        ("us-2", 2),
        ("us-3", 1),
    ]
    expected_dir = CASE / "join" / "expected"
    if UPDATE:
        write_tree(expected_dir, second)
    assert second == read_tree(expected_dir)

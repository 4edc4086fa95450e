"""The fleet read from Git objects gives the same pass result as the fleet read from disk.

Every golden case fleet (and the quickstart) is committed into a fresh git repository; the pass
over `GitTree.open(repo, "HEAD")` must produce the same files and errors as the pass over
`WorkdirTree(dir)`, except that the Git pass records the source commit in state/.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitfleet.api import parse_time
from gitfleet.api.errors import FleetError
from gitfleet.load.statusdir import read_cluster_statuses
from gitfleet.repo.gitread import GitTree
from gitfleet.repo.tree import Tree
from gitfleet.repo.workdir import WorkdirTree
from reconciler.pass_ import PassResult, reconcile
from reconciler.state import State
from renderers import load_fleet
from tests.integration.fleet_helpers import (
    GOLDEN,
    NOW,
    QUICKSTART,
    commit_fleet,
    recorded_commits,
    without_commits,
)

CASES = sorted(p for p in GOLDEN.iterdir() if (p / "case.yaml").is_file())


def case_spec(case: Path) -> dict[str, Any]:
    spec = yaml.safe_load((case / "case.yaml").read_text()) or {}
    for tool in spec.get("requires", []):
        if shutil.which(tool) is None:
            pytest.skip(f"{case.name} needs {tool}, which is not on PATH")
    return spec


def run_pass(tree: Tree, case: Path, spec: dict[str, Any]) -> PassResult:
    statuses = None
    if "clusterStatus" in spec:
        statuses, errors = read_cluster_statuses(WorkdirTree(case / spec["clusterStatus"]))
        assert errors == []
    return reconcile(load_fleet(tree), State(), statuses, parse_time(spec.get("now", NOW)))


def error_lines(errors: tuple[FleetError, ...]) -> list[str]:
    return [str(e) for e in errors]


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_git_tree_and_workdir_give_the_same_output(case: Path, tmp_path: Path) -> None:
    spec = case_spec(case)
    source = (case / spec.get("fleet", "fleet")).resolve()
    head = commit_fleet(source, tmp_path / "repo")
    from_disk = run_pass(WorkdirTree(source), case, spec)
    with GitTree.open(tmp_path / "repo", "HEAD") as tree:
        from_git = run_pass(tree, case, spec)
    assert error_lines(from_git.errors) == error_lines(from_disk.errors)
    assert sorted(from_git.files) == sorted(from_disk.files)
    assert without_commits(from_git.files) == without_commits(from_disk.files)
    has_state = any(path.startswith("state/") for path in from_git.files)
    assert recorded_commits(from_git.files) == ({head} if has_state else set())
    assert recorded_commits(from_disk.files) == set()


def test_git_tree_reads_the_commit_not_the_checkout(tmp_path: Path) -> None:
    """Uncommitted edits are invisible to the Git pass and visible to the workdir pass."""
    repo = tmp_path / "repo"
    commit_fleet(QUICKSTART, repo)
    committed = reconcile(load_fleet(WorkdirTree(repo)), State(), None, parse_time(NOW))
    (repo / "placements/fleet-viewer.yaml").unlink()
    edited = reconcile(load_fleet(WorkdirTree(repo)), State(), None, parse_time(NOW))
    with GitTree.open(repo, "HEAD") as tree:
        from_git = reconcile(load_fleet(tree), State(), None, parse_time(NOW))
    assert "state/placements/fleet-viewer.yaml" not in edited.files
    assert without_commits(from_git.files) == without_commits(committed.files)

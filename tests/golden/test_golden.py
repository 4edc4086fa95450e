"""Golden fleets: each case folder holds an input fleet and the expected output tree.

`case.yaml` names the fleet folder (default `fleet/`), an optional cluster-status folder and the
pass clock. The rendered tree (plus `errors.txt`, the sorted error lines, and `warnings.txt`, the
notes and warnings of `gitfleet validate` when there are any) must equal `expected/`
byte for byte, and a second pass fed with the first pass's output must give identical bytes (a
no-op pass). Regenerate with `make golden-update` after an intended change, and review the diff.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from gitfleet.api import parse_time
from gitfleet.load.statusdir import read_cluster_statuses
from gitfleet.repo.workdir import WorkdirTree
from reconciler.pass_ import reconcile
from reconciler.state import State, read_state
from renderers import load_fleet

HERE = Path(__file__).parent
CASES = sorted(p for p in HERE.iterdir() if (p / "case.yaml").is_file())
UPDATE = os.environ.get("GITFLEET_UPDATE_GOLDEN") == "1"


def render_case(case: Path, prior: State) -> dict[str, bytes]:
    spec = yaml.safe_load((case / "case.yaml").read_text()) or {}
    for tool in spec.get("requires", []):
        if shutil.which(tool) is None:
            pytest.skip(f"{case.name} needs {tool}, which is not on PATH")
    fleet = load_fleet(WorkdirTree((case / spec.get("fleet", "fleet")).resolve()), lint=True)
    statuses = None
    if "clusterStatus" in spec:
        statuses, errors = read_cluster_statuses(WorkdirTree(case / spec["clusterStatus"]))
        assert not errors, errors
    result = reconcile(fleet, prior, statuses, parse_time(spec.get("now", "2026-11-21T10:00:00Z")))
    files = dict(result.files)
    files["errors.txt"] = "".join(f"{e}\n" for e in result.errors).encode()
    lines = [f"note: {n}\n" for n in fleet.notes] + [f"warning: {w}\n" for w in fleet.warnings]
    if lines:
        files["warnings.txt"] = "".join(lines).encode()
    return files


def read_tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    for old in root.rglob("*"):
        if old.is_file():
            old.unlink()
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden_fleet(case: Path) -> None:
    actual = render_case(case, State())
    expected_dir = case / "expected"
    if UPDATE:
        write_tree(expected_dir, actual)
    expected = read_tree(expected_dir)
    assert sorted(actual) == sorted(expected), "the set of output files differs"
    for path in sorted(expected):
        assert actual[path] == expected[path], f"{case.name}: {path} differs"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_second_pass_is_byte_identical(case: Path) -> None:
    first = render_case(case, State())
    prior, problems = read_state({k: v for k, v in first.items() if k != "errors.txt"})
    assert not problems
    second = render_case(case, prior)
    assert second == first


def test_there_are_at_least_six_golden_fleets() -> None:
    assert len(CASES) >= 6

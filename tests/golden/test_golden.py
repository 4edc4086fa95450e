"""Golden fleets: each case folder holds an input fleet and the expected output tree.

`case.yaml` names the fleet folder (default `fleet/`), an optional cluster-status folder, an
optional agent-reports folder (`reports:`, files as agents push them, as `gitfleet render
--reports`) and the pass clock. The rendered tree (plus `errors.txt`, the sorted error lines, and
`warnings.txt`, the notes and warnings of `gitfleet validate` when there are any) must equal
`expected/` byte for byte, and a second pass fed with the first pass's output must give identical
bytes (a no-op pass). Regenerate with `make golden-update` after an intended change, and review
the diff.

Stepped cases (a rollout through several passes) add `steps:`, each `{name, now, reports,
fleet}` (`reports` defaults to `steps/<name>/reports`, `fleet` to the case's fleet): step i starts
from step i-1's output (the first from the base pass) and its tree must equal
`steps/<name>/expected/`. Each step rendered twice from the same prior gives identical bytes.
Step reports are what agents that applied their index would push; `make_step_reports.py` writes
them from the previous step's tree, and `--refresh CASE` rewrites them if the output format
changes the content hashes (`assert_reports_follow` fails with that hint).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitfleet.api import parse_time
from gitfleet.cli.app import read_reports_dir
from gitfleet.load.statusdir import read_cluster_statuses
from gitfleet.repo.workdir import WorkdirTree
from reconciler import stagememo
from reconciler.pass_ import reconcile
from reconciler.priorindex import given_content, read_prior_index
from reconciler.stagememo import StageMemo, single_pass
from reconciler.state import State, read_state
from renderers import load_fleet

HERE = Path(__file__).parent
CASES = sorted(p for p in HERE.iterdir() if (p / "case.yaml").is_file())
UPDATE = os.environ.get("GITFLEET_UPDATE_GOLDEN") == "1"


def case_spec(case: Path) -> dict[str, Any]:
    spec: dict[str, Any] = yaml.safe_load((case / "case.yaml").read_text()) or {}
    for tool in spec.get("requires", []):
        if shutil.which(tool) is None:
            pytest.skip(f"{case.name} needs {tool}, which is not on PATH")
    return spec


def render_case(
    case: Path, prior: State, step: Mapping[str, Any] | None = None
) -> dict[str, bytes]:
    """The base pass of `case`, or (with `step`, one entry of `steps:`) one of its steps."""
    spec = case_spec(case)
    if step is not None:
        reports = step.get("reports", f"steps/{step['name']}/reports")
        spec = {**spec, "reports": reports, **{k: step[k] for k in ("now", "fleet") if k in step}}
    fleet = load_fleet(WorkdirTree((case / spec.get("fleet", "fleet")).resolve()), lint=True)
    statuses = None
    if "clusterStatus" in spec:
        statuses, errors = read_cluster_statuses(WorkdirTree(case / spec["clusterStatus"]))
        assert not errors, errors
    reports = None
    if "reports" in spec:
        reports, problems = read_reports_dir(case / spec["reports"])
        assert not problems, problems
    now = parse_time(spec.get("now", "2026-11-21T10:00:00Z"))
    result = reconcile(fleet, prior, statuses, now, reports)
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


STEPPED = [c for c in CASES if (yaml.safe_load((c / "case.yaml").read_text()) or {}).get("steps")]


def next_prior(files: Mapping[str, bytes]) -> State:
    prior, problems = read_state({k: v for k, v in files.items() if not k.endswith(".txt")})
    assert not problems
    return prior


def assert_reports_follow(
    case: Path, step: Mapping[str, Any], previous: Mapping[str, bytes]
) -> None:
    """A step's reports name the content the previous step gave each cluster (an agent that has
    not pulled a removal yet may still report it); otherwise the rollout would silently stall.
    Steps that mean to show stale reports say `staleReports: true`."""
    given = read_prior_index(previous)
    reports, _ = read_reports_dir(case / step.get("reports", f"steps/{step['name']}/reports"))
    for cluster, rep in sorted((reports or {}).items()):
        for entry in rep.placements:
            had = given.get(cluster, {}).get(entry.key)
            assert had is None or given_content(had) == entry.content_hash, (
                f"{case.name} {step['name']}: the report of {cluster} names content the hub "
                f"never gave it for {entry.key}; if the output format changed the content "
                f"hashes, run: python -m tests.golden.make_step_reports --refresh {case}"
            )


@pytest.mark.parametrize("case", STEPPED, ids=lambda p: p.name)
def test_golden_steps(case: Path) -> None:
    """Each step's tree, from the previous step's output; rendering a step twice is identical."""
    files = render_case(case, State())
    for step in case_spec(case)["steps"]:
        if not step.get("staleReports"):
            assert_reports_follow(case, step, files)
        prior = next_prior(files)
        files = render_case(case, prior, step)
        assert render_case(case, prior, step) == files, f"{step['name']}: not reproducible"
        expected_dir = case / "steps" / step["name"] / "expected"
        if UPDATE:
            write_tree(expected_dir, files)
        expected = read_tree(expected_dir)
        assert sorted(files) == sorted(expected), f"{step['name']}: the set of files differs"
        for path in sorted(expected):
            assert files[path] == expected[path], f"{case.name} {step['name']}: {path} differs"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_one_pass_without_stage_memos_gives_the_same_bytes(case: Path) -> None:
    """`stagememo.single_pass` (`gitfleet validate`, `render`, `explain`): no stage keeps a
    result, and every pass, each step from the expected tree before it, is byte for byte the
    expected tree (a stage never reads back in a pass what it put in that pass)."""
    runs: list[tuple[Mapping[str, Any] | None, Path]] = [(None, case / "expected")]
    runs += [(s, case / "steps" / s["name"] / "expected") for s in case_spec(case).get("steps", [])]
    prior = State()
    for step, expected_dir in runs:
        expected = read_tree(expected_dir)
        with single_pass():
            files = render_case(case, prior, step)
            kept = [m for m in stagememo._memos if isinstance(m, StageMemo) and m._entries]
        assert not kept
        assert files == expected, f"{case.name} {step['name'] if step else 'base'}: differs"
        prior = next_prior(expected)


def test_there_are_at_least_six_golden_fleets() -> None:
    assert len(CASES) >= 6

"""Rollback inputs (`reconciler.history`): which older snapshots the shells must read, the pin
annotation's rules, and how an unreadable commit becomes that snapshot's error only."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from gitfleet.load.model import FleetSnapshot
from gitfleet.repo.workdir import WorkdirTree
from reconciler.history import (
    PIN_ANNOTATION,
    PIN_FIELD,
    SnapshotRef,
    SourceUnavailable,
    collect_sources,
    needed_snapshots,
)
from reconciler.pass_ import reconcile
from reconciler.state import PlacementState, Snapshot, State, read_state
from renderers import load_fleet
from tests.helpers.fleetfiles import (
    format_cluster,
    format_pin,
    format_placement,
    format_run,
    write_tree,
)

NOW = datetime(2026, 11, 25, 10, tzinfo=UTC)
HISTORY = (Snapshot(0, "h0", "c0"), Snapshot(1, "h1", "c1"), Snapshot(2, "h2", None))


def _pin(value: str) -> str:
    return format_pin(PIN_ANNOTATION, value)


def _fleet(root: Path, runs: dict[str, str | None], pin: str | None = None) -> FleetSnapshot:
    files = {"clusters/c1.yaml": format_cluster("c1")}
    for name in ("app", "web"):
        files[f"resources/{name}.yaml"] = (
            f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n"
        )
    files["placements/app.yaml"] = format_placement("app", "External")
    annotations = _pin(pin) if pin is not None else ""
    files["placements/web.yaml"] = format_placement("web", "RollingUpdate", annotations)
    docs = [format_run(n, strategy="s", index=i or None, state=None) for n, i in runs.items()]
    if docs:
        files["rollouts/runs.yaml"] = "---\n".join(docs)
    write_tree(root, files)
    return load_fleet(WorkdirTree(root))


def _run_status(name: str, index: str, succeeded: bool = False) -> bytes:
    conds = [{"type": "Succeeded", "status": "True", "reason": "UpdateRunSucceeded"}]
    status = {"resourceSnapshotIndexUsed": index, "conditions": conds if succeeded else []}
    return yaml.safe_dump({"metadata": {"name": name}, "status": status}).encode()


def _prior(output: dict[str, bytes] | None = None) -> State:
    placements = {k: PlacementState(key=k, resource_snapshots=HISTORY) for k in ("app", "web")}
    return State(placements=placements, output=output or {})


NEEDED = [
    ("nothing asks", {}, None, {}, []),
    ("a run's spec index", {"r": "0"}, None, {}, [("app", 0, "c0")]),
    ("the latest is listed too", {"r": "2"}, None, {}, [("app", 2, None)]),
    ("an index not in the history", {"r": "7"}, None, {}, []),
    (
        "the index frozen in a run's status",
        {"r": None},
        None,
        {"status/updateruns/r.yaml": _run_status("r", "1")},
        [("app", 1, "c1")],
    ),
    (
        "a finished run deploys nothing",
        {"r": "0"},
        None,
        {"status/updateruns/r.yaml": _run_status("r", "0", succeeded=True)},
        [],
    ),
    ("a pin", {}, "1", {}, [("web", 1, "c1")]),
    ("a bad pin", {}, "one", {}, []),
    (
        "sorted, each pair once",
        {"b": "1", "a": "0", "c": "1"},
        "0",
        {},
        [("app", 0, "c0"), ("app", 1, "c1"), ("web", 0, "c0")],
    ),
]


@pytest.mark.parametrize(
    ("runs", "pin", "output", "expected"),
    [row[1:] for row in NEEDED],
    ids=[row[0] for row in NEEDED],
)
def test_needed_snapshots(
    tmp_path: Path,
    runs: dict[str, str | None],
    pin: str | None,
    output: dict[str, bytes],
    expected: list[tuple[str, int, str | None]],
) -> None:
    fleet = _fleet(tmp_path, runs, pin)
    needed = needed_snapshots(fleet, _prior(output))
    assert [(r.placement, r.index, r.commit) for r in needed] == expected


PIN_ERRORS = [
    ("not an integer", "x", "RollingUpdate", "must be a resource snapshot index"),
    ("negative", "-1", "RollingUpdate", "must be a resource snapshot index"),
    ("unknown", "7", "RollingUpdate", "resource snapshot index 7 does not exist or was pruned"),
    ("External", "0", "External", "applies to RollingUpdate placements only"),
]


@pytest.mark.parametrize(
    ("value", "strategy", "message"),
    [row[1:] for row in PIN_ERRORS],
    ids=[row[0] for row in PIN_ERRORS],
)
def test_pin_errors_name_file_line_and_annotation(
    tmp_path: Path, value: str, strategy: str, message: str
) -> None:
    _fleet(tmp_path, {})
    first = reconcile(load_fleet(WorkdirTree(tmp_path)), State(), None, NOW)
    write_tree(tmp_path, {"placements/web.yaml": format_placement("web", strategy, _pin(value))})
    prior, _ = read_state(first.files)
    result = reconcile(load_fleet(WorkdirTree(tmp_path)), prior, None, NOW)
    (error,) = [e for e in result.errors if e.field == PIN_FIELD]
    assert (error.file, error.line) == ("placements/web.yaml", 1)
    assert message in error.message and "keeps its previous output" in error.message
    assert PIN_FIELD == 'metadata.annotations["gitfleet.io/resource-snapshot-index"]'
    kept = {p: d for p, d in first.files.items() if p.startswith("clusters/")}
    assert {p: result.files[p] for p in kept} == kept, "the pinned placement is held"


def test_an_unreadable_commit_is_that_snapshots_error_only(tmp_path: Path) -> None:
    fleet = _fleet(tmp_path, {})
    opened: list[str] = []

    def open_at(commit: str) -> FleetSnapshot:
        opened.append(commit)
        if commit == "gone":
            raise SourceUnavailable("is not in this repository")
        return fleet

    refs = [
        SnapshotRef("app", 0, "h0", "gone"),
        SnapshotRef("app", 1, "h1", "gone"),
        SnapshotRef("web", 0, "h-other", "here"),
        SnapshotRef("web", 1, "h1", None),
    ]
    sources = collect_sources(refs, open_at)
    assert opened == ["gone", "here"], "each commit is opened once"
    assert sources.found == {}
    assert sources.missing[("app", 0)] == (
        "resource snapshot index 0 of placement `app` was recorded at commit gone, which is "
        "not in this repository"
    )
    assert "gives other resources than the snapshot" in sources.missing[("web", 0)]
    assert "has no recorded source commit" in sources.missing[("web", 1)]
    assert set(sources.for_placement("app")) == {0, 1}

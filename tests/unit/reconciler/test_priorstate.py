"""`state/prior/` (reconciler.priorstate): a restarted hub reads the index rows and condition
times from state/ and gets exactly what parsing every index and status file gives; an output
without the records (or with a broken one) is read the old way."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.api.output import PRIOR_STATE_PREFIX, placement_prior_path
from gitfleet.load.yamlio import dump_yaml
from gitfleet.repo.workdir import WorkdirTree
from reconciler import priorindex, priorparse, priorstate, statusdocs
from reconciler import state as state_module
from reconciler.pass_ import PassResult, reconcile
from reconciler.priorindex import parsed_prior_index, read_prior_index, recorded_prior_index
from reconciler.priorstate import (
    IndexRecord,
    implied_row,
    prior_files,
    read_placement_prior,
    status_conditions,
)
from reconciler.stagememo import forget_stages
from reconciler.state import Binding, State, read_state, state_files

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def with_records(result: PassResult) -> dict[str, bytes]:
    """The pass's output with `state/prior/` written from it (what `pass_` gives `state_files`
    its new output for)."""
    state = State(result.state.placements, overrides=result.state.overrides)
    return {**result.files, **state_files(state, result.files)}


def without_records(files: dict[str, bytes]) -> dict[str, bytes]:
    """The output as a hub before `state/prior/` wrote it."""
    return {p: d for p, d in files.items() if not p.startswith(PRIOR_STATE_PREFIX)}


def cold_caches() -> None:
    """A fresh process: nothing derived or emitted yet."""
    priorparse._derived.clear()
    priorstate._blocks.clear()
    state_module._emitted.clear()


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Path]:
    write_fleet(build_fleet(FleetSize(12, 8, 40, 6), seed=3), tmp_path)
    yield tmp_path
    cold_caches()


def _restart(fleet: Path, output: dict[str, bytes], now: datetime) -> PassResult:
    cold_caches()
    prior, problems = read_state(output)
    assert problems == []
    return reconcile(load(fleet), prior, None, now)


def load(fleet: Path):  # type: ignore[no-untyped-def]
    from renderers import load_fleet

    return load_fleet(WorkdirTree(fleet))


def _edit_one_resource(fleet: Path) -> None:
    path = next(p for p in sorted((fleet / "resources").rglob("*.yaml")) if "configmap" in p.name)
    path.write_text(path.read_text().replace("\ndata:\n", "\ndata:\n  edited: 'yes'\n", 1))


def test_records_give_the_parsed_index_and_conditions(fleet: Path) -> None:
    output = with_records(reconcile(load(fleet), State(), None, NOW))
    records = {p: d for p, d in output.items() if p.startswith(PRIOR_STATE_PREFIX)}
    assert records
    for data in records.values():  # written part by part: the same bytes as the whole document
        assert dump_yaml(yaml.safe_load(data)).encode() == data
    for parse in (False, True):  # remembered by the writer, then parsed from the bytes
        if parse:
            cold_caches()
        recorded = recorded_prior_index(output)
        parsed = {c: e for c, e in parsed_prior_index(output).items() if e}
        assert recorded == parsed
        assert list(recorded) == list(parsed)  # the index files' order
        assert all(list(recorded[c]) == list(parsed[c]) for c in parsed)
        prior, _ = read_state(output)
        for key in prior.placements:
            record = read_placement_prior(output, key)
            assert record is not None and record.conditions is not None
            assert record.conditions == status_conditions(output, key), key


def test_a_restart_from_state_equals_a_restart_that_parses_everything(
    fleet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = reconcile(load(fleet), State(), None, NOW)
    recorded, plain = with_records(first), without_records(first.files)
    _edit_one_resource(fleet)
    later = NOW + timedelta(minutes=5)
    from_files = _restart(fleet, plain, later)
    with monkeypatch.context() as patched:  # the restart from state/ parses no index or status
        for module, name in ((priorindex, "parsed_prior_index"), (statusdocs, "status_conditions")):
            patched.setattr(module, name, _refused)
        from_state = _restart(fleet, recorded, later)
    assert without_records(from_state.files) == without_records(from_files.files)
    assert with_records(from_state) == with_records(from_files)
    assert from_state.files != first.files  # the edit went out
    assert recorded_prior_index(plain) is None  # the older output took the old path


def _refused(*_args: object) -> None:
    raise AssertionError("parsed the previous output's index or status files")


def test_an_output_without_records_is_read_from_its_index_files(fleet: Path) -> None:
    output = without_records(reconcile(load(fleet), State(), None, NOW).files)
    cold_caches()
    assert recorded_prior_index(output) is None
    assert read_prior_index(output) == parsed_prior_index(output)
    assert all(read_placement_prior(output, k) is None for k in read_state(output)[0].placements)


def test_one_broken_or_partial_record_falls_back_to_the_files(fleet: Path) -> None:
    output = with_records(reconcile(load(fleet), State(), None, NOW))
    key = sorted(read_state(output)[0].placements)[0]
    path = placement_prior_path(key)
    for broken in (b"index: [unclosed\n", dump_yaml({"kind": "Other"}).encode()):
        cold_caches()
        damaged = {**output, path: broken}
        assert recorded_prior_index(damaged) is None
        assert read_prior_index(damaged) == parsed_prior_index(damaged)
    doc = yaml.safe_load(output[path])
    del doc["index"], doc["conditions"]
    cold_caches()
    partial = {**output, path: dump_yaml(doc).encode()}
    assert recorded_prior_index(partial) is None
    record = read_placement_prior(partial, key)
    assert record is not None and record.index is None and record.conditions is None


def test_a_row_the_binding_does_not_imply_is_written_whole() -> None:
    header = {"name": "web", "applyStrategy": {"type": "ClientSideApply"}}
    bound = Binding("a", "Bound", 0, resource_index=1, content="sha256:" + "a" * 64)
    moved = Binding("b", "Bound", 0, resource_index=2, content="sha256:" + "b" * 64)
    a, b = implied_row("web", header, bound) or {}, implied_row("web", header, moved) or {}
    rows: dict[str, Mapping[str, Any]] = {"a": a, "b": {**b, "resourceSnapshotIndex": 1}, "c": a}
    files = prior_files({"web": (bound, moved)}, {"web": rows}, {})
    doc = yaml.safe_load(files[placement_prior_path("web")])
    assert doc["index"]["clusters"] == ["a"]  # b's snapshot differs, c has no binding
    assert [e["cluster"] for e in doc["index"]["entries"]] == ["b", "c"]
    cold_caches()
    record = read_placement_prior(files, "web")
    assert record is not None and record.index is not None
    assert priorstate.implied_rows("web", record.index, (bound, moved)) == rows


def test_rows_of_a_placement_without_state_leave_the_index_unrecorded() -> None:
    files = prior_files({"web": ()}, {"web": {}, "gone": {"a": {"key": "gone"}}}, {})
    assert "index" not in yaml.safe_load(files[placement_prior_path("web")])


def test_a_record_naming_a_cluster_without_binding_content_is_refused() -> None:
    record = IndexRecord(header={"name": "web"}, clusters=("a",), entries=())
    with pytest.raises(KeyError):
        priorstate.implied_rows("web", record, ())
    with pytest.raises(ValueError):
        priorstate.implied_rows("web", record, (Binding("a", "Scheduled", 0),))


def _steps() -> Iterator[tuple[tuple[Binding, ...], dict[str, Mapping[str, Any]]]]:
    """A placement's bindings and index rows pass after pass: rows moved one at a time, the
    most common header changing, a binding changing under an unchanged row, clusters gone."""
    strategy = {"type": "ClientSideApply"}
    header = {"name": "web", "applyStrategy": strategy}
    bindings = tuple(
        Binding(c, "Bound", 0, resource_index=1, content=f"sha256:{c * 64}") for c in "abcde"
    )
    rows = {b.cluster: implied_row("web", header, b) or {} for b in bindings}
    yield bindings, dict(rows)
    rows["b"] = {**rows["b"], "resourceSnapshotIndex": 0}
    yield bindings, dict(rows)
    other = {"name": "web", "applyStrategy": {"type": "ServerSideApply"}}
    for c in "cde":  # the other header becomes the most common one
        rows[c] = implied_row("web", other, bindings["abcde".index(c)]) or {}
        yield bindings, dict(rows)
    moved = (
        *bindings[:3],
        Binding("d", "Bound", 0, resource_index=2, content="sha256:" + "f" * 64),
    )
    yield (*moved, bindings[4]), dict(rows)
    del rows["a"]
    yield bindings[1:], dict(rows)
    yield bindings[1:], dict(rows)


def test_index_sections_from_the_last_pass_equal_fresh_ones() -> None:
    """Each pass's record reusing the last pass's per-cluster parts equals a fresh record."""
    steps = list(_steps())
    seen = set()
    for i, (bindings, rows) in enumerate(steps):
        for earlier, earlier_rows in steps[:i]:  # the memos as a running hub has them
            prior_files({"web": earlier}, {"web": earlier_rows}, {})
        files = prior_files({"web": bindings}, {"web": rows}, {})
        forget_stages()
        priorstate._blocks.clear()
        assert prior_files({"web": bindings}, {"web": rows}, {}) == files, i
        forget_stages()
        priorstate._blocks.clear()
        seen.add(files[placement_prior_path("web")])
    assert len(seen) >= 6

"""`rollfacts.facts`: what the rollout key reads about a placement's clusters, carried over from
the pass before. After any sequence of passes it equals a fresh read - when a bound cluster's
report changed, appeared or went, when a cluster left the fleet or became assumed ready, when the
bindings changed, when reports appear at all - and a pass where none of the placement's
clusters changed reads nothing and hands back the very same objects. Through the whole pass:
a warm pass where one agent's report changed gives the bytes of a cold pass."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gitfleet.api import format_time
from gitfleet.api.report import AgentReport
from gitfleet.repo.workdir import WorkdirTree
from reconciler import rollfacts, rollmemo
from reconciler.pass_ import reconcile
from reconciler.placememo import forget
from reconciler.rollview import EntryTable, report_entries
from reconciler.stagememo import forget_stages
from reconciler.state import read_state
from renderers import load_fleet
from tests.unit.rollout.test_pass_rollout import CLUSTERS, write_fleet
from tests.unit.rollout.test_pass_rollout import report as agent_report

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
H = "sha256:"


def _report(cluster: str, *keys: str, hash_: str = "1") -> AgentReport:
    return AgentReport.model_validate(
        {
            "apiVersion": "gitfleet.io/v1alpha1",
            "kind": "AgentReport",
            "metadata": {"name": cluster},
            "heartbeatTime": format_time(NOW),
            "agentVersion": "test",
            "placements": [
                {"key": k, "name": k, "resourceSnapshotIndex": 1, "contentHash": H + hash_ * 64}
                for k in keys
            ],
        }
    )


@dataclass(frozen=True)
class Pass:
    """What `facts` reads in one pass (the reports become an `EntryTable`)."""

    names: tuple[str, ...]
    reports: Mapping[str, AgentReport]
    clusters: frozenset[str]
    assume: frozenset[str]


REPORTS = {"c1": _report("c1", "web"), "c2": _report("c2", "web", "api"), "c9": _report("c9")}
BASE = Pass(("c1", "c2", "c3"), REPORTS, frozenset({"c1", "c2", "c3", "c9"}), frozenset({"c3"}))


def _swap(p: Pass, cluster: str, report: AgentReport | None) -> Pass:
    reports = {k: v for k, v in p.reports.items() if k != cluster}
    return replace(p, reports=reports if report is None else {**reports, cluster: report})


CHANGES: list[tuple[str, Callable[[Pass], Pass]]] = [
    ("nothing", lambda p: p),
    ("bound cluster's report", lambda p: _swap(p, "c1", _report("c1", "web", hash_="2"))),
    ("bound cluster's report, equal", lambda p: _swap(p, "c2", _report("c2", "web", "api"))),
    ("bound cluster's report gone", lambda p: _swap(p, "c2", None)),
    ("bound cluster's first report", lambda p: _swap(p, "c3", _report("c3", "web"))),
    ("bound cluster reports other", lambda p: _swap(p, "c1", _report("c1", "api"))),
    ("other cluster's report", lambda p: _swap(p, "c9", _report("c9", "web"))),
    ("no reports at all", lambda p: replace(p, reports={})),
    ("bound cluster left", lambda p: replace(p, clusters=p.clusters - {"c2"})),
    ("other cluster left", lambda p: replace(p, clusters=p.clusters - {"c9"})),
    ("bound cluster assumed", lambda p: replace(p, assume=p.assume | {"c1"})),
    ("bound cluster not assumed", lambda p: replace(p, assume=p.assume - {"c3"})),
    ("other cluster assumed", lambda p: replace(p, assume=p.assume | {"c9"})),
    ("cluster bound", lambda p: replace(p, names=(*p.names, "c9"))),
    ("cluster unbound", lambda p: replace(p, names=p.names[:2])),
    ("equal sets, new objects", lambda p: replace(p, clusters=frozenset(p.clusters))),
]


def _fresh(key: str, p: Pass, entries: Mapping[str, Any]) -> tuple[Any, ...]:
    named = frozenset(p.names)
    reports = tuple(entries.get(c, {}).get(key) for c in p.names) if entries else ()
    declared = p.clusters.issuperset(named) or named.difference(p.clusters)
    return reports, declared, p.assume.intersection(named)


def _read(p: Pass, entries: Mapping[str, Any] | None = None) -> rollfacts.Facts:
    table = report_entries(p.reports) if entries is None else entries
    return rollfacts.facts("web", p.names, frozenset(p.names), table, p.clusters, p.assume)


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


@pytest.mark.parametrize(("first", "second"), [(a, b) for a in CHANGES for b in CHANGES])
def test_facts_after_two_changes_equal_a_fresh_read(
    first: tuple[str, Callable[[Pass], Pass]], second: tuple[str, Callable[[Pass], Pass]]
) -> None:
    passes = [BASE, first[1](BASE)]
    passes.append(second[1](passes[-1]))
    for p in passes:
        got = _read(p)
        want = _fresh("web", p, report_entries(p.reports))
        assert (got.reports, got.declared, got.assumed) == want


def test_from_no_reports_to_reports_of_other_clusters_only() -> None:
    """No entries at all key as (); entries of other clusters key one None per binding."""
    quiet = replace(BASE, reports={})
    assert _read(quiet).reports == ()
    other = replace(BASE, reports={"c9": REPORTS["c9"]})
    assert _read(other).reports == (None, None, None)


def test_an_unchanged_pass_reads_nothing_and_gives_the_same_objects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = _read(BASE)
    reads: list[tuple[str, ...]] = []
    real = rollfacts._read

    def counting(key: str, names: tuple[str, ...], *rest: Any) -> rollfacts.Facts:
        reads.append(names)
        return real(key, names, *rest)

    monkeypatch.setattr(rollfacts, "_read", counting)
    other = _swap(BASE, "c9", _report("c9", "web"))  # a cluster this placement does not bind
    again = _read(replace(other, clusters=frozenset(BASE.clusters), assume=BASE.assume | {"c9"}))
    assert reads == [] and again is first
    changed = _read(_swap(other, "c2", _report("c2", "web", hash_="2")))
    assert reads == [BASE.names] and changed.reports[1] is not first.reports[1]


def test_a_placement_not_read_for_a_pass_reads_its_facts_again() -> None:
    """Its facts hold at the epoch two passes back: the change in between is not missed."""
    _read(BASE)
    between = _swap(BASE, "c1", _report("c1", "web", hash_="2"))
    table = report_entries(between.reports)
    rollfacts.facts("api", ("c2",), frozenset({"c2"}), table, between.clusters, between.assume)
    after = replace(between, clusters=frozenset(between.clusters))
    got = _read(after)
    assert got.reports == _fresh("web", after, report_entries(after.reports))[0]


def test_a_table_report_entries_did_not_build_is_read_afresh() -> None:
    """A plain mapping may change in place: never compared by identity."""
    table: dict[str, dict[str, Any]] = {"c1": {"web": "old"}}
    assert _read(BASE, table).reports == ("old", None, None)
    table["c1"]["web"] = "new"
    assert _read(BASE, table).reports == ("new", None, None)
    assert isinstance(report_entries(REPORTS), EntryTable)


def _pass(root: Path, files: Mapping[str, bytes], reports: Mapping[str, AgentReport]) -> Any:
    prior, problems = read_state(files)
    assert not problems
    return reconcile(load_fleet(WorkdirTree(root)), prior, None, NOW, reports)


def test_a_warm_pass_with_one_report_changed_equals_a_cold_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The placement has rolled out everywhere and its rollout is remembered; the reports of
    all agents but one are the very objects of the pass before, and that one agent now reports
    its content unavailable: the warm pass's bytes are a cold pass's."""
    write_fleet(tmp_path)
    forget()
    files: dict[str, bytes] = {}
    for _ in range(4):  # roll out everywhere, every agent reporting what it was given
        reports = {c: agent_report(files, c) for c in CLUSTERS}
        files = dict(_pass(tmp_path, files, reports).files)
    reused: list[bool] = []
    real = rollmemo.reuse

    def spy(plan: Any, inputs: Any) -> Any:
        found = real(plan, inputs)
        reused.append(found is not None)
        return found

    monkeypatch.setattr("reconciler.rollstage.reuse", spy)
    assert _pass(tmp_path, files, reports).files == files and reused == [True]
    bad = {**reports, "c3": agent_report(files, "c3", available=False)}
    warm = _pass(tmp_path, files, bad)
    assert reused == [True, False]
    forget()
    assert warm.files == _pass(tmp_path, files, bad).files
    assert warm.files != files  # the report did change the output

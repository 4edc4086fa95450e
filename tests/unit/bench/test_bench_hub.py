"""The Git scenario benchmark on a tiny fleet: every trial runs one real Hub pass on a real bare
repository with the expected outcome, from a hub settled by the passes before it (rows of their
own), and each of the three checks (incremental == full render, same tree id across renders,
no-op makes no commit) fails the run when its condition is broken. Cold renders run in-process
here (the benchmark runs them in fresh processes) to stay fast."""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import statistics
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.bench_hub import (
    DEFAULT_NOW,
    RESTART,
    Measured,
    enforce_checks,
    fresh_render,
    measure_all,
    scenario_names,
    summarise_all,
)
from benchmarks.generate import FleetSize, GeneratedFleet, build_fleet
from benchmarks.hub_checks import CheckFailed, git, written_bytes
from benchmarks.hub_report import render_markdown
from benchmarks.hub_scenarios import scenarios
from benchmarks.hub_trials import SETTLE_LIMIT, rollout_row, settle
from gitfleet.repo.gitwrite import Identity, commit_files
from reconciler.pass_ import STAGES

TINY = FleetSize(clusters=4, placements=4, resources=8, overrides=4)
EXPECTED = {
    "no-op": "skipped",
    "unrelated source commit": "unchanged",
    "edit one resource": "committed",
    "edit fleet-wide resource": "committed",
    "edit one override": "committed",
    "change one placement": "committed",
    "relabel one cluster": "committed",
    "add a cluster": "committed",
    "remove a cluster": "committed",
}
REPORTED = {
    "one agent's first report": "committed",  # its status; its rollout goes on
    "one agent's heartbeat": "unchanged",  # recorded at most every clusterStatusRecordInterval
    "one agent's heartbeat, recorded (5 min on)": "committed",  # lastReceivedHeartbeat
    "one poll: 1 agents' first reports": "committed",  # a tenth of the clusters (at least one)
    "one poll: 1 agents' heartbeats": "unchanged",  # their heartbeats, 2 min on
}


def in_process(source: Path, commit: str, work: Path, now: str) -> dict[str, Any]:
    """`fresh_render` without the subprocess, with the fields `run_fresh` adds."""
    result = fresh_render(source, commit, work, now)
    return {**result, "processSeconds": result["seconds"], "maxRssMiB": 0.0}


@dataclasses.dataclass
class Run:
    fleet: GeneratedFleet
    measured: Measured
    result: dict[str, Any]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """One benchmark run, two trials per scenario (settling runs between them)."""
    fleet = build_fleet(TINY, 1)
    args = argparse.Namespace(now=DEFAULT_NOW, trials=2, max_minutes=0.0)
    measured = measure_all(fleet, tmp_path_factory.mktemp("hub"), args, in_process)
    checks = enforce_checks(measured)
    return Run(fleet, measured, {"scenarios": summarise_all(fleet, measured), "checks": checks})


def test_every_scenario_runs_with_its_outcome(run: Run) -> None:
    names = [name for name, _ in scenarios(run.fleet)]
    assert names == list(EXPECTED)
    assert scenario_names(run.fleet) == [RESTART, *EXPECTED, *REPORTED]
    got = {s["scenario"]: s["outcomes"] for s in run.result["scenarios"]}
    assert got.pop("cold full pass (fresh process)") == ["committed"]
    assert got.pop(RESTART) == ["unchanged"]  # an unrelated commit: the same output
    steps = {name: got.pop(name) for name in list(got) if name.endswith(": later rollout steps")}
    assert got == {name: [outcome] for name, outcome in {**EXPECTED, **REPORTED}.items()}
    # a fleet-wide edit rolls out in steps even on 4 clusters; every step commits
    assert rollout_row("edit fleet-wide resource") in steps
    assert set(steps) <= {rollout_row(name) for name in [*EXPECTED, *REPORTED]}
    assert all(outcomes == ["committed"] for outcomes in steps.values())
    files = {s["scenario"]: s["files"]["median"] for s in run.result["scenarios"]}
    assert files["no-op"] == 0 and files["unrelated source commit"] == 0
    assert all(files[n] > 0 for n, o in EXPECTED.items() if o == "committed")
    assert "check 3 (no-op pass makes no commit): ok" in render_markdown(
        {"size": "tiny", "seed": 1, "fleet": "tiny", **run.result}
    )


def _tamper(remote: Path, commit: str, path: str, edit: Any) -> str:
    """A new output commit (no ref) with `path` changed by `edit(doc)`."""
    doc = yaml.safe_load(git(remote, "show", f"{commit}:{path}"))
    edit(doc)
    data = yaml.safe_dump(doc, sort_keys=False).encode()
    identity = Identity("t", "t@example.invalid")
    return commit_files(remote, commit, {path: data}, "tamper", identity).commit


def _manifest(remote: Path, commit: str) -> str:
    paths = git(remote, "ls-tree", "-r", "--name-only", commit, "clusters").splitlines()
    return next(p for p in paths if not p.endswith("/index.yaml"))


def _index(remote: Path, commit: str) -> str:
    paths = git(remote, "ls-tree", "-r", "--name-only", commit, "clusters").splitlines()
    indexes = [p for p in paths if p.endswith("/index.yaml") and p.count("/") == 2]
    return next(p for p in indexes if "placements: []" not in git(remote, "show", f"{commit}:{p}"))


def _placement_index(remote: Path, commit: str) -> str:
    paths = git(remote, "ls-tree", "-r", "--name-only", commit, "clusters").splitlines()
    return next(p for p in paths if p.endswith("/index.yaml") and p.count("/") == 3)


def _bump_counter(doc: dict[str, Any]) -> None:
    doc["placements"][0]["resourceSnapshotIndex"] += 7


def _change_file(doc: dict[str, Any]) -> None:
    doc["objects"][0]["file"] += "x"


def _label(doc: dict[str, Any]) -> None:
    doc["metadata"].setdefault("labels", {})["tampered"] = "yes"


TAMPER = {
    "index differs only in snapshot counter": (_index, _bump_counter),
    "index differs in an object entry": (_placement_index, _change_file),
    "manifest differs": (_manifest, _label),
}


@pytest.mark.parametrize(
    ("case", "error"),
    [
        ("as run", None),
        ("index differs only in snapshot counter", None),
        ("index differs in an object entry", "check 1"),
        ("manifest differs", "check 1"),
        ("cold trees differ", "check 2"),
        ("final renders differ", "check 2"),
        ("no-op moved the ref", "check 3"),
        ("no-op rendered", "check 3"),
    ],
)
def test_checks_are_enforced(run: Run, case: str, error: str | None) -> None:
    got = run.measured
    remote, trials, last = got.remote, list(got.trials), got.trials[-1].after
    assert last is not None
    cold, fresh = got.cold, got.fresh
    if case in TAMPER:
        path, edit = TAMPER[case]
        moved = _tamper(remote, last, path(remote, last), edit)
        trials[-1] = dataclasses.replace(trials[-1], after=moved)
    elif case == "cold trees differ":
        cold = [*cold, {**cold[0], "tree": "0" * 40}]
    elif case == "final renders differ":
        fresh = [fresh[0], {**fresh[1], "tree": "0" * 40}]
    elif case.startswith("no-op"):
        k = next(n for n, t in enumerate(trials) if t.scenario == "no-op")
        change = {"after": last} if case == "no-op moved the ref" else {"outcome": "unchanged"}
        trials[k] = dataclasses.replace(trials[k], **change)
    tampered = Measured(remote, cold, trials, fresh)
    if error is not None:
        with pytest.raises(CheckFailed, match=error):
            enforce_checks(tampered)
        return
    checks = enforce_checks(tampered)
    if case == "as run":
        assert checks == run.result["checks"]
    else:
        assert checks["incremental"].startswith("equal up to snapshot counters in ")


def test_git_daemon_reports_the_servers_cpu_apart(tmp_path: Path) -> None:
    """`--git-daemon`: the hub pushes over git://127.0.0.1; every committed pass shows the
    server's receive-pack CPU, and the checks still hold."""
    fleet = build_fleet(TINY, 1)
    args = argparse.Namespace(now=DEFAULT_NOW, trials=1, max_minutes=0.0, git_daemon=True)
    try:
        measured = measure_all(fleet, tmp_path, args, in_process)
    except RuntimeError as exc:
        if "git daemon is not installed" in str(exc):
            pytest.skip(str(exc))
        raise
    enforce_checks(measured)
    committed = [t for t in measured.trials if t.outcome == "committed"]
    expected = {**EXPECTED, **REPORTED}
    steps = [t for t in committed if t.scenario.endswith(": later rollout steps")]
    assert len(committed) - len(steps) == sum(1 for o in expected.values() if o == "committed")
    assert all(t.server_cpu_seconds >= 0 for t in measured.trials)  # ticks: a tiny push may be 0
    rows = {r["scenario"]: r for r in summarise_all(fleet, measured)}
    summary = {"size": "tiny", "seed": 1, "fleet": "tiny", "scenarios": list(rows.values())}
    summary["gitDaemon"] = True
    table = render_markdown({**summary, "checks": enforce_checks(measured)})
    assert "| remote git CPU s |" in table
    assert "| CPU s (median) | without fetch, push | remote git CPU s |" in table


def test_fetch_and_push_cpu_is_a_part_of_the_hubs(run: Run) -> None:
    """Each trial's fetch and push steps' CPU is within its hub CPU, and the table's second
    CPU column is the hub CPU less it."""
    trials = run.measured.trials
    assert all(0 <= t.transport_cpu_seconds <= t.cpu_seconds for t in trials)
    committed = [t for t in trials if t.outcome == "committed"]
    assert sum(t.transport_cpu_seconds for t in committed) > 0  # git fetch and push ran
    rows = {r["scenario"]: r for r in run.result["scenarios"]}
    edit = [t for t in trials if t.scenario == "edit one resource"]
    want = statistics.median(t.cpu_seconds - t.transport_cpu_seconds for t in edit)
    assert rows["edit one resource"]["passCpuSeconds"]["median"] == pytest.approx(want)


def test_every_commit_is_a_trial_and_each_trial_starts_settled(run: Run) -> None:
    """Settling runs the passes a trial's rollout still needs before the next trial, as
    trials of the scenario's later-steps row: no commit happens between two trials, and the
    next scenario's pass only takes its own change."""
    trials = run.measured.trials
    for before, after in itertools.pairwise(trials):
        assert after.before == before.after
    names = [t.scenario for t in trials]
    k = names.index("edit fleet-wide resource")
    assert names[k + 1] == rollout_row("edit fleet-wide resource")  # its rollout went on
    assert names[names.index("edit one override") - 1] == rollout_row("edit fleet-wide resource")


class _Hub:
    """`run_once` gives the outcomes it was handed, in order (no mirror, no steps)."""

    mirror = None

    def __init__(self, outcomes: list[str]) -> None:
        self.outcomes = outcomes

    def run_once(self) -> Any:
        return argparse.Namespace(outcome=self.outcomes.pop(0), timings=(), cpu_timings=())


def test_settle_keeps_the_committed_passes_and_stops_at_the_first_other(tmp_path: Path) -> None:
    git(tmp_path, "init", "--bare", "--quiet")
    hub = _Hub(["committed", "committed", "unchanged", "committed"])
    got = settle(hub, tmp_path, "x: later rollout steps")
    assert [(t.scenario, t.outcome) for t in got] == [("x: later rollout steps", "committed")] * 2
    assert hub.outcomes == ["committed"]  # the pass after the one that committed nothing: not run
    assert settle(_Hub(["skipped"]), tmp_path, "row") == []
    with pytest.raises(CheckFailed, match="still commits after"):
        settle(_Hub(["committed"] * (SETTLE_LIMIT + 1)), tmp_path, "row")


def test_without_settling_the_trials_run_back_to_back(tmp_path: Path) -> None:
    """`--no-settle`: one pass a trial, whatever rollout goes on; no later-steps rows."""
    fleet = build_fleet(TINY, 1)
    args = argparse.Namespace(now=DEFAULT_NOW, trials=1, max_minutes=0.0, no_settle=True)
    measured = measure_all(fleet, tmp_path, args, in_process)
    assert [t.scenario for t in measured.trials] == scenario_names(fleet)
    enforce_checks(measured)


def test_each_pass_is_split_into_the_stages_of_the_pure_pass(run: Run) -> None:
    """A trial that ran a pass carries its stages' CPU in the pass's order; one that skipped
    (no-op) none; the summary's medians and the stage table come from them, the table's columns
    in the pass's order even from a summary whose keys were sorted."""
    trials = {t.scenario: t for t in run.measured.trials}
    edit = trials["edit one resource"]
    assert [name for name, _ in edit.stage_cpu] == list(STAGES)
    assert all(cpu >= 0 for _, cpu in edit.stage_cpu)
    assert trials["no-op"].stage_cpu == ()
    rows = {r["scenario"]: r for r in run.result["scenarios"]}
    assert list(rows["cold full pass (fresh process)"]["stageCpuSeconds"]) == list(STAGES)
    assert rows["no-op"]["stageCpuSeconds"] == {}
    ran = [t for t in run.measured.trials if t.scenario == "edit one resource"]
    want = statistics.median(dict(t.stage_cpu)["plan"] for t in ran)
    assert rows["edit one resource"]["stageCpuSeconds"]["plan"] == pytest.approx(want)
    saved = json.loads(json.dumps(run.result, sort_keys=True, default=list))  # as --json writes
    table = render_markdown({"size": "tiny", "seed": 1, "fleet": "tiny", **saved})
    head = "| scenario | " + " | ".join(STAGES) + " | sum |"  # in the pass's order still
    assert head in table
    stage_rows = table.split(head)[1].splitlines()
    line = next(x for x in stage_rows if x.startswith("| edit one resource | "))
    cells = [float(c) for c in line.strip("|").split("|")[1:]]
    assert len(cells) == len(STAGES) + 1 and cells[-1] == pytest.approx(sum(cells[:-1]), abs=0.6)
    assert not any(x.startswith("| no-op | ") for x in stage_rows)


def test_written_bytes_counts_each_new_object_once_by_part(tmp_path: Path) -> None:
    """Objects the parent already has (anywhere) are not written again; a blob two new paths
    share is written once; trees are apart."""
    repo = tmp_path / "out"
    git(tmp_path, "init", "--quiet", str(repo), bare=False)

    def commit(files: dict[str, bytes]) -> str:
        for name, data in files.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_bytes(data)
        git(repo, "add", "-A", bare=False)
        git(repo, "commit", "--quiet", "-m", "x", bare=False)
        return git(repo, "rev-parse", "HEAD", bare=False).strip()

    before = commit({"clusters/c1/web/a_x.yaml": b"old\n", "status/placements/web.yaml": b"s\n"})
    after = commit(
        {
            "clusters/c1/web/a_x.yaml": b"new-object\n",  # 11 bytes
            "clusters/c2/web/a_x.yaml": b"new-object\n",  # the same blob: once
            "clusters/c2/index.yaml": b"old\n",  # the parent has this blob: not written
            "status/placements/web.yaml": b"status!\n",  # 8 bytes
        }
    )
    written = written_bytes(repo / ".git", before, after)
    assert {k: v for k, v in written.items() if k != "trees"} == {
        "manifests": 11,
        "placementStatus": 8,
    }
    assert written["trees"] > 0


def test_each_commit_reports_what_it_wrote(run: Run) -> None:
    """Trials that committed carry the bytes they wrote by part; the summary and the table
    show their medians; skipped passes and the cold pass none."""
    trials = {t.scenario: t for t in run.measured.trials}
    assert dict(trials["edit one resource"].written)["manifests"] > 0
    assert trials["no-op"].written == ()
    rows = {r["scenario"]: r for r in run.result["scenarios"]}
    assert rows["cold full pass (fresh process)"]["writtenBytes"] == {}
    ran = [dict(t.written) for t in run.measured.trials if t.scenario == "add a cluster"]
    want = statistics.median(w["manifests"] for w in ran)
    assert rows["add a cluster"]["writtenBytes"]["manifests"] == want > 0
    saved = json.loads(json.dumps(run.result, sort_keys=True, default=list))  # as --json writes
    table = render_markdown({"size": "tiny", "seed": 1, "fleet": "tiny", **saved})
    written_rows = table.split("what each commit writes")[1].splitlines()
    line = next(x for x in written_rows if x.startswith("| add a cluster | "))
    cells = [float(c) for c in line.strip("|").split("|")[1:]]
    assert cells[-1] == pytest.approx(sum(cells[:-1]), abs=len(cells) / 2) and cells[-1] > 0

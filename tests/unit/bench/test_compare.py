"""benchmarks/compare.py: the alternating run order, pooling of runs into one table, and a real
comparison of two commits of a real Git repository, each run by a benchmark script of its own tree
in its own process (a stand-in bench_hub that reports the CPU figure written in its tree); with
`--bench pass`, one stand-in bench_pass run on both trees' code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.compare import COLD, compare, cpu_trials, main, run_order, table

FAKE_BENCH = """\
import json, sys
from marker import CPU  # imported from this tree: PYTHONPATH is the tree's own
out = sys.argv[sys.argv.index("--json") + 1]
extra = [a for a in sys.argv[1:] if a not in ("--json", out)]
if "--fail" in extra:
    raise SystemExit(3)
trials = [{"scenario": "edit one resource", "cpu_seconds": CPU + k / 100} for k in range(3)]
print("table of marker", CPU)
json.dump({"cold": [{"cpuSeconds": CPU * 10, "maxRssMiB": 100}],
           "scenarios": [{"scenario": "cold full pass (fresh process)"},
                         {"scenario": "edit one resource"}],
           "trials": trials, "checks": {"incremental": "identical", "treeIds": "identical",
           "noop": "ok", "args": extra}}, open(out, "w"))
"""


FAKE_PASS = """\
import json, sys
from marker import CPU  # the tree's code; this script is the checkout's, copied into both
out = sys.argv[sys.argv.index("--json") + 1]
rows = [{"scenario": "edit one resource", "trials": 2, "cpu": [CPU, CPU + 0.01]}]
print("pass table of marker", CPU)
json.dump({"rows": rows, "peak_rss_mib": 900}, open(out, "w"))
"""


def _run(name: str, cpu: float, cold: float | None = None) -> dict[str, Any]:
    return {
        "cold": [] if cold is None else [{"cpuSeconds": cold, "maxRssMiB": 1000}],
        "scenarios": [{"scenario": COLD}, {"scenario": name}],
        "trials": [{"scenario": name, "cpu_seconds": cpu}],
        "checks": {"incremental": "identical", "treeIds": "identical", "noop": "ok"},
    }


@pytest.mark.parametrize(
    ("rounds", "order"),
    [
        (1, ["base", "head"]),
        (2, ["base", "head", "head", "base"]),
        (3, ["base", "head", "head", "base", "base", "head"]),
    ],
)
def test_each_side_runs_first_as_often_as_the_other(rounds: int, order: list[str]) -> None:
    assert run_order(rounds) == order


def test_the_table_pools_every_trial_of_a_side_and_keeps_each_run_in_order() -> None:
    runs = [_run("edit", 0.4, 20.0), _run("edit", 0.2, 10.0), _run("edit", 0.3), _run("edit", 0.6)]
    text = table(["base", "head", "head", "base"], runs)
    edit = next(line for line in text.splitlines() if line.startswith("| edit "))
    assert (
        edit
        == "| edit | 0.50 | 0.25 | 2.00x | 0.40-0.60 / 0.20-0.30 | B 0.40, H 0.20, H 0.30, B 0.60 |"
    )
    cold = next(line for line in text.splitlines() if line.startswith(f"| {COLD} "))
    assert (
        cold
        == f"| {COLD} | 20.0 | 10.0 | 2.00x | 20.0-20.0 / 10.0-10.0 | B 20.0, H 10.0, H -, B - |"
    )


def test_overlapping_trials_are_marked_as_within_the_noise() -> None:
    runs = [_run("edit", 0.4), _run("edit", 0.5), _run("edit", 0.6)]
    edit = table(["base", "head", "base"], runs).splitlines()[-1]
    assert (
        edit == "| edit | 0.50 | 0.50 | 1.00x | 0.40-0.60 / 0.50-0.50 (overlap) | "
        "B 0.40, H 0.50, B 0.60 |"
    )


def test_the_pass_measure_leaves_out_fetch_and_push_and_revisions_without_it() -> None:
    """`measure="pass"`: each trial's hub CPU less its fetch and push steps; a run of a revision
    that does not time its steps' CPU gives no figure rather than the whole hub CPU."""
    timed = _run("edit", 0.5)
    timed["trials"][0]["transport_cpu_seconds"] = 0.1
    timed["cold"] = [{"cpuSeconds": 20.0, "transportCpuSeconds": 2.0}]
    untimed = _run("edit", 0.3, 10.0)
    assert cpu_trials(timed, "edit", "pass") == [pytest.approx(0.4)]
    assert cpu_trials(timed, COLD, "pass") == [18.0]
    assert cpu_trials(timed, "edit") == [0.5]
    assert cpu_trials(untimed, "edit", "pass") == [] and cpu_trials(untimed, COLD, "pass") == []
    edit = table(["base", "head"], [untimed, timed], "pass").splitlines()[-1]
    assert edit == "| edit | - | 0.40 | - | - / 0.40-0.40 | B -, H 0.40 |"


def _commit(repo: Path, cpu: float) -> str:
    (repo / "marker.py").write_text(f"CPU = {cpu}\n")
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "-C", str(repo), *identity, "commit", "-qm", f"cpu {cpu}"], check=True)
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True)
    return done.stdout.decode().strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "benchmarks").mkdir(parents=True)
    (repo / "benchmarks" / "bench_hub.py").write_text(FAKE_BENCH)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def test_two_commits_compared_by_their_own_code(repo: Path, tmp_path: Path) -> None:
    base = _commit(repo, 0.5)
    _commit(repo, 0.25)
    (repo / "marker.py").write_text("CPU = 99\n")  # uncommitted: not measured
    keep = tmp_path / "keep"
    report = compare(repo, {"base": base, "head": "HEAD"}, 2, ["--size", "x"], keep)
    assert f"base {base[:12]} ({base})" in report
    assert "order base, head, head, base" in report
    edit = (
        "| edit one resource | 0.51 | 0.26 | 1.96x | 0.50-0.52 / 0.25-0.27 | "
        "B 0.51, H 0.26, H 0.26, B 0.51 |"
    )
    assert edit in report
    assert f"| {COLD} | 5.00 | 2.50 | 2.00x | 5.00-5.00 / 2.50-2.50 |" in report
    names = [
        f"{n}-{side}.{ext}" for n, side in enumerate(run_order(2), 1) for ext in ("json", "md")
    ]
    assert sorted(p.name for p in keep.iterdir()) == sorted([*names, "compare.md"])
    assert (keep / "1-base.md").read_text() == "table of marker 0.5\n"
    assert json.loads((keep / "2-head.json").read_text())["checks"]["args"] == ["--size", "x"]
    assert (keep / "compare.md").read_text() == report
    assert report.count("| edit one resource | - | - | - | - / - | B -, H -, H -, B - |") == 1


def test_the_pure_pass_runs_one_harness_on_both_revisions(repo: Path, tmp_path: Path) -> None:
    (repo / "benchmarks" / "bench_pass.py").write_text("raise SystemExit(5)\n")  # the tree's own
    base = _commit(repo, 0.5)
    _commit(repo, 0.25)
    script = tmp_path / "bench_pass.py"
    script.write_text(FAKE_PASS)
    keep = tmp_path / "keep"
    report = compare(repo, {"base": base, "head": "HEAD"}, 1, [], keep, "pass", script)
    assert "; pure pass CPU (bench_pass), median of all trials" in report
    edit = "| edit one resource | 0.51 | 0.26 | 1.98x | 0.50-0.51 / 0.25-0.26 | B 0.51, H 0.26 |"
    assert edit in report
    assert "- run 2 (head): the pure pass (bench_pass), peak RSS 900 MiB" in report
    assert "Without the fetch and push steps" not in report
    assert (keep / "1-base.md").read_text() == "pass table of marker 0.5\n"


def test_a_failed_run_does_not_count(repo: Path) -> None:
    base = _commit(repo, 0.5)
    with pytest.raises(SystemExit, match="failed \\(exit 3\\): the run does not count"):
        compare(repo, {"base": base, "head": base}, 1, ["--fail"], None)


def test_an_unknown_revision_is_named(repo: Path) -> None:
    _commit(repo, 0.5)
    with pytest.raises(SystemExit, match="no-such-rev"):
        compare(repo, {"base": "no-such-rev", "head": "HEAD"}, 1, [], None)


def _tabled(tmp_path: Path, base: dict[str, Any], head: dict[str, Any]) -> int:
    """`main --table` of two runs written to files."""
    files = [tmp_path / "0.json", tmp_path / "1.json"]
    for file, run in zip(files, (base, head), strict=True):
        file.write_text(json.dumps(run))
    return main(["--table", str(files[0]), "--vs", str(files[1])])


def test_table_mode_pools_runs_made_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _tabled(tmp_path, _run("edit", 0.4), _run("edit", 0.2)) == 0
    out = capsys.readouterr().out
    assert "| edit | 0.40 | 0.20 | 2.00x | 0.40-0.40 / 0.20-0.20 | B 0.40, H 0.20 |" in out
    assert "- run 2 (head): incremental identical" in out


def test_table_mode_pools_pure_pass_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [
        {"rows": [{"scenario": "edit", "cpu": [cpu, cpu + 0.02]}], "peak_rss_mib": 900}
        for cpu in (0.4, 0.2)
    ]
    assert _tabled(tmp_path, *runs) == 0
    out = capsys.readouterr().out
    assert "| edit | 0.41 | 0.21 | 1.95x | 0.40-0.42 / 0.20-0.22 | B 0.41, H 0.21 |" in out
    assert "- run 1 (base): the pure pass (bench_pass), peak RSS 900 MiB" in out
    assert "Without the fetch and push steps" not in out


def test_the_script_runs_from_a_checkout(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "compare.py"), "--help"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "--rounds" in done.stdout

"""Before/after comparison of two revisions with the Git scenario benchmark, in alternating order.

`python benchmarks/compare.py --base fe1d33e --head HEAD [--rounds 2] [-- --size fleet-1k
--trials 3 --git-daemon]` exports each revision's tree (`git archive`, into a temp dir: the
checkout is not touched), then runs `benchmarks/bench_hub.py` of each tree in its own process
(`PYTHONPATH` = that tree) in the order base, head, head, base, base, head, ...: every side runs
first as often as the other, so a machine that warms up or slows down over the run does not favour
one side (a fixed order did: the no-op, which never reaches the pass, came out 2-3 ms worse for
whichever side ran second). Prints one markdown table: per scenario the median hub CPU of all
base trials and of all head trials, their ratio (base / head: above 1 means head is cheaper), the
range of each side's trials ("overlap" when they overlap: the ratio is not beyond the noise) and
each run's median in run order; then every run's checks; then the same table of the hub CPU
less the fetch and push steps (`hub_report.pass_cpu`; "-" for a revision that does not time
them). `--json DIR` keeps each run's JSON (`<n>-<side>.json`, its printed table `.md`) and the
table; `--table BASE.json... --vs HEAD.json...` only pools runs made before. Everything after
`--` goes to the benchmark (default: `--size fleet-1k --trials 3`).

`--bench pass` compares the warm pure pass instead (`benchmarks/bench_pass.py`: no git, one
process a run, the pass's CPU per scenario): the bench_pass.py of this checkout is copied into
both exported trees, so both revisions' code runs under the same harness (an older revision's
own bench_pass loaded its fleet afresh for every pass, which the hub does not do). A run takes
~1.5 minutes at fleet-1k, so more rounds are cheap; they are needed as much (an A/A run, the
same pass code on both sides, read 0.94x-1.15x with every row overlapping: benchmarks/README.md).
Called by people measuring a change (README "Performance").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.hub_checks import git
from benchmarks.hub_report import pass_cpu

BENCHES = {"hub": "benchmarks/bench_hub.py", "pass": "benchmarks/bench_pass.py"}
PASS_SCRIPT = Path(__file__).resolve().parent / "bench_pass.py"
"""The pure-pass harness `--bench pass` runs on both revisions' code."""
DEFAULT_ARGS = ("--size", "fleet-1k", "--trials", "3")
COLD = "cold full pass (fresh process)"
Run = Mapping[str, Any]
"""One bench_hub `--json` document (or bench_pass's: its `rows`)."""


def run_order(rounds: int) -> list[str]:
    """`base`/`head` for `rounds` rounds: each round is a pair, every other pair reversed."""
    pairs = (("base", "head"), ("head", "base"))
    return [side for r in range(rounds) for side in pairs[r % 2]]


def export_tree(repo: Path, rev: str, into: Path) -> str:
    """Write the files of `rev` under `into`; the full commit id (SystemExit naming a bad rev)."""
    into.mkdir(parents=True)
    archive = into.with_suffix(".tar")
    try:
        commit = git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}", bare=False).strip()
        git(repo, "archive", "--format=tar", "-o", str(archive), commit, bare=False)
    except RuntimeError as failed:
        raise SystemExit(str(failed).strip()) from None
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    archive.unlink()
    return commit


def run_bench(tree: Path, bench: str, args: Sequence[str], out: Path) -> Run:
    """One benchmark process on `tree`'s code; its JSON document (SystemExit when it fails). Its
    printed table goes to `out` with the suffix `.md`; its progress to stderr."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, str(tree / bench), *args, "--json", str(out)]
    with out.with_suffix(".md").open("w") as table_out:  # its own table, beside its JSON
        done = subprocess.run(command, cwd=tree, env=env, stdout=table_out, check=False)
    if done.returncode != 0 or not out.exists():
        raise SystemExit(
            f"{' '.join(command)} failed (exit {done.returncode}): the run does not count"
        )
    loaded: Run = json.loads(out.read_text())
    return loaded


def is_pass_run(run: Run) -> bool:
    """A bench_pass document (its scenarios in `rows`, no Git checks), not a bench_hub one."""
    return "rows" in run


def cpu_trials(run: Run, scenario: str, measure: str = "hub") -> list[float]:
    """The hub CPU seconds of each trial of `scenario` in one run (the cold pass: per process);
    `measure` "pass": less the fetch and push steps (`hub_report.pass_cpu`; none from a revision
    that does not time its steps' CPU). A bench_pass run: the pass CPU of each trial."""
    if is_pass_run(run):
        return [
            float(x) for r in run["rows"] if r["scenario"] == scenario for x in r.get("cpu", [])
        ]
    if scenario == COLD:
        rows = list(run.get("cold", []))
    else:
        rows = [
            {"cpuSeconds": t["cpu_seconds"], "transportCpuSeconds": t.get("transport_cpu_seconds")}
            for t in run.get("trials", [])
            if t["scenario"] == scenario
        ]
    if measure == "hub":
        return [float(r["cpuSeconds"]) for r in rows]
    return [pass_cpu(r) for r in rows if r.get("transportCpuSeconds") is not None]


def scenario_names(runs: Sequence[Run]) -> list[str]:
    """Every scenario of the runs, in the order of the first run that has it."""
    names: list[str] = []
    for run in runs:
        for entry in run["rows"] if is_pass_run(run) else run.get("scenarios", []):
            if entry["scenario"] not in names:
                names.append(entry["scenario"])
    return names


def table(order: Sequence[str], runs: Sequence[Run], measure: str = "hub") -> str:
    """The markdown comparison of `runs`, made in the sides `order` (`measure`: `cpu_trials`)."""
    sides = list(zip(order, runs, strict=True))
    lines = [
        "| scenario | base CPU s | head CPU s | ratio | trials min-max base / head | each run's "
        "median, in run order |",
        "|---|---|---|---|---|---|",
    ]
    for name in scenario_names(runs):
        trials = [(side, cpu_trials(run, name, measure)) for side, run in sides]
        base = [x for side, xs in trials if side == "base" for x in xs]
        head = [x for side, xs in trials if side == "head" for x in xs]
        each = [f"{side[0].upper()} {_median(xs)}" for side, xs in trials]
        lines.append(
            f"| {name} | {_median(base)} | {_median(head)} | {_ratio(base, head)} | "
            f"{_spread(base)} / {_spread(head)}{_overlap(base, head)} | {', '.join(each)} |"
        )
    return "\n".join(lines) + "\n"


def checks(order: Sequence[str], runs: Sequence[Run]) -> str:
    """One line per run: its side and what its three checks said, and its cold peak RSS."""
    out = []
    for n, (side, run) in enumerate(zip(order, runs, strict=True), 1):
        if is_pass_run(run):
            rss = run.get("peak_rss_mib", 0)
            out.append(f"- run {n} ({side}): the pure pass (bench_pass), peak RSS {rss:,.0f} MiB")
            continue
        found = run.get("checks", {})
        rss = max((c.get("maxRssMiB", 0) for c in run.get("cold", [])), default=0)
        out.append(
            f"- run {n} ({side}): incremental {found.get('incremental', '-')}; tree ids "
            f"{found.get('treeIds', '-')}; no-op {found.get('noop', '-')}; cold peak RSS "
            f"{rss:,.0f} MiB"
        )
    return "\n".join(out) + "\n"


def _median(xs: Sequence[float]) -> str:
    return _seconds(statistics.median(xs)) if xs else "-"


def _spread(xs: Sequence[float]) -> str:
    return f"{_seconds(min(xs))}-{_seconds(max(xs))}" if xs else "-"


def _overlap(base: Sequence[float], head: Sequence[float]) -> str:
    """` (overlap)` when the two sides' trial ranges overlap: the ratio is within the noise."""
    if base and head and min(base) <= max(head) and min(head) <= max(base):
        return " (overlap)"
    return ""


def _ratio(base: Sequence[float], head: Sequence[float]) -> str:
    if not base or not head or statistics.median(head) == 0:
        return "-"
    return f"{statistics.median(base) / statistics.median(head):.2f}x"


def _seconds(x: float) -> str:
    return f"{x:.3f}" if x < 0.1 else f"{x:.2f}" if x < 10 else f"{x:.1f}"


def compare(
    repo: Path,
    revs: Mapping[str, str],
    rounds: int,
    bench_args: Sequence[str],
    keep: Path | None,
    bench: str = "hub",
    pass_script: Path = PASS_SCRIPT,
) -> str:
    """Run the benchmark (`bench`: hub or pass) of both revisions `rounds` times in
    alternating order; the report: hub CPU, then the same without the fetch and push steps (the
    pure pass: its CPU, `pass_script` run on both revisions' code)."""
    order = run_order(rounds)
    with tempfile.TemporaryDirectory(prefix="gitfleet-compare-") as tmp:
        trees = {side: Path(tmp) / side for side in revs}
        commits = {side: export_tree(repo, rev, trees[side]) for side, rev in revs.items()}
        if bench == "pass":
            for tree in trees.values():
                shutil.copyfile(pass_script, tree / BENCHES["pass"])
        out_dir = keep if keep is not None else Path(tmp) / "json"
        out_dir.mkdir(parents=True, exist_ok=True)
        runs = []
        for n, side in enumerate(order, 1):
            print(f"run {n}/{len(order)}: {side} {commits[side][:12]}", file=sys.stderr, flush=True)
            out = out_dir / f"{n}-{side}.json"
            runs.append(run_bench(trees[side], BENCHES[bench], bench_args, out))
    what = "hub CPU" if bench == "hub" else "pure pass CPU (bench_pass)"
    head = f"base {commits['base'][:12]} ({revs['base']}), head {commits['head'][:12]} "
    head += f"({revs['head']}); order {', '.join(order)}; {what}, median of all trials\n\n"
    report = head + table(order, runs) + "\n" + checks(order, runs)
    if bench == "hub":
        report += "\nWithout the fetch and push steps (the pass, its reading and its commit):\n\n"
        report += table(order, runs, "pass")
    if keep is not None:
        (keep / "compare.md").write_text(report)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    cut = args.index("--") if "--" in args else len(args)
    mine, bench_args = args[:cut], args[cut + 1 :] or list(DEFAULT_ARGS)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", help="the revision measured as before")
    p.add_argument("--head", default="HEAD", help="the revision measured as after (HEAD)")
    p.add_argument("--rounds", type=int, default=2, help="pairs of runs (2: base head head base)")
    p.add_argument("--repo", type=Path, default=Path("."), help="the gitfleet repository")
    p.add_argument("--json", type=Path, help="keep each run's JSON and the table in this dir")
    p.add_argument(
        "--bench",
        choices=sorted(BENCHES),
        default="hub",
        help="hub: the Git scenarios (bench_hub); pass: the warm pure pass (bench_pass)",
    )
    p.add_argument("--table", type=Path, nargs="+", help="pool these base runs (no new run)")
    p.add_argument("--vs", type=Path, nargs="+", help="... against these head runs")
    a = p.parse_args(mine)
    if a.table or a.vs:
        if not (a.table and a.vs):
            p.error("--table needs --vs")
        loaded = [json.loads(f.read_text()) for f in (*a.table, *a.vs)]
        order = ["base"] * len(a.table) + ["head"] * len(a.vs)
        print(table(order, loaded) + "\n" + checks(order, loaded), end="")
        if not all(is_pass_run(run) for run in loaded):  # the pure pass has no fetch or push
            print("\nWithout the fetch and push steps:\n\n" + table(order, loaded, "pass"), end="")
        return 0
    if not a.base or a.rounds < 1:
        p.error("--base REV is needed, and --rounds at least 1")
        return 2
    revs = {"base": a.base, "head": a.head}
    print(compare(a.repo, revs, a.rounds, bench_args, a.json, a.bench), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

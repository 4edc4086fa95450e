"""Git scenario benchmark: one real `Hub.run_once()` pass per scenario on a real bare repository.

`python benchmarks/bench_hub.py --size fleet-1k --trials 5 [--json out.json]` generates a fleet
(`benchmarks.generate`), commits it to `main` in a work clone and pushes it to a bare remote.
The cold full pass runs in a fresh process per trial (a fresh remote each, so render + commit +
push from nothing, peak RSS from os.wait4); the other scenarios run in this process on the first
cold trial's remote, each trial = push one source change (or an agent's report), then time one
pass (`benchmarks.hub_trials`: before each trial the hub runs passes until one commits nothing,
so a trial starts with no rollout going on; the passes that committed are the row "<scenario>:
later rollout steps"; `--no-settle` leaves that out). First, once, the hub process's first
pass after a restart (an unrelated commit, nothing in memory); then no-op, an unrelated source
commit, edit one resource, edit a fleet-wide resource, edit one override, change one placement,
relabel one cluster, add a cluster, remove a cluster, one agent's first report, one agent's
heartbeat, one agent's heartbeat recorded, one poll of a tenth of the agents' first reports,
one poll of their heartbeats. Every Hub uses the same fixed clock. Three checks make a run
count (exit 1 otherwise): the incremental `clusters/` tree equals a fresh process's full render
of the final source; every fresh process gives the same tree id; the no-op pass leaves the
output ref alone. Prints a markdown table; `--json` saves everything.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.generate import (
    SIZES,
    GeneratedFleet,
    add_size_options,
    build_fleet,
    resolve_size,
)
from benchmarks.gitserver import GitDaemon
from benchmarks.hub_checks import (
    OUTPUT_REF,
    CheckFailed,
    changed_files,
    check_incremental,
    git,
    repo_bytes,
    resolve,
)
from benchmarks.hub_report import render_markdown, summarise
from benchmarks.hub_reports import report_scenarios
from benchmarks.hub_scenarios import scenarios, unrelated
from benchmarks.hub_trials import (
    DEFAULT_NOW,
    RESTART,
    Trial,
    cpu_seconds,
    measure,
    new_source,
    push_source,
    rollout_row,
    run_scenarios,
    steps,
)

ROOT = Path(__file__).resolve().parent.parent


def make_hub(remote: Path | str, cache: Path, now: str) -> Any:
    """A Hub on `remote` with a fixed clock (imported late: the child times its own import)."""
    from gitfleet.api import parse_time
    from reconciler.loop import Hub, HubConfig

    fixed: datetime = parse_time(now)
    config = HubConfig(url=str(remote), cache_dir=cache, manage_heap=True)  # as `reconcile`
    return Hub(config, clock=lambda: fixed)


def fresh_render(source: Path, commit: str, work: Path, now: str) -> dict[str, Any]:
    """Push `commit` as `main` into a new bare remote under `work`, run one cold pass there."""
    remote = work / "remote.git"
    remote.mkdir(parents=True)
    git(remote, "init", "--bare", "--quiet")
    git(source, "push", "--quiet", str(remote), f"{commit}:refs/heads/main")
    size = repo_bytes(remote)
    import reconciler.loop  # noqa: F401  (imports are not part of the pass)

    started, cpu = time.perf_counter(), cpu_seconds()
    hub = make_hub(remote, work / "cache", now)
    report = hub.run_once()
    wall, cpu = time.perf_counter() - started, cpu_seconds(hub) - cpu
    out = resolve(remote, OUTPUT_REF)
    if report.outcome != "committed" or out is None:
        raise CheckFailed(f"cold pass ended {report.outcome}: {report.message}")
    return {
        "remote": str(remote),
        "output": out,
        "tree": resolve(remote, f"{out}^{{tree}}"),
        "clusters": resolve(remote, f"{out}:clusters"),
        "seconds": wall,
        "cpuSeconds": cpu,
        **steps(report),
        "files": changed_files(remote, None, out),
        "bytesAdded": repo_bytes(remote) - size,
        "errors": len(report.errors),
        "stage_cpu": list(report.stage_cpu_timings),
    }


def run_fresh(source: Path, commit: str, work: Path, now: str) -> dict[str, Any]:
    """`fresh_render` in a new Python process; adds its wall time and peak RSS (os.wait4)."""
    work.mkdir(parents=True)
    argv = [sys.executable, str(Path(__file__).resolve()), "fresh-render"]
    argv += [str(source), commit, str(work), "--now", now]
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path)
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=err)
        assert proc.stdout is not None
        out = proc.stdout.read()
        proc.stdout.close()
        _, status, usage = os.wait4(proc.pid, 0)
        process_wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise CheckFailed(f"fresh render failed: {err.read().decode(errors='replace')[-2000:]}")
    result: dict[str, Any] = json.loads(out)
    return {**result, "processSeconds": process_wall, "maxRssMiB": usage.ru_maxrss / 1024}


def scenario_names(fleet: GeneratedFleet) -> list[str]:
    """Every scenario's name in run order, the restart first (the cold pass is not one)."""
    names = [name for name, _ in scenarios(fleet)]
    return [RESTART, *names, *(name for name, _ in report_scenarios(fleet, DEFAULT_NOW))]


Render = Callable[[Path, str, Path, str], dict[str, Any]]
"""(source remote, commit, work dir, now) -> a cold pass's figures: `run_fresh` (or, in the
test, an in-process stand-in)."""


def cold_trials(
    source: Path, commit: str, work: Path, now: str, trials: int, budget: float, render: Render
) -> list[dict[str, Any]]:
    """Cold passes, one fresh process and remote each; the first remote is kept."""
    started, out = time.perf_counter(), list[dict[str, Any]]()
    for k in range(trials):
        if k and budget and time.perf_counter() - started + out[-1]["processSeconds"] > budget:
            break
        out.append(render(source, commit, work / f"cold-{k}", now))
        print(f"  cold trial {k + 1}: {out[-1]['seconds']:.2f}s", file=sys.stderr)
    return out


@dataclass(frozen=True)
class Measured:
    """Everything the checks and the summary read."""

    remote: Path
    cold: list[dict[str, Any]]
    trials: list[Trial]
    fresh: list[dict[str, Any]]
    """Two full renders of the final source, each in a fresh remote."""


def measure_all(
    fleet: GeneratedFleet, work: Path, args: argparse.Namespace, render: Render = run_fresh
) -> Measured:
    """Set up the repositories, run the cold trials, the scenarios and the final renders."""
    budget = args.max_minutes * 60
    clone, source = work / "clone", work / "source.git"
    new_source(fleet, clone, source)
    first = git(clone, "rev-parse", "HEAD", bare=False).strip()
    cold = cold_trials(source, first, work, args.now, args.trials, budget, render)
    remote = Path(cold[0]["remote"])
    git(clone, "remote", "set-url", "origin", str(remote), bare=False)
    server = GitDaemon(work) if getattr(args, "git_daemon", False) else None
    try:
        hub = make_hub(server.url(remote) if server else remote, work / "hub-cache", args.now)
        if hub.run_once().outcome != "skipped":  # warm the mirror: the output is already there
            raise CheckFailed("the first pass on a rendered remote should skip")
        push_source(clone, unrelated(clone, -1))
        trials = [measure(hub, remote, RESTART, server)]
        settle_first = not getattr(args, "no_settle", False)
        trials += run_scenarios(
            fleet,
            clone,
            remote,
            hub,
            args.trials,
            budget,
            server,
            args.now,
            settle_first=settle_first,
        )
    finally:
        if server:
            server.stop()
    final = resolve(remote, "refs/heads/main") or ""
    fresh = [render(remote, final, work / f"final-{k}", args.now) for k in range(2)]
    return Measured(remote, cold, trials, fresh)


def enforce_checks(got: Measured) -> dict[str, Any]:
    """Checks 3, 2 and 1 in that order (CheckFailed on the first that fails); their report."""
    noop = [t for t in got.trials if t.scenario == "no-op"]
    if any(t.after != t.before or t.outcome != "skipped" for t in noop):
        raise CheckFailed(f"check 3: the no-op pass rendered or moved the output ref: {noop}")
    trees = {f"cold-{k}": c["tree"] for k, c in enumerate(got.cold)}
    trees.update({f"final-{k}": f["tree"] for k, f in enumerate(got.fresh)})
    if len({c["tree"] for c in got.cold}) != 1 or got.fresh[0]["tree"] != got.fresh[1]["tree"]:
        raise CheckFailed(f"check 2: tree ids differ across processes: {trees}")
    last = str(got.trials[-1].after if got.trials else got.cold[0]["output"])
    inc = check_incremental(got.remote, last, got.fresh[0])
    counters = f"equal up to snapshot counters in {inc['historyOnlyIndexes']} index.yaml files"
    return {
        "incremental": "identical" if inc["identical"] else counters,
        "treeIds": "identical",
        "processes": len(trees),
        "noop": f"ok ({len(noop)} passes skipped, ref unchanged)",
        "details": {"incremental": inc, "trees": trees},
    }


def summarise_all(fleet: GeneratedFleet, got: Measured) -> list[dict[str, Any]]:
    """One summary row per scenario, the cold pass first, each followed by the row of its
    later rollout steps when settling gave any."""
    cold = [{**c, "outcome": "committed"} for c in got.cold]
    rows = [summarise("cold full pass (fresh process)", cold)]
    for name in (row for n in scenario_names(fleet) for row in (n, rollout_row(n))):
        trials = [t for t in got.trials if t.scenario == name]
        dicts = [
            {
                **asdict(t),
                "bytesAdded": t.bytes_added,
                "maxRssMiB": t.max_rss_mib,
                "cpuSeconds": t.cpu_seconds,
                "commitSeconds": t.commit_seconds,
                "pushSeconds": t.push_seconds,
                "serverCpuSeconds": t.server_cpu_seconds,
                "transportCpuSeconds": t.transport_cpu_seconds,
            }
            for t in trials
        ]
        rows += [summarise(name, dicts)] if dicts else []
    return rows


def run_bench(
    fleet: GeneratedFleet, work: Path, args: argparse.Namespace, render: Render = run_fresh
) -> dict[str, Any]:
    """Measure, enforce the checks; the summary (scenarios, checks or `checks.failed`, raw
    figures)."""
    got = measure_all(fleet, work, args, render)
    try:
        checks = enforce_checks(got)
    except CheckFailed as exc:
        checks = {"failed": str(exc)}
    raw = {"cold": got.cold, "fresh": got.fresh, "trials": [asdict(t) for t in got.trials]}
    return {"scenarios": summarise_all(fleet, got), "checks": checks, **raw}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line arguments of the benchmark."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_size_options(p)
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--now", default=DEFAULT_NOW, help="the fixed clock of every Hub")
    p.add_argument(
        "--max-minutes",
        type=float,
        default=0.0,
        help="per scenario: no further trial past this (0: no limit)",
    )
    p.add_argument(
        "--no-settle",
        action="store_true",
        help="run each trial right after the last, rollouts of earlier trials still going "
        "(the harness before 2026-11-29); by default the hub runs passes until one commits "
        "nothing before each trial, and those passes are the scenario's later rollout steps",
    )
    p.add_argument("--json", type=Path, help="also write every measurement here")
    p.add_argument("--workdir", type=Path, help="parent of the temp dir (default: system temp)")
    p.add_argument(
        "--git-daemon",
        action="store_true",
        help="serve the remote through git daemon on 127.0.0.1 for the scenarios, so the "
        "receiving side's CPU is reported apart from the hub's",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (or, as `fresh-render SOURCE COMMIT WORK --now T`, one cold pass)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["fresh-render"]:
        source, commit, work, now = argv[1], argv[2], Path(argv[3]), argv[5]
        print(json.dumps(fresh_render(Path(source), commit, work, now), sort_keys=True))
        return 0
    args = parse_args(argv)
    size = resolve_size(args)
    label = args.size if size == SIZES[args.size] else f"custom {size}"
    work = Path(tempfile.mkdtemp(prefix="gitfleet-hub-", dir=args.workdir))
    fleet = build_fleet(size, args.seed)
    result = run_bench(fleet, work, args)
    counts = fleet.policy_counts()
    described = (
        f"{size.clusters} clusters, placements {counts}, {size.resources} resources, "
        f"{size.overrides} overrides"
    )
    summary = {"size": label, "seed": args.seed, "now": args.now, "fleet": described, **result}
    summary["gitDaemon"] = args.git_daemon
    print(render_markdown(summary))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    failed = result["checks"].get("failed")
    if failed:
        print(f"bench_hub: CHECK FAILED, the run does not count: {failed}", file=sys.stderr)
        print(f"bench_hub: repositories kept in {work}", file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

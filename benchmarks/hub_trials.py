"""The measured passes of the Git scenario benchmark: a trial per scenario and what it cost.

`run_scenarios` runs every scenario `trials` times on one long-running hub: each trial pushes a
source change (or writes an agent's report) and times one `Hub.run_once` (`measure`). Before
each trial the hub is *settled* (`settle`): it runs passes until one commits nothing, so a trial
starts from a fleet whose rollouts have ended and its row measures the pass that takes its own
change, not the rolling update an earlier scenario started (a RollingUpdate moves at most
`maxUnavailable`, 25% by default, of a placement's clusters a pass: without settling, the
*change one placement* trials carried the override edits' rollouts). The settling passes that
commit are trials too, in a row of their own per scenario (`rollout_row`): what each later step
of that change's rollout costs. `settle_first=False` (`bench_hub.py --no-settle`) runs the
trials back to back (the harness before 2026-11-29). Trials are listed in the order they ran.
CPU is the hub process's and its git clients' (`cpu_seconds`). Called by
`benchmarks/bench_hub.py`.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.generate import GeneratedFleet, write_fleet
from benchmarks.gitserver import TICKS, GitDaemon
from benchmarks.hub_checks import (
    OUTPUT_REF,
    CheckFailed,
    changed_files,
    git,
    repo_bytes,
    resolve,
    written_bytes,
)
from benchmarks.hub_reports import ReportEdit, report_scenarios
from benchmarks.hub_scenarios import Edit, scenarios
from reconciler.steptimer import process_cpu

DEFAULT_NOW = "2026-01-01T00:00:00Z"
RESTART = "first pass after a restart (unrelated commit)"
"""The scenario measured once, before the others: the hub process's first pass that does not
skip, with nothing of a last pass in memory (the prior output is read from Git, every memo is
empty), on a source commit that changes no fleet input."""
SETTLE_LIMIT = 40
"""Passes one settling may take before the run fails (a hub whose passes keep committing
without a new input is a fault; a fleet-1k fleet-wide edit settles in 3 more commits)."""


def rollout_row(scenario: str) -> str:
    """The row of the passes that go on with `scenario`'s rollout after its trial."""
    return f"{scenario}: later rollout steps"


def cpu_seconds(hub: Any = None) -> float:
    """CPU seconds (user + system) of this process and its waited-for children (git): less
    sensitive than wall time to other jobs on a shared machine. Given a hub, also its mirror's
    long-running `cat-file` processes (`ObjectReader`), whose CPU reaches `RUSAGE_CHILDREN`
    only when they end: a delta between two calls counts them whether or not they ended."""
    reader = getattr(hub.mirror, "objects", None) if hub is not None else None
    live = sum(map(live_cpu, reader.pids)) if reader is not None else 0.0  # older trees: none
    return process_cpu() + live


def live_cpu(pid: int) -> float:
    """CPU seconds of a running child and the children it reaped (`/proc/<pid>/stat`; 0 when
    it has ended: then `RUSAGE_CHILDREN` holds it)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    if fields[0] == "Z":  # ended, not yet waited for: RUSAGE_CHILDREN gets it when it is
        return 0.0
    return sum(int(f) for f in fields[11:15]) / TICKS


TRANSPORT = ("fetch", "push")
"""The steps that talk to the remote: the issue measures the push apart from the pass."""


def steps(report: Any) -> dict[str, float]:
    """`commitSeconds` / `pushSeconds` from the Hub's step timings, and `transportCpuSeconds`:
    the CPU of its fetch and push steps (0 when it has none)."""
    timings = dict(getattr(report, "timings", ()))
    cpu = dict(getattr(report, "cpu_timings", ()))
    return {
        "commitSeconds": timings.get("commit", 0.0),
        "pushSeconds": timings.get("push", 0.0),
        "transportCpuSeconds": sum(cpu.get(step, 0.0) for step in TRANSPORT),
    }


@dataclass(frozen=True)
class Trial:
    """One measured pass."""

    scenario: str
    seconds: float
    outcome: str
    files: int
    bytes_added: int
    max_rss_mib: float
    before: str | None
    after: str | None
    cpu_seconds: float = 0.0
    commit_seconds: float = 0.0
    push_seconds: float = 0.0
    server_cpu_seconds: float = 0.0
    """CPU of the remote's git daemon and its children during the pass (`--git-daemon`)."""
    transport_cpu_seconds: float = 0.0
    """Of `cpu_seconds`, the hub's fetch and push steps (its git client processes included)."""
    stage_cpu: tuple[tuple[str, float], ...] = ()
    """CPU seconds of each stage of the pass step (`PassReport.stage_cpu_timings`; none when
    the pass was skipped)."""
    written: tuple[tuple[str, int], ...] = ()
    """The new objects' bytes of the commit, by part of the output tree (`written_bytes`;
    none when nothing was committed)."""


def new_source(fleet: GeneratedFleet, clone: Path, bare: Path) -> None:
    """The generated fleet written to `clone`, a work clone of the new bare repository `bare`,
    committed and pushed to its `main`."""
    write_fleet(fleet, clone)
    git(bare, "init", "--bare", "--quiet")
    git(clone, "init", "--quiet", "-b", "main", bare=False)
    git(clone, "remote", "add", "origin", str(bare), bare=False)
    push_source(clone, "generated fleet")


def push_source(clone: Path, message: str) -> None:
    """Commit everything in the work clone and push `main`."""
    git(clone, "add", "-A", bare=False)
    git(clone, "commit", "--quiet", "-m", message, bare=False)
    git(clone, "push", "--quiet", "origin", "main", bare=False)


def measure(hub: Any, remote: Path, name: str, server: GitDaemon | None = None) -> Trial:
    """Time one `run_once` and what it did to the remote (and, served by `server`, the
    server's CPU)."""
    before, size = resolve(remote, OUTPUT_REF), repo_bytes(remote)
    served = server.cpu_seconds() if server else 0.0
    started, cpu = time.perf_counter(), cpu_seconds(hub)
    report = hub.run_once()
    seconds, cpu = time.perf_counter() - started, cpu_seconds(hub) - cpu
    served = server.cpu_seconds() - served if server else 0.0
    after = resolve(remote, OUTPUT_REF)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    files = changed_files(remote, before, after)
    timed = steps(report)
    return Trial(
        name,
        seconds,
        report.outcome,
        files,
        repo_bytes(remote) - size,
        rss,
        before,
        after,
        cpu,
        timed["commitSeconds"],
        timed["pushSeconds"],
        served,
        timed["transportCpuSeconds"],
        tuple(getattr(report, "stage_cpu_timings", ())),
        tuple(written_bytes(remote, before, after).items())
        if before and after not in (None, before)
        else (),
    )


def run_scenarios(
    fleet: GeneratedFleet,
    clone: Path,
    remote: Path,
    hub: Any,
    trials: int,
    budget: float,
    server: GitDaemon | None = None,
    now: str = DEFAULT_NOW,
    *,
    settle_first: bool = True,
) -> list[Trial]:
    """Every scenario `trials` times (a further trial only while the budget in seconds, if
    any, leaves room for one more of the same length): the source changes, then the agent
    reports (`now`: the hub's clock, which the reports are dated by). With `settle_first`,
    each trial starts from a settled hub and the passes settling it after a trial are that
    scenario's `rollout_row` trials."""
    out: list[Trial] = []
    previous = RESTART
    for name, act in _actions(fleet, clone, remote, now):
        started, last = time.perf_counter(), 0.0
        for k in range(trials):
            if k and budget and time.perf_counter() - started + last > budget:
                break
            if (
                name == "remove a cluster"
                and not (clone / f"clusters/bench-added-{k}.yaml").exists()
            ):
                break  # only as many removals as there were additions
            if settle_first:
                out += settle(hub, remote, rollout_row(previous), server)
            act(k)
            trial = measure(hub, remote, name, server)
            out.append(trial)
            last, previous = trial.seconds, name
            print(f"  {name} trial {k + 1}: {trial.seconds:.3f}s {trial.outcome}", file=sys.stderr)
    if settle_first:
        out += settle(hub, remote, rollout_row(previous), server)
    return out


def settle(hub: Any, remote: Path, row: str, server: GitDaemon | None = None) -> list[Trial]:
    """Passes until one commits nothing (no input changes meanwhile: a rollout goes on until it
    ends or waits); the ones that committed, as trials of `row`. CheckFailed past
    `SETTLE_LIMIT` passes."""
    committed: list[Trial] = []
    for _ in range(SETTLE_LIMIT):
        trial = measure(hub, remote, row, server)
        if trial.outcome != "committed":
            return committed
        committed.append(trial)
    raise CheckFailed(f"the hub still commits after {SETTLE_LIMIT} passes without input ({row})")


def _actions(
    fleet: GeneratedFleet, clone: Path, remote: Path, now: str
) -> list[tuple[str, Callable[[int], None]]]:
    """(scenario, what a trial k does before its pass), in run order."""

    def source(edit: Edit | None) -> Callable[[int], None]:
        return lambda k: None if edit is None else push_source(clone, edit(clone, k) or "")

    def report(edit: ReportEdit) -> Callable[[int], None]:
        return lambda k: edit(remote, k)

    return [(name, source(edit)) for name, edit in scenarios(fleet)] + [
        (name, report(edit)) for name, edit in report_scenarios(fleet, now)
    ]

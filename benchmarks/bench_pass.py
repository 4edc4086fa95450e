"""Warm pure-pass benchmark: what one `reconcile` costs a long-running hub, without git.

`python benchmarks/bench_pass.py --size fleet-1k --trials 3 [--json out.json]` generates the fleet
(`benchmarks.generate`), runs a cold pass, then in the same process for every hub scenario
(`benchmarks.hub_scenarios`: no change, an unrelated file, one resource, a fleet-wide resource,
an override, a placement, a relabelled, added and removed cluster) changes the source files,
reloads the fleet as the hub does (`renderers.hubload.FleetLoader`, each file named by its blob
id: unchanged files keep their objects) and runs one pass with the previous result as prior -
the way the hub chains its passes (`HeapKeeper` on, as in `gitfleet reconcile`). It reports per
scenario the median, min and max CPU seconds of the pass (`time.process_time`), the files whose
bytes changed, and the peak RSS of the process. Each trial first settles the previous change
(passes until one changes no file, as `bench_hub.py` settles the hub), so a scenario measures
its own change only. With `--stages`, the CPU seconds of each stage of the pass are added
(`PassResult.stage_cpu_timings`: `reconciler.pass_.STAGES`).

Until session 33 (2026-11-29) each pass got a fleet loaded afresh (`load_fleet`: new objects
for every file, so the pass's identity checks missed where the hub's hit: relabel 0.3 s of pass
CPU against the hub's 0.07) and a trial settled with two passes (a fleet-wide edit's rollout
waves then ran in the next scenario's trial).

Unlike `bench_hub.py` it leaves out loading, the commit, the push and the hub's listing of its
output, so it isolates the pass; compare its figures only with runs of the same size.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.generate import (
    GeneratedFleet,
    add_size_options,
    build_fleet,
    resolve_size,
    write_fleet,
)
from benchmarks.hub_scenarios import Edit, scenarios
from gitfleet.api import parse_time
from gitfleet.repo.workdir import WorkdirTree
from reconciler.heap import HeapKeeper
from reconciler.pass_ import PassResult, reconcile
from reconciler.state import State, read_state
from renderers.hubload import FleetLoader

NOW = "2026-01-01T00:00:00Z"
SETTLE_LIMIT = 40
"""Passes `Chain.settle` runs at most (`bench_hub.py`'s limit; kept here so the file can be
copied into an older checkout)."""


@dataclass
class Scenario:
    """The trials of one scenario."""

    name: str
    cpu: list[float] = field(default_factory=list)
    changed: list[int] = field(default_factory=list)
    stages: list[dict[str, float]] = field(default_factory=list)


class BlobTree(WorkdirTree):
    """A work directory whose files name their git blob ids (hashed from their bytes), as a
    source commit's do: the hub's `FleetLoader` then patches the last snapshot with the
    changed files only, so the pass gets the very objects of unchanged files, as the hub's."""

    def oid(self, path: str) -> str:
        data = self.read(path)
        return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class Chain:
    """Passes chained as the hub chains them: each takes the previous result as prior, and a
    fleet loaded as the hub loads it (`FleetLoader`: unchanged files keep their objects)."""

    def __init__(self, root: Path, stages: bool) -> None:
        self.root, self.stages = root, stages
        self.now = parse_time(NOW)
        self.heap = HeapKeeper()
        self.loader = FleetLoader()
        self.result = self._pass(State())[0]

    def _pass(self, prior: State) -> tuple[PassResult, float, dict[str, float]]:
        fleet = self.loader.load(BlobTree(self.root))
        started = time.process_time()
        result = reconcile(fleet, prior, None, self.now, {})
        cpu = time.process_time() - started
        self.heap.after_pass()
        stages = getattr(result, "stage_cpu_timings", ())  # none before 2026-11-29
        return result, cpu, dict(stages) if self.stages else {}

    def settle(self) -> int:
        """Passes until one changes no file (as `bench_hub.py` settles the hub before a
        trial); how many ran. RuntimeError past `SETTLE_LIMIT` passes."""
        for done in range(1, SETTLE_LIMIT + 1):
            if not self.step()[1]:
                return done
        raise RuntimeError(f"the pass still changes files after {SETTLE_LIMIT} passes")

    def step(self) -> tuple[float, int, dict[str, float]]:
        """One pass on the current files: CPU seconds, files whose bytes changed, stages."""
        before = self.result.files
        self.result, cpu, spent = self._pass(read_state(before)[0])
        after = self.result.files
        changed = sum(1 for p, d in after.items() if before.get(p) != d)
        changed += sum(1 for p in before if p not in after)
        return cpu, changed, spent


def run(
    made: GeneratedFleet, root: Path, trials: int, stages: bool, only: set[str]
) -> list[Scenario]:
    """Every scenario `trials` times on one chain of passes."""
    chain = Chain(root, stages)
    listed: list[tuple[str, Edit | None]] = [
        (n, e) for n, e in scenarios(made) if not only or n in only
    ]
    out = [Scenario(name) for name, _ in listed]
    for k in range(trials):
        for scenario, (_, edit) in zip(out, listed, strict=True):
            chain.settle()  # what the last change started (rollout waves, condition times)
            if edit is not None:
                edit(root, k)
            cpu, changed, spent = chain.step()
            scenario.cpu.append(cpu)
            scenario.changed.append(changed)
            scenario.stages.append(spent)
    return out


def summary(results: list[Scenario]) -> list[dict[str, Any]]:
    rows = []
    for s in results:
        row: dict[str, Any] = {
            "scenario": s.name,
            "trials": len(s.cpu),
            "cpu": list(s.cpu),
            "cpu_median": statistics.median(s.cpu),
            "cpu_min": min(s.cpu),
            "cpu_max": max(s.cpu),
            "changed_median": statistics.median(s.changed),
        }
        if any(s.stages):
            names = list(dict.fromkeys(n for spent in s.stages for n in spent))
            row["stages"] = {n: statistics.median(t.get(n, 0.0) for t in s.stages) for n in names}
        rows.append(row)
    return rows


def render_markdown(rows: list[dict[str, Any]], rss_mib: float) -> str:
    lines = [
        "| scenario | trials | pass CPU s (median) | min | max | files changed (median) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['scenario']} | {r['trials']} | {r['cpu_median']:.3f} | {r['cpu_min']:.3f} | "
            f"{r['cpu_max']:.3f} | {r['changed_median']:.0f} |"
        )
    lines.append(f"\npeak RSS of the process: {rss_mib:.0f} MiB")
    for r in rows:
        if "stages" in r:
            top = sorted(r["stages"].items(), key=lambda kv: -kv[1])[:6]
            shown = ", ".join(f"{n} {t:.3f}" for n, t in top)
            lines.append(f"- {r['scenario']}: {shown}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_size_options(p)
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--stages", action="store_true", help="also time each stage of the pass")
    p.add_argument("--only", default="", help="comma-separated scenario names")
    p.add_argument("--json", type=Path, help="also write every measurement here")
    p.add_argument("--workdir", type=Path, help="parent of the temp dir (default: system temp)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    size = resolve_size(args)
    made = build_fleet(size, args.seed)
    work = Path(tempfile.mkdtemp(prefix="gitfleet-pass-", dir=args.workdir))
    try:
        write_fleet(made, work / "fleet")
        only = {n.strip() for n in args.only.split(",") if n.strip()}
        rows = summary(run(made, work / "fleet", args.trials, args.stages, only))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{size.clusters} clusters, {size.placements} placements, seed {args.seed}")
    print(render_markdown(rows, rss))
    if args.json:
        report: Mapping[str, Any] = {"size": asdict(size), "rows": rows, "peak_rss_mib": rss}
        args.json.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

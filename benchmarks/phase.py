"""One benchmark phase in a fresh process, as a user running the CLI would pay for it.

`python benchmarks/phase.py {load|pass|write} FLEET [--out DIR] [--now T]` imports gitfleet,
loads FLEET (`renderers.load_fleet` on a `WorkdirTree`) as the CLI's one-pass commands do (the
collector policy of `reconciler.heap.one_pass_heap`, stage memos that keep nothing:
`reconciler.stagememo.single_pass`), then for `pass` and `write` runs the
pure pass (`reconciler.pass_.reconcile` with an empty prior State), and for `write` writes the
output tree into DIR (`gitfleet.repo.outdir.write_output`). It prints one JSON line with the
in-process seconds of each step (imports included), the error count and the number of output
files, then ends as the `gitfleet` command does (`gitfleet.quickexit.exit_quickly`, with
the fleet and the pass's result still held, as a command's frames hold them: the heap is not
freed). `benchmarks/bench_render.py` starts it once per trial and phase and measures the whole
process from outside (wall time, peak RSS).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import NoReturn

PHASES = ("load", "pass", "write")
DEFAULT_NOW = "2026-01-01T00:00:00Z"


def run_phase(
    phase: str,
    fleet_dir: Path,
    out_dir: Path | None,
    now_text: str,
    keep: list[object] | None = None,
) -> dict[str, object]:
    """Run `phase` and return its step timings (seconds) and counts; the fleet and the pass's
    result go into `keep` when given (else they are freed on return)."""
    started = time.perf_counter()
    from reconciler.heap import one_pass_heap
    from reconciler.stagememo import single_pass

    timings = {"import": 0.0}
    with one_pass_heap(), single_pass():
        report = _run_steps(phase, fleet_dir, out_dir, now_text, timings, started, keep)
    report["seconds"] = timings
    return report


def _run_steps(
    phase: str,
    fleet_dir: Path,
    out_dir: Path | None,
    now_text: str,
    timings: dict[str, float],
    started: float,
    keep: list[object] | None,
) -> dict[str, object]:
    """Import, load, pass and write as `phase` asks, putting each step's seconds in `timings`."""
    from gitfleet.api import parse_time
    from gitfleet.repo.outdir import write_output
    from gitfleet.repo.workdir import WorkdirTree
    from reconciler.pass_ import reconcile
    from reconciler.state import State
    from renderers import load_fleet

    timings["import"] = time.perf_counter() - started
    mark = time.perf_counter()
    fleet = load_fleet(WorkdirTree(fleet_dir))
    timings["load"] = time.perf_counter() - mark
    report: dict[str, object] = {"phase": phase, "loadErrors": len(fleet.errors)}
    if keep is not None:
        keep.append(fleet)
    if phase in ("pass", "write"):
        mark = time.perf_counter()
        result = reconcile(fleet, State(), None, parse_time(now_text))
        timings["pass"] = time.perf_counter() - mark
        report.update(errors=len(result.errors), files=len(result.files))
        if keep is not None:
            keep.append(result)
        if phase == "write":
            if out_dir is None:
                raise ValueError("the write phase needs --out")
            mark = time.perf_counter()
            write_output(out_dir, result.files)
            timings["write"] = time.perf_counter() - mark
    return report


def main(argv: list[str] | None = None) -> NoReturn:
    """Parse arguments, run the phase, print its JSON report on one line, exit as the CLI does
    (the fleet and the result still held)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("phase", choices=PHASES)
    p.add_argument("fleet", type=Path)
    p.add_argument("--out", type=Path)
    p.add_argument("--now", default=DEFAULT_NOW)
    args = p.parse_args(argv)
    held: list[object] = []
    print(json.dumps(run_phase(args.phase, args.fleet, args.out, args.now, held), sort_keys=True))
    from gitfleet.quickexit import exit_quickly

    exit_quickly(0)


if __name__ == "__main__":
    main()

"""`reconciler.steptimer.StepTimer`: wall and CPU seconds per step, the CPU of the child
processes a step waited for included (a real subprocess that burns CPU); the pure pass times
its stages with it."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from gitfleet.repo.workdir import WorkdirTree
from reconciler.pass_ import STAGES, reconcile
from reconciler.state import State
from reconciler.steptimer import StepTimer
from renderers import load_fleet

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)

BURN = "import time\nend = time.process_time() + 0.15\nwhile time.process_time() < end: pass\n"


def test_each_step_gets_its_own_wall_and_cpu_seconds() -> None:
    timer = StepTimer()
    timer.start()
    time.sleep(0.05)  # wall, no CPU
    timer.lap("wait")
    subprocess.run([sys.executable, "-c", BURN], check=True)  # a child's CPU
    timer.lap("child")
    assert [s for s, _ in timer.timings] == [s for s, _ in timer.cpu_timings] == ["wait", "child"]
    (_, wait_wall), (_, child_wall) = timer.timings
    (_, wait_cpu), (_, child_cpu) = timer.cpu_timings
    assert wait_wall >= 0.05 and wait_cpu < 0.04
    assert child_cpu >= 0.14 and child_wall >= 0.14


def test_start_forgets_the_last_attempts_laps() -> None:
    timer = StepTimer()
    timer.lap("fetch")
    timer.stages = ((("plan", 0.1),), (("plan", 0.1),))
    timer.start()
    timer.lap("load")
    assert [s for s, _ in timer.timings] == [s for s, _ in timer.cpu_timings] == ["load"]
    assert timer.stages == ((), ())  # the last attempt's pass stages are not this one's


def test_a_pass_times_its_stages_in_order_and_results_compare_without_them() -> None:
    """`reconcile` laps every stage of `STAGES` once, in order; two passes on the same inputs
    are equal results though their timings differ (the timings are diagnostics)."""
    fleet = load_fleet(WorkdirTree(ROOT / "examples/quickstart"))
    first = reconcile(fleet, State(), None, NOW)
    assert [s for s, _ in first.stage_timings] == [s for s, _ in first.stage_cpu_timings]
    assert [s for s, _ in first.stage_timings] == list(STAGES)
    assert all(seconds >= 0 for _, seconds in first.stage_timings + first.stage_cpu_timings)
    slower = replace(first, stage_timings=(("plan", 9.0),), stage_cpu_timings=())
    assert slower == first

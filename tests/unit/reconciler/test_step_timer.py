"""`reconciler.steptimer.StepTimer`: wall and CPU seconds per step, the CPU of the child
processes a step waited for included (a real subprocess that burns CPU)."""

from __future__ import annotations

import subprocess
import sys
import time

from reconciler.steptimer import StepTimer

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
    timer.start()
    timer.lap("load")
    assert [s for s, _ in timer.timings] == [s for s, _ in timer.cpu_timings] == ["load"]

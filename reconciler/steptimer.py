"""Wall and CPU seconds per step of one hub pass (fetch, load, prior, pass, diff, commit,
push, maintain), for `PassReport.timings` and `PassReport.cpu_timings`, and per stage of the
pure pass (`reconciler.pass_.STAGES`, for `PassResult.stage_timings`).

CPU is this process's (every thread) plus the children it waited for: the git processes a step
ran. The mirror's long-running `git cat-file` processes are not waited for, so their CPU is in
no step (`benchmarks/bench_hub.py` reads theirs from `/proc`). Diagnostics only: nothing of it
reaches the output. Called by `reconciler.loop.Hub`, `reconciler.pass_.reconcile` (and
`benchmarks/bench_hub.py`: `process_cpu`).
"""

from __future__ import annotations

import resource
import time

Laps = tuple[tuple[str, float], ...]
"""(step or stage, seconds) in order."""


def process_cpu() -> float:
    """CPU seconds (user + system) of this process and the children it waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class StepTimer:
    """Laps of one attempt: `start()` at its beginning, `lap(step)` at the end of each step."""

    def __init__(self) -> None:
        self.timings: list[tuple[str, float]] = []
        self.cpu_timings: list[tuple[str, float]] = []
        self.stages: tuple[Laps, Laps] = ((), ())
        """The attempt's pass stages, wall and CPU seconds (`PassResult.stage_timings`), when
        it ran a pass."""
        self._mark = (time.perf_counter(), process_cpu())

    def start(self) -> None:
        self.timings.clear()
        self.cpu_timings.clear()
        self.stages = ((), ())
        self._mark = (time.perf_counter(), process_cpu())

    def lap(self, step: str) -> None:
        now = (time.perf_counter(), process_cpu())
        self.timings.append((step, now[0] - self._mark[0]))
        self.cpu_timings.append((step, now[1] - self._mark[1]))
        self._mark = now

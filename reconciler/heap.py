"""The long-running hub's garbage-collector policy.

A hub keeps large memo tables between passes (parsed sources, rendered manifests, emitted
documents, blob ids). CPython's cyclic collector re-walks every tracked object of the oldest
generation whenever it runs, so at fleet-1k a pass spent seconds re-scanning caches that cannot
be garbage. After each pass, `HeapKeeper.after_pass` freezes the survivors (`gc.freeze`): later
collections then walk only newer objects. Frozen objects are still freed by reference counting
when a cache drops them; only reference cycles among them wait for the next full collection.

A pass makes next to no cyclic garbage: at fleet-1k a full collection after a pass found 0
unreachable objects, both after the first pass of a process (which builds every cache: 1.0 s)
and after each steady-state pass (25-200 ms, walking the pass's new memo entries; a collection
of the youngest generation alone walks them too: freeing old cache entries keeps its
allocation count low while it fills). So a pass only freezes, and the heap is collected in
full only once the process's peak RSS has grown by a quarter (`GROWTH`) since the last full
collection (or since the first pass), as CPython itself walks its oldest generation only when
it grew by a quarter. Garbage cycles among frozen objects hold memory that is not reused, so
they raise the peak and are collected; a hub whose caches keep their size (entries replaced,
the old ones freed by reference counting) does not pay the ~1 s walk of a full collection at
fleet-1k every 50 passes, as it did with a fixed period. The peak is one `getrusage` call
(counting the frozen objects, `gc.get_freeze_count`, walks them all: ~0.2 s at fleet-1k).
Young-generation collections run less often (`YOUNG_THRESHOLD` allocations instead of 700),
and the collector never walks the oldest generation on its own (`OLD_THRESHOLD`): in the first
pass of a process, when nothing is frozen yet, each of those collections walked every object
built so far (four of them in a cold fleet-1k pass, all finding nothing, ~10% of its CPU).
Process-wide, so only `gitfleet reconcile` and the benchmarks turn it on
(`HubConfig.manage_heap`).

A command that runs one pass and exits (`render`, `validate`, `explain`, `plan`,
`reconcile --once`) collects nothing while it runs (`one_pass_heap`): with CPython's defaults
the oldest generation was walked 13 times in a cold fleet-1k pass, 4.5 s of its ~16 s CPU, each
time finding nothing; with the hub's thresholds the young and middle collections still took
0.53 s of a 6.5 s single-pass pass (147 and 13 of them), and restoring the thresholds at the end
set off one full collection of the whole heap, 0.46 s more, just before the process exits. Its
peak RSS is the same without any collection (551 MiB at fleet-1k, 3,551 MiB at fleet-10k). When
the command ends, everything it made joins the oldest generation without being walked, and the
collector is on again as it was (a test process running commands in-process keeps collecting).
Called by `reconciler.loop` and `gitfleet.cli`.
"""

from __future__ import annotations

import gc
import resource
from collections.abc import Iterator
from contextlib import contextmanager

GROWTH = 1.25
"""Peak RSS, as a multiple of the peak at the last full collection, that makes the next."""
YOUNG_THRESHOLD = 10_000
OLD_THRESHOLD = 1_000_000
"""Middle-generation collections before the oldest one is walked: never, in practice."""


class HeapKeeper:
    """Freeze after every pass; collect everything first once the peak RSS grew by GROWTH."""

    def __init__(self) -> None:
        self.passes = 0
        self.full_collections = 0
        self.baseline: int | None = None
        """Peak RSS at the last full collection (None: before the first pass)."""
        collect_rarely()

    def after_pass(self) -> None:
        """Called after every pass that rendered (committed or unchanged); skipped passes make
        next to no garbage."""
        self.passes += 1
        peak = peak_rss()
        if self.baseline is None:
            self.baseline = peak  # the first pass: its caches are the live heap
        elif peak > self.baseline * GROWTH:
            gc.unfreeze()
            gc.collect()
            self.baseline, self.full_collections = peak, self.full_collections + 1
        gc.freeze()


def collect_rarely() -> None:
    """Young collections every YOUNG_THRESHOLD allocations; the oldest generation never on its
    own (the middle threshold stays)."""
    _, middle, _ = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, OLD_THRESHOLD)


@contextmanager
def one_pass_heap() -> Iterator[None]:
    """No cyclic collection for the duration of a command that runs a pass and exits, and
    what it made goes to the oldest generation unwalked when it ends (`gc.freeze` then
    `gc.unfreeze`: two list splices; not when objects were frozen before, which unfreezing
    would thaw); the collector's state before it comes back after."""
    enabled, frozen = gc.isenabled(), gc.get_freeze_count()
    gc.disable()
    try:
        yield
    finally:
        if not frozen:
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()


def peak_rss() -> int:
    """The process's peak resident set size (its unit differs by platform; only ratios count)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

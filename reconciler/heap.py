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
allocation count low while it fills). So a pass only freezes, and every `FULL_EVERY`-th pass
collects everything first. Young-generation collections run less often (`YOUNG_THRESHOLD`
allocations instead of 700), and the collector never walks the oldest generation on its own
(`OLD_THRESHOLD`): in the first pass of a process, when nothing is frozen yet, each of those
collections walked every object built so far (four of them in a cold fleet-1k pass, all
finding nothing, ~10% of its CPU); the full collection every `FULL_EVERY` passes is the one
that looks for cycles among old objects. Process-wide, so only `gitfleet reconcile` and the benchmarks turn
it on (`HubConfig.manage_heap`). Called by `reconciler.loop`.
"""

from __future__ import annotations

import gc

FULL_EVERY = 50
"""Passes between full collections of everything frozen (reference cycles among old objects)."""
YOUNG_THRESHOLD = 10_000
OLD_THRESHOLD = 1_000_000
"""Middle-generation collections before the oldest one is walked: never, in practice."""


class HeapKeeper:
    """Freeze after every pass; every FULL_EVERY passes, collect everything first."""

    def __init__(self) -> None:
        self.passes = 0
        _, middle, _ = gc.get_threshold()
        gc.set_threshold(YOUNG_THRESHOLD, middle, OLD_THRESHOLD)

    def after_pass(self) -> None:
        """Called after every pass that rendered (committed or unchanged); skipped passes make
        next to no garbage."""
        self.passes += 1
        if self.passes % FULL_EVERY == 0:
            gc.unfreeze()
            gc.collect()
        gc.freeze()

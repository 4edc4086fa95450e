"""The long-running hub's garbage-collector policy.

A hub keeps large memo tables between passes (parsed sources, rendered manifests, emitted
documents, blob ids). CPython's cyclic collector re-walks every tracked object of the oldest
generation whenever it runs, so at fleet-1k a pass spent seconds re-scanning caches that cannot
be garbage. After each pass, `HeapKeeper.after_pass` collects what that pass left behind and
freezes the survivors (`gc.freeze`): later collections then walk only newer objects. Frozen
objects are still freed by reference counting when a cache drops them; only reference cycles
among them wait for the periodic full collection (every `FULL_EVERY` passes). Young-generation
collections run less often (`YOUNG_THRESHOLD` allocations instead of 700). Process-wide, so only
`gitfleet reconcile` and the benchmarks turn it on (`HubConfig.manage_heap`). Called by
`reconciler.loop`.
"""

from __future__ import annotations

import gc

FULL_EVERY = 50
"""Passes between full collections of everything frozen (reference cycles among old objects)."""
YOUNG_THRESHOLD = 10_000


class HeapKeeper:
    """Collect and freeze after every pass; a full collection every FULL_EVERY passes."""

    def __init__(self) -> None:
        self.passes = 0
        _, middle, old = gc.get_threshold()
        gc.set_threshold(YOUNG_THRESHOLD, middle, old)

    def after_pass(self) -> None:
        """Called after every pass that rendered (committed or unchanged); skipped passes make
        next to no garbage."""
        self.passes += 1
        if self.passes % FULL_EVERY == 0:
            gc.unfreeze()
        gc.collect()
        gc.freeze()

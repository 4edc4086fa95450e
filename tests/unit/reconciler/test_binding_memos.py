"""Facts remembered on a binding object (its hash, `rollsync`'s WorkSynchronized, `rollmove`'s
RolloutStarted) leave every binding with one shared key table, whatever order they are asked
in, and never change what the binding is."""

from __future__ import annotations

import platform
import tracemalloc
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from reconciler import rollmove, rollsync
from reconciler.binding import MEMO_ATTRIBUTES, Binding

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _started(cluster: str) -> Binding:
    """A binding that already carries RolloutStarted True (so `with_started` remembers it)."""
    first = rollmove.with_started(Binding("c", "Bound", 0, 1, content="x"), "True", NOW)
    return Binding(cluster, "Bound", 0, 1, content="x", conditions=first.conditions)


def _ask_started(b: Binding) -> object:
    return rollmove.with_started(b, "True", NOW)


ASKS: list[Callable[[Binding], object]] = [hash, rollsync._synchronized, _ask_started]


def test_remembered_facts_are_facts_of_the_binding() -> None:
    b = _started("c1")
    assert [b.__dict__[name] for name in MEMO_ATTRIBUTES] == [None, None, None]
    for ask in ASKS:
        assert ask(b) == ask(b)
    assert rollmove.with_started(b, "True", NOW) is b
    assert rollsync._synchronized(b) is False
    other = replace(b, content="y")  # a new binding remembers nothing of the old one's
    assert [other.__dict__[name] for name in MEMO_ATTRIBUTES] == [None, None, None]
    assert b == _started("c1") and hash(b) == hash(_started("c1"))


@pytest.mark.skipif(platform.python_implementation() != "CPython", reason="CPython's dicts")
def test_bindings_asked_in_any_order_keep_one_key_table() -> None:
    bindings = [_started(f"c{i}") for i in range(3000)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i, b in enumerate(bindings):
            for ask in ASKS[i % 3 :] + ASKS[: i % 3]:
                ask(b)
        grown = (tracemalloc.get_traced_memory()[0] - before) / len(bindings)
    finally:
        tracemalloc.stop()
    assert grown < 300  # ~100 bytes; ~750 when a key added late gives a dict of its own

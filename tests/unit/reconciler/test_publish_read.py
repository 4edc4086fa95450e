"""What decision files are written from (`publishread`): patched from last pass's reading where
the bindings and decisions are other objects, it equals a reading made afresh, and names
exactly the clusters whose binding state or decision changed (the set differences the writer
took before); a cluster with two bindings or two decisions is read afresh (not unique)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reconciler.binding import Binding
from reconciler.publishread import read_afresh, read_changes
from reconciler.schedule.outcome import Decision

Change = Callable[[list[Binding], list[Decision]], None]


def _fleet(n: int = 40) -> tuple[list[Binding], list[Decision]]:
    names = [f"c{i:03d}" for i in range(n)]
    bindings = [Binding(c, "Bound" if i % 3 else "Scheduled", 0) for i, c in enumerate(names)]
    decisions = [Decision(c, i % 5 != 0, f"picked {i % 4}") for i, c in enumerate(names)]
    return bindings, decisions


def _add(b: list[Binding], d: list[Decision]) -> None:
    b.insert(0, Binding("a-new", "Scheduled", 0))
    d.insert(0, Decision("a-new", True, "picked"))


def _remove(b: list[Binding], d: list[Decision]) -> None:
    del b[7], d[7]


def _insert_middle(b: list[Binding], d: list[Decision]) -> None:
    b.insert(20, Binding("c019x", "Bound", 0))
    d.insert(20, Decision("c019x", True, "picked"))


def _swap(b: list[Binding], d: list[Decision]) -> None:
    b[5], b[30] = b[30], b[5]  # the very objects, other places
    d[0], d[-1] = d[-1], d[0]


def _append(b: list[Binding], d: list[Decision]) -> None:
    b.append(Binding("z-last", "Scheduled", 0))
    d.append(Decision("z-last", False, "not picked"))


def _state(b: list[Binding], d: list[Decision]) -> None:
    b[4] = Binding(b[4].cluster, "Unscheduled", 0)


def _reason(b: list[Binding], d: list[Decision]) -> None:
    d[9] = Decision(d[9].cluster, d[9].selected, "another reason")


def _equal_copy(b: list[Binding], d: list[Decision]) -> None:
    b[3] = Binding(b[3].cluster, b[3].state, 0)  # another object, nothing changed
    d[3] = Decision(d[3].cluster, d[3].selected, d[3].reason)


def _twice(b: list[Binding], d: list[Decision]) -> None:
    b.append(Binding(b[0].cluster, "Bound", 0))


def _twice_decided(b: list[Binding], d: list[Decision]) -> None:
    d.append(Decision(d[0].cluster, False, "twice"))


CHANGES: list[Change] = [
    _add,
    _remove,
    _insert_middle,
    _swap,
    _append,
    _state,
    _reason,
    _equal_copy,
    _twice,
    _twice_decided,
]


@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__ for c in CHANGES])
def test_a_patched_reading_equals_a_fresh_one(change: Change) -> None:
    bindings, decisions = _fleet()
    before = read_afresh(tuple(bindings), tuple(decisions))
    old = (tuple(bindings), tuple(decisions))
    change(bindings, decisions)
    now = (tuple(bindings), tuple(decisions))
    patched, fresh = read_changes(before, old, *now), read_afresh(*now)
    assert (patched.states, patched.decided, patched.unique) == (
        fresh.states,
        fresh.decided,
        fresh.unique,
    )
    if not fresh.unique:
        assert patched.changes is None
        return
    assert patched.changes is not None
    touched, gone, new = patched.changes
    assert gone == before.decided - fresh.decided and new == fresh.decided - before.decided
    differ = {c for c, _ in before.states.items() ^ fresh.states.items()}
    assert touched == differ | {d[0] for d in gone | new}


def test_the_same_objects_keep_the_very_reading() -> None:
    bindings, decisions = _fleet()
    old = (tuple(bindings), tuple(decisions))
    before = read_afresh(*old)
    again = read_changes(before, old, tuple(bindings), tuple(decisions))
    assert again.states is before.states and again.decided is before.decided
    assert again.changes == (set(), set(), set())


def test_many_changes_are_read_afresh() -> None:
    bindings, decisions = _fleet()
    old = (tuple(bindings), tuple(decisions))
    before = read_afresh(*old)
    now = tuple(Binding(b.cluster, "Unscheduled", 0) for b in bindings)
    patched = read_changes(before, old, now, tuple(decisions))
    assert patched.changes is None and patched.states == read_afresh(now, decisions).states

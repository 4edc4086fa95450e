"""What a placement's decision files are written from, read from its bindings and decisions by
patching last pass's reading where they are other objects.

A placement recomputed because a cluster came or went hands the decision writer new tuples of
bindings and decisions, but all of them but a few are last pass's very objects (the scheduler
keeps unchanged ones). `read_changes` finds the others by identity (in C: the ids of either
tuple in a set; the earlier tuple holds its objects, so their ids are theirs) and patches last
pass's binding states and (cluster, selected, reason) decisions with them, and names the
clusters whose state or decision changed: a placement of 1,000 clusters costs its changes, not
a tuple and a hash per cluster. Called by `reconciler.publish`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter, is_, not_
from typing import Any

from reconciler.stagememo import leading

PAIR = attrgetter("cluster", "state")
CLUSTER = attrgetter("cluster")
DECIDED = attrgetter("cluster", "selected", "reason")
Decided = tuple[str, bool, str]
"""(cluster, selected, reason) of one scheduling decision."""
MAX_CHANGED = 0.25
"""Above this share of other objects the reading is made afresh."""


@dataclass(frozen=True)
class Reading:
    """Each cluster's binding state, the (cluster, selected, reason) decisions, whether no
    cluster has two of either, and (when patched) the clusters whose state or decision may
    have changed since the reading it was patched from (None: unknown)."""

    states: dict[str, str]
    decided: set[Decided]
    unique: bool
    changes: tuple[set[str], set[Decided], set[Decided]] | None = None
    """(the clusters whose state or decision may have changed, the decisions gone, the new
    ones) since the reading this one was patched from (None: not patched)."""


def read_afresh(bindings: Sequence[Any], decisions: Sequence[Any]) -> Reading:
    states = dict(map(PAIR, bindings))
    unique = len(states) == len(bindings) and len(set(map(CLUSTER, decisions))) == len(decisions)
    return Reading(states, set(map(DECIDED, decisions)), unique)


def read_changes(
    before: Reading, old: tuple[Sequence[Any], Sequence[Any]], bindings: Any, decisions: Any
) -> Reading:
    """The reading of `bindings` and `decisions`, patched from `before` (a unique reading of
    the bindings and decisions `old`) where they are other objects."""
    gone_b, came_b = _diff(old[0], bindings)
    gone_d, came_d = _diff(old[1], decisions)
    if len(gone_b) + len(came_b) + len(gone_d) + len(came_d) > MAX_CHANGED * (
        len(bindings) + len(decisions)
    ):
        return read_afresh(bindings, decisions)
    states = before.states
    if gone_b or came_b:
        states = dict(states)
        for binding in gone_b:
            states.pop(binding.cluster, None)
        states.update(map(PAIR, came_b))
    if len(states) != len(bindings) or len(set(map(CLUSTER, decisions))) != len(decisions):
        return read_afresh(bindings, decisions)
    decided = before.decided
    gone, new = set(map(DECIDED, gone_d)), set(map(DECIDED, came_d))
    gone, new = gone - new, new - gone
    if gone or new:
        decided = (decided - gone) | new
    moved = {b.cluster for b in (*gone_b, *came_b)}
    touched = {c for c in moved if before.states.get(c) != states.get(c)}
    touched |= {d[0] for d in gone} | {d[0] for d in new}
    return Reading(states, decided, True, (touched, gone, new))


def _diff(old: Sequence[Any], new: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """(items of `old` not in `new`, items of `new` not in `old`), by identity, in C: the runs
    of the very same items at the start and at the end are skipped, the rest compared by id."""
    if old is new:
        return [], []
    head = same_run(old, new, min(len(old), len(new)))
    tail = same_run(reversed(old), reversed(new), min(len(old), len(new)) - head)
    old, new = old[head : len(old) - tail], new[head : len(new) - tail]
    old_ids, new_ids = set(map(id, old)), set(map(id, new))
    gone = list(compress(old, map(not_, map(new_ids.__contains__, map(id, old)))))
    came = list(compress(new, map(not_, map(old_ids.__contains__, map(id, new)))))
    return gone, came


def same_run(old: Iterable[Any], new: Iterable[Any], limit: int) -> int:
    """How many items from the start of both are the very same objects (at most `limit`)."""
    return leading(map(is_, old, new), limit)

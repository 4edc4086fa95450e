"""A placement's bindings or decisions keyed by cluster, patched from last pass's where the tuple
holds other objects (`reconciler.statusentries` reads its per-cluster columns from these).

A placement recomputed because a cluster came or went hands over a new tuple whose items are
mostly last pass's very objects (frozen dataclasses, kept by the scheduler and the rollout).
`keyed` skips the runs of identical items at both ends by pointer comparison in C (no item is
read: a fleet's cold binding objects are not touched), reads only the items in between, and
splices them into last pass's picked items, their cluster names and the by-cluster dict. It
names the clusters whose item may be another object (`changed`), so the caller diffs nothing
else. Called by `reconciler.statusentries`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import compress
from operator import attrgetter
from typing import Any, NamedTuple

from reconciler.placement import PlacementPlan
from reconciler.publishread import same_run

CLUSTER = attrgetter("cluster")
SELECTED = attrgetter("selected")
MAX_SPLICED = 0.25
"""Above this share of items between the identical runs a `Keyed` is made afresh."""


class Keyed(NamedTuple):
    """The items of a tuple that `pick` picks (all: no `pick`), keyed by cluster."""

    items: Sequence[Any]
    flags: list[bool]
    """Whether each item of `items` is picked."""
    picked: list[Any]
    names: list[str]
    """The cluster of each picked item."""
    by_name: dict[str, Any]
    """Cluster -> its picked item (meant for a `unique` one: with two, one of them)."""
    changed: set[str] | None
    """The clusters whose picked item may be another object than in the `Keyed` this one was
    patched from (None: made afresh)."""

    @property
    def unique(self) -> bool:
        """No cluster has two picked items."""
        return len(self.by_name) == len(self.names)


def keyed_afresh(items: Sequence[Any], pick: Callable[[Any], bool] | None) -> Keyed:
    flags = list(map(pick, items)) if pick is not None else [True] * len(items)
    picked = list(compress(items, flags))
    names = list(map(CLUSTER, picked))
    return Keyed(items, flags, picked, names, dict(zip(names, picked, strict=True)), None)


def keyed(
    before: Keyed | None, items: Sequence[Any], pick: Callable[[Any], bool] | None = None
) -> Keyed:
    """`keyed_afresh(items, pick)`, patched from `before` (made with the same `pick`; the
    caller owns it: its dict and lists are patched in place) where `items` holds other
    objects than `before.items`; `changed` names the clusters patched."""
    if before is None or not before.unique:
        return keyed_afresh(items, pick)
    old = before.items
    if old is items:
        return before._replace(changed=set())
    least = min(len(old), len(items))
    head = same_run(old, items, least)
    tail = same_run(reversed(old), reversed(items), least - head)
    mid = items[head : len(items) - tail]
    if len(mid) + len(old) - head - tail > MAX_SPLICED * len(items) + 8:
        return keyed_afresh(items, pick)
    flags = list(map(pick, mid)) if pick is not None else [True] * len(mid)
    start = before.flags[:head].count(True)
    stop = start + before.flags[head : len(old) - tail].count(True)
    picked = list(compress(mid, flags))
    names = list(map(CLUSTER, picked))
    gone = before.names[start:stop]
    by_name = before.by_name  # patched in place, as are the lists: the caller owns `before`
    for name in gone:
        del by_name[name]
    by_name.update(zip(names, picked, strict=True))
    before.flags[head : len(old) - tail] = flags
    before.picked[start:stop] = picked
    before.names[start:stop] = names
    return before._replace(items=items, changed={*gone, *names})


Keys = tuple[Keyed, Keyed]
"""A placement's bindings and its selected decisions, keyed by cluster."""


def placement_keys(last: Keys | None, plan: PlacementPlan) -> Keys:
    """The plan's bindings and selected decisions keyed by cluster: `last` (which the caller
    owns) patched in place where the tuples hold other objects."""
    was = last if last is not None else (None, None)
    return keyed(was[0], plan.state.bindings), keyed(was[1], plan.decisions, SELECTED)


def moved(keys: Keys) -> tuple[set[str] | None, set[str] | None]:
    """The selected clusters whose decision, and whose binding, may be another object than in
    the keys patched (None: unknown)."""
    selected = keys[1].by_name.keys()
    decisions, bindings = keys[1].changed, keys[0].changed
    return (
        None if decisions is None else decisions & selected,
        None if bindings is None else bindings & selected,
    )


def gone(keys: Keys, held: Iterable[str]) -> set[str]:
    """Of the clusters `held` (last pass's selected ones), those no longer selected."""
    changed = keys[1].changed
    if changed is not None:
        return changed - keys[1].by_name.keys()
    return set(held) - keys[1].by_name.keys()

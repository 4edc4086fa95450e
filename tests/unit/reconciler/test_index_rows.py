"""Joining the placements' index rows per cluster (`reconciler.indexrows`): a join reusing the
last one gives exactly the full join, and keeps unchanged clusters' very tuples."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from reconciler.indexrows import MAX_CHANGED, Rows, joined_rows
from reconciler.stagememo import forget_stages


def row(key: str, n: int = 0) -> dict[str, Any]:
    return {"key": key, "n": n}


def parts() -> list[Rows]:
    return [
        {"c1": [row("held")]},
        {"c1": [row("a")], "c2": [row("a")]},
        {"c2": [row("b")], "c3": [row("b")], "c4": []},
        {"c3": [row("c")]},
    ]


def named(given: Sequence[Rows]) -> dict[str, Rows]:
    """The mappings named by their place (a mapping more gets a new name)."""
    return {f"p{i}": part for i, part in enumerate(given)}


def full(given: list[Rows]) -> dict[str, tuple[dict[str, Any], ...]]:
    forget_stages()
    return joined_rows(named(given))


EDITS = [
    ("one row changes", lambda p: p.__setitem__(1, {"c1": [row("a", 1)], "c2": [row("a")]})),
    ("a cluster leaves", lambda p: p.__setitem__(3, {})),
    ("a cluster comes", lambda p: p.__setitem__(3, {"c3": [row("c")], "c5": [row("c")]})),
    ("the only row of c4's mapping goes", lambda p: p.__setitem__(2, {"c2": [row("b")]})),
    ("two change", lambda p: (p.__setitem__(0, {}), p.__setitem__(2, {"c9": [row("b")]}))),
    ("a placement more", lambda p: p.append({"c1": [row("d")]})),
]


@pytest.mark.parametrize("edit", [e for _, e in EDITS], ids=[n for n, _ in EDITS])
def test_a_reusing_join_is_the_full_join(edit: Any) -> None:
    forget_stages()
    given = parts()
    first = joined_rows(named(given))
    edit(given)
    now = joined_rows(named(given))
    assert first != now == full(given)


def test_clusters_of_unchanged_mappings_keep_their_tuples() -> None:
    forget_stages()
    given = parts()
    first = joined_rows(named(given))
    given[1] = {"c1": [row("a", 1)], "c2": [row("a")]}
    now = joined_rows(named(given))
    assert now["c3"] is first["c3"] and now["c4"] is first["c4"]
    assert now["c1"] == (row("held"), row("a", 1))


def test_the_same_mappings_give_the_same_join() -> None:
    forget_stages()
    given = parts()
    first = joined_rows(named(given))
    assert joined_rows(named(list(given))) is first
    copied = [dict(p) for p in given]  # equal but other mappings: joined again
    again = joined_rows(named(copied))
    assert again == first and again is not first


def test_many_changes_join_in_full() -> None:
    forget_stages()
    given: list[Rows] = [{"c": [row(str(i))]} for i in range(MAX_CHANGED + 1)]
    joined_rows(named(given))
    changed: list[Rows] = [{"c": [row(str(i), 1)]} for i in range(MAX_CHANGED + 1)]
    assert joined_rows(named(changed)) == full(changed)


def test_joins_reusing_the_last_over_many_passes_are_full_joins() -> None:
    """Pass after pass a few mappings change (clusters coming, going, rows changing), the
    others are the very mappings: each join (reusing the last one) equals a plain join."""
    rng = random.Random(3)
    given: list[Rows] = [{f"c{j}": [row(str(i))] for j in range(5)} for i in range(12)]
    forget_stages()
    joined_rows(named(given))
    for n in range(300):
        given = list(given)
        for i in rng.sample(range(len(given)), rng.randrange(1, 4)):
            given[i] = {
                f"c{j}": [row(str(i), n)] * rng.randrange(3) for j in range(6) if rng.random() < 0.4
            }
        plain: dict[str, list[dict[str, Any]]] = {}
        for part in given:
            for cluster, rows in part.items():
                plain.setdefault(cluster, []).extend(rows)
        assert joined_rows(named(given)) == {c: tuple(rows) for c, rows in plain.items()}


def test_named_mappings_coming_and_going_anywhere_join_as_a_plain_join() -> None:
    """Mappings come and go anywhere in the order (a placement starting or ending a rollout
    lists its kept rows before the live ones), a few change, and twice the order of the very
    mappings changes: each join equals a plain join of the mappings in order."""
    rng = random.Random(8)
    given: dict[str, Rows] = {f"n{i}": {f"c{i % 4}": [row(str(i))]} for i in range(10)}
    forget_stages()
    for n in range(400):
        items = list(given.items())
        for _ in range(rng.randrange(1, 4) if n not in (200, 201) else 0):
            at = rng.randrange(len(items) + 1)
            part = {f"c{j}": [row(str(n), j)] for j in range(6) if rng.random() < 0.3}
            if rng.random() < 0.4 and items:
                items.pop(min(at, len(items) - 1))
            elif rng.random() < 0.5 and items:
                items[min(at, len(items) - 1)] = (items[min(at, len(items) - 1)][0], part)
            else:
                items.insert(at, (f"m{n}-{at}", part))
        if n == 200:  # the very mappings in another order
            items.reverse()
        if n == 201:  # and one of them in another place
            items.append(items.pop(0))
        given = dict(items)
        plain: dict[str, list[dict[str, Any]]] = {}
        for mapping in given.values():
            for cluster, rows in mapping.items():
                plain.setdefault(cluster, []).extend(rows)
        assert joined_rows(given) == {c: tuple(rows) for c, rows in plain.items()}


def test_a_mapping_patched_on_one_cluster_keeps_its_other_clusters_tuples() -> None:
    """A placement laid out again on c1 only hands a new mapping with c2's very rows: c2 is
    not joined again (its very tuple), c1 is."""
    forget_stages()
    given = parts()
    first = joined_rows(named(given))
    given[1] = {**given[1], "c1": [row("a", 1)]}
    now = joined_rows(named(given))
    assert now["c2"] is first["c2"]
    assert now["c1"] == (row("held"), row("a", 1)) and now == full(given)


def test_patched_mappings_over_many_passes_join_as_a_plain_join() -> None:
    """Pass after pass a few mappings are patched: some clusters' rows replaced, added or
    dropped, the others the very lists of the mapping before."""
    rng = random.Random(5)
    given: list[Rows] = [{f"c{j}": [row(str(i))] for j in range(5)} for i in range(12)]
    forget_stages()
    joined_rows(named(given))
    for n in range(300):
        given = list(given)
        for i in rng.sample(range(len(given)), rng.randrange(1, 4)):
            patched = dict(given[i])
            for j in rng.sample(range(7), 2):
                if rng.random() < 0.3:
                    patched.pop(f"c{j}", None)
                else:
                    patched[f"c{j}"] = [row(str(i), n)] * rng.randrange(3)
            given[i] = patched
        plain: dict[str, list[dict[str, Any]]] = {}
        for part in given:
            for cluster, rows in part.items():
                plain.setdefault(cluster, []).extend(rows)
        assert joined_rows(named(given)) == {c: tuple(rows) for c, rows in plain.items()}


def test_a_cluster_joining_every_mapping_joins_that_cluster_only() -> None:
    """More mappings than MAX_CHANGED gain one cluster (each a new mapping holding the other
    clusters' very rows): the other clusters keep their tuples, and the join is the full one."""
    forget_stages()
    given: list[Rows] = [
        {f"c{j}": [row(str(i))] for j in range(40)} for i in range(MAX_CHANGED + 4)
    ]
    first = joined_rows(named(given))
    grown: list[Rows] = [{**part, "new": [row(str(i), 1)]} for i, part in enumerate(given)]
    now = joined_rows(named(grown))
    assert all(now[f"c{j}"] is first[f"c{j}"] for j in range(40))
    left = joined_rows(named(given))  # and leaves them all again
    assert "new" not in left and left["c0"] is first["c0"]
    assert left == full(given) and now == full(grown)

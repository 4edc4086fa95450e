"""Joining the placements' index rows per cluster (`reconciler.indexrows`): a join reusing the
last one gives exactly the full join, and keeps unchanged clusters' very tuples."""

from __future__ import annotations

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


def full(given: list[Rows]) -> dict[str, tuple[dict[str, Any], ...]]:
    forget_stages()
    return joined_rows(given)


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
    first = joined_rows(given)
    edit(given)
    now = joined_rows(given)
    assert first != now == full(given)


def test_clusters_of_unchanged_mappings_keep_their_tuples() -> None:
    forget_stages()
    given = parts()
    first = joined_rows(given)
    given[1] = {"c1": [row("a", 1)], "c2": [row("a")]}
    now = joined_rows(given)
    assert now["c3"] is first["c3"] and now["c4"] is first["c4"]
    assert now["c1"] == (row("held"), row("a", 1))


def test_the_same_mappings_give_the_same_join() -> None:
    forget_stages()
    given = parts()
    first = joined_rows(given)
    assert joined_rows(list(given)) is first
    copied = [dict(p) for p in given]  # equal but other mappings: joined again
    again = joined_rows(copied)
    assert again == first and again is not first


def test_many_changes_join_in_full() -> None:
    forget_stages()
    given: list[Rows] = [{"c": [row(str(i))]} for i in range(MAX_CHANGED + 1)]
    joined_rows(given)
    changed: list[Rows] = [{"c": [row(str(i), 1)]} for i in range(MAX_CHANGED + 1)]
    assert joined_rows(changed) == full(changed)

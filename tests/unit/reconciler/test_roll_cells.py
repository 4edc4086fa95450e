"""`rollcells.Cells`: a placement's per-cluster results come back for rows equal to last
pass's (identical or equal), are made again for changed, new or never-reusable rows, and a
round keeps only this pass's clusters."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reconciler.rollcells import NEVER, Cells
from reconciler.stagememo import forget_stages


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


ROWS = {"a": ("x", 1), "b": ("y", 2), "c": ("z", 3)}


def _first(cells: Cells[str]) -> None:
    names = list(ROWS)
    assert cells.lookup("p", names, list(ROWS.values())) == [None, None, None]
    cells.end("p", names, list(ROWS.values()), [f"r-{n}" for n in names])


@pytest.mark.parametrize(
    ("names", "rows", "expect"),
    [
        (["a", "b", "c"], [ROWS["a"], ROWS["b"], ROWS["c"]], ["r-a", "r-b", "r-c"]),
        (["a", "b", "c"], [tuple(list(r)) for r in ROWS.values()], ["r-a", "r-b", "r-c"]),
        (["a", "b", "c"], [ROWS["a"], ("y", 9), ROWS["c"]], ["r-a", None, "r-c"]),  # changed
        (["a", "new", "c"], [ROWS["a"], ROWS["b"], ROWS["c"]], ["r-a", None, "r-c"]),  # joined
        (["c", "a"], [ROWS["c"], ROWS["a"]], ["r-c", "r-a"]),  # left, reordered
        (["a"], [NEVER], [None]),
    ],
)
def test_lookup_follows_each_row(
    names: list[str], rows: list[object], expect: list[str | None]
) -> None:
    cells: Cells[str] = Cells()
    _first(cells)
    assert cells.lookup("p", names, rows) == expect
    assert cells.lookup("other", names, rows) == [None] * len(names)


def test_a_round_keeps_this_pass_clusters_only() -> None:
    cells: Cells[str] = Cells()
    _first(cells)
    cells.end("p", ["a"], [NEVER], ["made"])
    assert cells.lookup("p", ["a", "b"], [NEVER, ROWS["b"]]) == [None, None]
    assert cells.peek("p", "a", ROWS["a"]) is None and cells.peek("p", "b", ROWS["b"]) is None
    cells.end("p", ["b"], [ROWS["b"]], ["r-b2"])
    assert cells.peek("p", "b", tuple(["y", 2])) == "r-b2"

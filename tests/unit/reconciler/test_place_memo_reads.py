"""`placememo._reads_same`: a remembered plan is kept only while no cluster its bindings (this
pass's or the prior's) name reads otherwise to the placement; a few changed clusters are
compared before the bindings are walked, many are narrowed to the bound ones first - the
answer is the same either way."""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest

from reconciler import placememo
from reconciler.binding import Binding


class _Facts:
    def __init__(self, rows: Mapping[str, Any]) -> None:
        self.rows = dict(rows)

    def changed_since(self, older: _Facts) -> frozenset[str]:
        names = set(self.rows) | set(older.rows)
        return frozenset(n for n in names if self.rows.get(n) != older.rows.get(n))


def _row(env: str, other: str = "x") -> tuple[None, str, dict[str, str]]:
    return (None, "digest", {"env": env, "other": other})


BASE = {f"c{i:02d}": _row("prod") for i in range(20)}


def _bindings(*names: str) -> tuple[Binding, ...]:
    return tuple(Binding(n, "Bound", 0, 0) for n in names)


def _case(changes: Mapping[str, Any], now: tuple[str, ...], prior: tuple[str, ...]) -> bool:
    rows = {**BASE, **changes}
    new = _Facts({n: r for n, r in rows.items() if r is not None})
    kept: Any = SimpleNamespace(facts=_Facts(BASE), keys=frozenset({"env"}))
    return placememo._reads_same(kept, new, (_bindings(*now), _bindings(*prior)))  # type: ignore[arg-type]


MANY_UNREAD = {f"c{i:02d}": _row("prod", "y") for i in range(12)}  # a label nobody reads
MANY_BOUND_ONE = {**MANY_UNREAD, "c13": _row("dev")}
CASES: list[tuple[str, Mapping[str, Any], tuple[str, ...], tuple[str, ...], bool]] = [
    ("nothing changed", {}, ("c01",), ("c01",), True),
    ("unbound cluster relabelled", {"c05": _row("dev")}, ("c01",), ("c01",), True),
    ("bound cluster, unread label", {"c01": _row("prod", "y")}, ("c01",), ("c01",), True),
    ("bound now, read label", {"c01": _row("dev")}, ("c01",), (), False),
    ("bound before, read label", {"c02": _row("dev")}, ("c01",), ("c02",), False),
    ("cluster added, unbound", {"c99": _row("prod")}, ("c01",), ("c01",), True),
    ("bound cluster removed", {"c01": None}, (), ("c01",), False),
    ("many unread changes", MANY_UNREAD, ("c01", "c02"), ("c01",), True),
    ("many, one bound differs", MANY_BOUND_ONE, ("c13",), (), False),
    ("many, the differing one unbound", MANY_BOUND_ONE, ("c01",), ("c02",), True),
]


@pytest.mark.parametrize(
    ("changes", "now", "prior", "same"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_reads_same(
    changes: Mapping[str, Any], now: tuple[str, ...], prior: tuple[str, ...], same: bool
) -> None:
    assert _case(changes, now, prior) is same


def test_many_is_more_than_few() -> None:
    assert len(MANY_UNREAD) > placememo._FEW_CHANGED

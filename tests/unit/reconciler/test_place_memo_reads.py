"""`placememo._changes`: a remembered plan is kept only while no cluster its bindings (this
pass's or the prior's) name reads otherwise to the placement's scheduling and governance; named
clusters changed only in labels the overrides read are listed (their override results are made
again); scheduling runs again only when a changed cluster may read otherwise to it. A few
changed clusters are all compared, many are narrowed to the named ones first."""

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


def _row(env: str, other: str = "x", tier: str = "gold") -> tuple[None, str, dict[str, str]]:
    return (None, "digest", {"env": env, "other": other, "tier": tier})


BASE = {f"c{i:02d}": _row("prod") for i in range(20)}


def _bindings(*names: str) -> tuple[Binding, ...]:
    return tuple(Binding(n, "Bound", 0, 0) for n in names)


def _changes(
    changes: Mapping[str, Any],
    names: tuple[str, ...],
    plain: frozenset[str] | None,
    prior: tuple[str, ...] = (),
) -> tuple[bool, bool, list[str]]:
    """`placememo._changes` for bindings naming `names` now and `prior` before."""
    rows = {**BASE, **changes}
    new = _Facts({n: r for n, r in rows.items() if r is not None})
    kept: Any = SimpleNamespace(facts=_Facts(BASE), keys=frozenset({"env", "tier"}), plain=plain)
    named = (frozenset(names), frozenset(prior))
    return placememo._changes(kept, new, named)  # type: ignore[arg-type]


def _case(changes: Mapping[str, Any], now: tuple[str, ...], prior: tuple[str, ...]) -> bool:
    """The plan reads the same (nothing refused, nothing to make again) when every key it
    reads is one scheduling reads."""
    _, refused, relabelled = _changes(changes, now, frozenset({"env", "tier"}), prior)
    return not refused and not relabelled


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


PLAIN = frozenset({"env"})
"""Scheduling reads `env`; the overrides read `tier` too."""
SPLIT: list[tuple[str, Mapping[str, Any], tuple[str, ...], tuple[bool, bool, list[str]]]] = [
    ("nothing changed", {}, ("c01",), (False, False, [])),
    ("named, override label", {"c01": _row("prod", tier="x")}, ("c01",), (False, False, ["c01"])),
    ("unnamed, override label", {"c05": _row("prod", tier="x")}, ("c01",), (False, False, [])),
    ("named, unread label", {"c01": _row("prod", "y")}, ("c01",), (False, False, [])),
    ("named, both", {"c01": _row("dev", tier="x")}, ("c01",), (True, True, [])),
    ("unnamed, scheduling label", {"c05": _row("dev")}, ("c01",), (True, False, [])),
    ("added", {"c99": _row("prod")}, ("c01",), (True, False, [])),
    ("named removed", {"c01": None}, ("c01",), (True, True, [])),
    (
        "many, two named override labels",
        {**MANY_UNREAD, "c01": _row("prod", "y", "x"), "c02": _row("prod", tier="x")},
        ("c02", "c01", "c15"),
        (True, False, ["c01", "c02"]),
    ),
    ("many, all named", MANY_UNREAD, tuple(MANY_UNREAD), (False, False, [])),
]


@pytest.mark.parametrize(
    ("changes", "names", "expected"), [c[1:] for c in SPLIT], ids=[c[0] for c in SPLIT]
)
def test_changes_split_scheduling_from_overrides(
    changes: Mapping[str, Any], names: tuple[str, ...], expected: tuple[bool, bool, list[str]]
) -> None:
    assert _changes(changes, names, PLAIN) == expected


def test_any_label_is_read_by_scheduling_when_its_keys_are_unknown() -> None:
    assert _changes({"c01": _row("prod", tier="x")}, ("c01",), None) == (True, True, [])

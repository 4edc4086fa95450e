"""The plan fields a placement status reads are named once (`statusdocs.READ_FIELDS`):
`placement_status_doc` reads no other field of the plan (held, PickFixed and rolled-out
placements alike), and both the inputs `_STATUSES` keys a file by (`_status_inputs`) and the
fields `FileRows` compares (`_ROWS`) read exactly those. A field read by the document and not
listed would let either reuse a stale file."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo, statusdocs
from reconciler.pass_ import reconcile
from reconciler.placement import PlacementPlan
from reconciler.state import State
from reconciler.statusrows import Made
from renderers import load_fleet

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
_PLAN_FIELDS = frozenset(f.name for f in dataclasses.fields(PlacementPlan) if f.init)
"""The plan's inputs (not `_live_memo`, `live_clusters`' answer kept with what it read)."""
_READS: set[str] = set()


class _Traced(PlacementPlan):
    """A plan that records which of its fields are read (by its own methods too)."""

    def __getattribute__(self, name: str) -> Any:
        if name in _PLAN_FIELDS:
            _READS.add(name)
        return super().__getattribute__(name)


def _traced(plan: PlacementPlan, **changes: Any) -> _Traced:
    values = {f.name: getattr(plan, f.name) for f in dataclasses.fields(plan) if f.init}
    return _Traced(**{**values, **changes})


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[PlacementPlan]]:
    placememo.forget()
    root: Path = tmp_path_factory.mktemp("fleet")
    write_fleet(build_fleet(FleetSize(16, 12, 48, 6), seed=7), root)
    result = reconcile(load_fleet(WorkdirTree(root)), State(), None, NOW)
    yield [result.plans[k] for k in sorted(result.plans)]
    placememo.forget()


def _variants(plan: PlacementPlan) -> list[_Traced]:
    return [
        _traced(plan),
        _traced(plan, held=True, errors=[("spec", "broken")]),
        _traced(plan, fixed_names=len(plan.decisions) + 2),
        _traced(plan, waits=dict.fromkeys(plan.desired, "waiting: a test")),
    ]


def test_the_status_document_reads_only_the_listed_fields(plans: list[PlacementPlan]) -> None:
    for plan in plans:
        for traced in _variants(plan):
            placememo.forget()
            _READS.clear()
            statusdocs.placement_status_doc(traced, ((), {}), {}, NOW)
            assert _READS - {"key"} <= statusdocs.READ_FIELDS, plan.key  # key: the memo's


def test_the_status_document_reads_the_fields_that_are_not_always_empty(
    plans: list[PlacementPlan],
) -> None:
    """The list is not a loose superset: the documents of the fleet read every listed field."""
    read: set[str] = set()
    for plan in plans:
        for traced in _variants(plan):
            placememo.forget()
            _READS.clear()
            statusdocs.placement_status_doc(traced, ((), {}), {}, NOW)
            read |= _READS
    assert read - {"key"} == statusdocs.READ_FIELDS


def test_the_status_inputs_read_exactly_the_listed_fields(plans: list[PlacementPlan]) -> None:
    _READS.clear()
    statusdocs._status_inputs(_traced(plans[0]))
    assert _READS == statusdocs.READ_FIELDS


def test_the_kept_rows_compare_exactly_the_listed_fields(plans: list[PlacementPlan]) -> None:
    placememo.forget()
    _READS.clear()
    statusdocs._ROWS.files(
        {"k": _traced(plans[0])}, lambda _: None, "s/{}".format, lambda *_: Made(b"", False, None)
    )
    placememo.forget()
    assert _READS == statusdocs.READ_FIELDS

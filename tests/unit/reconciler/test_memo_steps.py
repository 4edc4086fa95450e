"""The stages' remembered results across rollout steps: every stepped golden fleet's step is
rendered from every step's output as prior, each right after whatever the pass before left in
the memos, and must equal the same pass computed afresh. Variants mix what a long-running hub
can meet: the same inputs an hour later, reports that name failed objects (then others) while
nothing else moved, and a prior whose condition times differ while nothing else does."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gitfleet.api import Condition, parse_time
from gitfleet.api.report import AgentReport, FailedResourcePlacement
from gitfleet.cli.app import read_reports_dir
from gitfleet.load.model import FleetSnapshot
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo
from reconciler.pass_ import reconcile
from reconciler.state import State
from renderers import load_fleet
from tests.golden.test_golden import STEPPED, case_spec, next_prior, render_case

Inputs = tuple[FleetSnapshot, dict[str, AgentReport], datetime]


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    placememo.forget()
    yield
    placememo.forget()


def _priors(case: Path, steps: list[Mapping[str, Any]]) -> list[State]:
    """The prior of every step in the golden chain, and the last step's output."""
    files = render_case(case, State())
    priors = [next_prior(files)]
    for step in steps:
        files = render_case(case, priors[-1], step)
        priors.append(next_prior(files))
    return priors


def _retimed(prior: State) -> State:
    """`prior` with every condition time in its files a day earlier (nothing else changed)."""
    files = {p: d.replace(b"2026-11-21T", b"2026-11-20T") for p, d in prior.output.items()}
    return next_prior(files)


def _failing(reports: Mapping[str, AgentReport], name: str) -> dict[str, AgentReport]:
    """Every report entry also naming one failed object, `name`."""
    failed = FailedResourcePlacement(
        version="v1",
        kind="ConfigMap",
        name=name,
        namespace="web",
        condition=Condition(type="Applied", status="False", reason="Failed", message="denied"),
    )
    return {
        cluster: report.model_copy(
            update={
                "placements": [
                    p.model_copy(update={"failed_placements": [failed]}) for p in report.placements
                ]
            }
        )
        for cluster, report in reports.items()
    }


def _inputs(case: Path, step: Mapping[str, Any]) -> Inputs:
    spec = {**case_spec(case), **{k: step[k] for k in ("now", "fleet") if k in step}}
    fleet = load_fleet(WorkdirTree((case / spec.get("fleet", "fleet")).resolve()))
    reports, problems = read_reports_dir(
        case / step.get("reports", f"steps/{step['name']}/reports")
    )
    assert not problems
    return fleet, dict(reports or {}), parse_time(spec["now"])


def _variants(case: Path, step: Mapping[str, Any]) -> list[Inputs]:
    fleet, reports, now = _inputs(case, step)
    return [
        (fleet, reports, now),
        (fleet, reports, now + timedelta(hours=1)),
        (fleet, _failing(reports, "settings"), now),
        (fleet, _failing(reports, "other"), now),  # the same conditions, another object
    ]


@pytest.mark.parametrize("case", STEPPED, ids=lambda p: p.name)
def test_any_step_from_any_prior_reuses_only_what_it_may(case: Path) -> None:
    steps: list[Mapping[str, Any]] = case_spec(case)["steps"]
    priors = _priors(case, steps)
    placememo.forget()
    for step in steps:
        for prior in (p for each in priors for p in (each, _retimed(each))):
            for fleet, reports, now in _variants(case, step):
                reused = reconcile(fleet, prior, None, now, reports)
                placememo.forget()
                fresh = reconcile(fleet, prior, None, now, reports)
                differ = sorted(p for p in fresh.files if reused.files.get(p) != fresh.files[p])
                assert not differ and reused.files.keys() == fresh.files.keys(), (
                    step["name"],
                    differ[:3],
                )
                assert reused.errors == fresh.errors

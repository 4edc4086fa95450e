"""`gitfleet reconcile --output json`: each pass is one JSON line whose `steps` give every step's
wall and CPU seconds, and whose `pass` step lists the pure pass's stages the same way."""

from __future__ import annotations

import json

import pytest

from gitfleet.cli.app import _print_pass
from reconciler.hubconfig import PassReport


def test_the_pass_step_lists_its_stages(capsys: pytest.CaptureFixture[str]) -> None:
    report = PassReport(
        "committed",
        timings=(("fetch", 0.01), ("pass", 0.5), ("commit", 0.02)),
        cpu_timings=(("fetch", 0.004), ("pass", 0.48), ("commit", 0.01)),
        stage_timings=(("plan", 0.2), ("state", 0.1234)),
        stage_cpu_timings=(("plan", 0.19), ("state", 0.1)),
    )
    _print_pass(report, "json")
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert [s["step"] for s in steps] == ["fetch", "pass", "commit"]
    assert steps[1]["stages"] == [
        {"stage": "plan", "seconds": 0.2, "cpuSeconds": 0.19},
        {"stage": "state", "seconds": 0.123, "cpuSeconds": 0.1},
    ]
    assert "stages" not in steps[0] and "stages" not in steps[2]


def test_a_skipped_pass_has_no_stages(capsys: pytest.CaptureFixture[str]) -> None:
    report = PassReport("skipped", timings=(("fetch", 0.01),), cpu_timings=(("fetch", 0.004),))
    _print_pass(report, "json")
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert steps == [{"step": "fetch", "seconds": 0.01, "cpuSeconds": 0.004}]

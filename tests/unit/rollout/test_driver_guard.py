"""A rollout driver's unexpected failure stays with the run (or driver) that raised: the run keeps
its previous documents and gets an error at its own file, naming no exception text; every other
run and placement goes on (`reconciler.rollout.guard`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from reconciler.rollout import cgu as cgu_module
from reconciler.rollout import drivers
from reconciler.rollout import staged as staged_module
from reconciler.rollout.model import DriverResult, ExternalUpdate, RolloutInputs
from tests.unit.rollout.cgu_helpers import Fleet, at, cgu
from tests.unit.rollout.stagedkit import Sim, binding, fleet, run, strategy, view
from tests.unit.rollout.test_pass_rollout import EXTERNAL, Stepper, write_fleet

SECRET = "s3cr3t-value"


def test_a_staged_run_that_raises_keeps_its_status_and_the_others_go_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stages = [{"name": "all", "labelSelector": {}}]
    sim = Sim(
        fleet(strategy(stages), run("run1"), run("run2", placement="gone")),
        view([binding("a"), binding("b")]),
        {"a": {}, "b": {}},
    )
    sim.step()
    before = dict(sim.prior)
    original = staged_module._step_run

    def step_run(ref: Any, *args: Any) -> None:
        if ref.name == "run1":
            raise RuntimeError(SECRET)
        original(ref, *args)

    monkeypatch.setattr(staged_module, "_step_run", step_run)
    result = sim.step()
    path = "status/updateruns/run1.yaml"
    assert result.files[path] == before[path]
    assert "status/updateruns/run2.yaml" in result.files
    [fault] = [e for e in result.errors if "internal error" in e[3]]
    assert fault[:3] == ("rollouts/run1.yaml", 1, "")
    assert fault[3].startswith(
        "internal error while driving ClusterStagedUpdateRun/run1: RuntimeError at "
        "test_driver_guard.py:"
    )
    assert SECRET not in str(result.errors)
    # Its placement waits for it (and is not called "no update run targets this placement").
    assert ExternalUpdate("app", "ClusterStagedUpdateRun/run1") in result.updates


def test_a_cluster_group_upgrade_that_raises_keeps_its_documents_and_the_others_go_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    f = Fleet([cgu("a"), cgu("b", managedPolicies=["other"])])
    f.step(at(0))
    before = dict(f.output)
    original = cgu_module.advance  # type: ignore[attr-defined]

    def advance(inp: Any, run: Any, ctx: Any) -> Any:
        if inp.name == "a":
            raise KeyError(SECRET)
        return original(inp, run, ctx)

    monkeypatch.setattr(cgu_module, "advance", advance)
    result = f.step(at(1))
    for path in (
        "status/clustergroupupgrades/default/a.yaml",
        "state/clustergroupupgrades/default/a.yaml",
    ):
        assert result.files[path] == before[path]
    assert "status/clustergroupupgrades/default/b.yaml" in result.files
    faults = [e for e in result.errors if "internal error" in e[3]]
    assert [e[3].split(":")[0] for e in faults] == [
        "internal error while driving ClusterGroupUpgrade/default/a"
    ]
    assert faults[0][0] == "rollouts/cgu.yaml"
    assert SECRET not in str(result.errors)


def test_a_driver_that_raises_outside_any_run_fails_alone_through_the_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fleet(tmp_path, EXTERNAL)
    s = Stepper(tmp_path)
    state = {"fail": False}

    def flaky(fleet: Any, inputs: RolloutInputs, prior: Mapping[str, bytes]) -> DriverResult:
        if state["fail"]:
            raise ValueError(SECRET)
        return DriverResult(files={"status/updateruns/r1.yaml": b"x: 1\n"})

    def mover(fleet: Any, inputs: RolloutInputs, prior: Mapping[str, bytes]) -> DriverResult:
        update = ExternalUpdate("web", "ClusterGroupUpgrade/default/g", {"c2": 0})
        return DriverResult(updates=(update,))

    monkeypatch.setitem(drivers.OUTPUTS, flaky, ("status/updateruns/",))
    s.step((flaky, mover))
    state["fail"] = True
    result = s.step((flaky, mover))
    assert s.files["status/updateruns/r1.yaml"] == b"x: 1\n"  # kept as it was
    assert s.on(0) == ["c2"]  # the other driver still moved its cluster
    messages = [e.message for e in result.errors if "internal error" in e.message]
    assert len(messages) == 1
    assert messages[0].startswith("internal error in the rollout driver flaky: ValueError at ")
    assert SECRET not in str(result.errors)

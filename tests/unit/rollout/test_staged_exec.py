"""§4.4 execution rules of staged update runs, one table row or test per rule."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from tests.unit.rollout.stagedkit import (
    T0,
    UNSCHEDULED,
    Sim,
    binding,
    clusters_at,
    cond,
    fleet,
    run,
    strategy,
    view,
)

LABELS = {c: {"env": "prod"} for c in "abcde"} | {"s": {"env": "staging"}}
PROD = {"labelSelector": {"matchLabels": {"env": "prod"}}}


def _sim(stages: list[dict[str, Any]], clusters: str = "abcde", **run_args: Any) -> Sim:
    bindings = [binding(c) for c in clusters]
    return Sim(fleet(strategy(stages), run(**run_args)), view(bindings), LABELS)


def _stage(sim: Sim, i: int) -> dict[str, Any]:
    return sim.status()["stagesStatus"][i]  # type: ignore[no-any-return]


CONCURRENCY = [
    ("percent floors", "50%", 5, ["a", "b"]),
    ("percent floors to 0 becomes 1", "10%", 5, ["a"]),
    ("integer not capped", 15, 3, ["a", "b", "c"]),
    ("default is 1", None, 3, ["a"]),
]


@pytest.mark.parametrize(
    ("value", "size", "started"), [c[1:] for c in CONCURRENCY], ids=[c[0] for c in CONCURRENCY]
)
def test_max_concurrency(value: Any, size: int, started: list[str]) -> None:
    stage = {"name": "prod", **PROD} | ({"maxConcurrency": value} if value is not None else {})
    sim = _sim([stage], clusters="abcde"[:size])
    result = sim.step()
    (update,) = result.updates
    assert sorted(update.clusters) == started
    assert set(update.clusters.values()) == {1}
    assert cond(_stage(sim, 0), "Progressing") == ("True", "StageUpdatingStarted")
    assert cond(sim.status(), "Progressing") == ("True", "UpdateRunProgressing")


def test_finished_cluster_frees_its_slot_in_the_same_pass() -> None:
    sim = _sim([{"name": "prod", **PROD}], clusters="abc")
    assert list(sim.step().updates[0].clusters) == ["a"]
    second = sim.step()
    assert list(second.updates[0].clusters) == ["b"], "a finished and b started in one pass"
    assert cond(_stage(sim, 0)["clusters"][0], "Succeeded") == ("True", "ClusterUpdatingSucceeded")
    sim.step()
    sim.step()
    assert cond(sim.status(), "Succeeded") == ("True", "UpdateRunSucceeded")
    assert cond(sim.status(), "Progressing") == ("False", "UpdateRunSucceeded")
    assert clusters_at(sim, 1) == ["a", "b", "c"]


def test_empty_stage_is_skipped_with_its_tasks() -> None:
    stages = [
        {
            "name": "empty",
            "labelSelector": {"matchLabels": {"env": "none"}},
            "beforeStageTasks": [{"type": "Approval"}],
            "afterStageTasks": [{"type": "TimedWait", "waitTime": "1h"}],
        },
        {"name": "prod", **PROD},
    ]
    sim = _sim(stages, clusters="a")
    result = sim.step()
    empty = _stage(sim, 0)
    for type_ in ("Progressing", "Succeeded"):
        found = next(c for c in empty["conditions"] if c["type"] == type_)
        assert found["reason"] == "StageUpdatingSkippedNoClusters"
        assert found["message"] == "Stage skipped because it has no clusters"
    assert cond(empty, "Progressing")[0] == "False"  # type: ignore[index]
    assert cond(empty, "Succeeded")[0] == "True"  # type: ignore[index]
    assert not any(p.startswith("status/approvals/") for p in result.files)
    assert list(result.updates[0].clusters) == ["a"], "the next stage starts in the same pass"


def test_stop_lets_in_flight_clusters_finish_and_starts_none() -> None:
    sim = _sim([{"name": "prod", **PROD, "maxConcurrency": 2}], clusters="abc")
    sim.slow = {"a", "b", "c"}
    sim.step()
    assert clusters_at(sim, 1) == ["a", "b"]
    sim.fleet = fleet(strategy([{"name": "prod", **PROD, "maxConcurrency": 2}]), run(state="Stop"))
    sim.finish("a")
    result = sim.step()
    assert not result.updates, "no new cluster starts while stopping"
    assert cond(sim.status(), "Progressing") == ("Unknown", "UpdateRunStopping")
    assert cond(_stage(sim, 0), "Progressing") == ("Unknown", "StageUpdatingStopping")
    sim.finish("b")
    sim.step()
    assert cond(sim.status(), "Progressing") == ("False", "UpdateRunStopped")
    assert cond(_stage(sim, 0), "Progressing") == ("False", "StageUpdatingStopped")
    sim.fleet = fleet(strategy([{"name": "prod", **PROD, "maxConcurrency": 2}]), run(state="Run"))
    assert list(sim.step().updates[0].clusters) == ["c"], "Run resumes"


def test_deletion_stage() -> None:
    bindings = [binding("a"), binding("z", state=UNSCHEDULED), binding("y", state=UNSCHEDULED)]
    sim = Sim(fleet(strategy([{"name": "prod", **PROD}]), run()), view(bindings), LABELS)
    sim.step()
    result = sim.step()
    assert result.updates[0].delete == frozenset({"y", "z"})
    deletion = sim.status()["deletionStageStatus"]
    assert [c["clusterName"] for c in deletion["clusters"]] == ["y", "z"]
    assert cond(deletion["clusters"][0], "Started") == ("True", "ClusterUpdatingStarted")
    assert cond(sim.status(), "Succeeded") is None
    sim.step()
    assert cond(sim.status()["deletionStageStatus"], "Succeeded") == (
        "True",
        "StageUpdatingSucceeded",
    )
    assert cond(sim.status(), "Succeeded") == ("True", "UpdateRunSucceeded")


def test_timed_wait_from_the_recorded_time() -> None:
    stages = [
        {
            "name": "staging",
            "labelSelector": {"matchLabels": {"env": "staging"}},
            "afterStageTasks": [{"type": "TimedWait", "waitTime": "10m"}],
        },
        {"name": "prod", **PROD},
    ]
    sim = _sim(stages, clusters="sa")
    sim.step()
    waiting = sim.step(timedelta(minutes=1))
    assert cond(sim.status(), "Progressing") == ("False", "UpdateRunWaiting")
    message = next(c for c in sim.status()["conditions"] if c["type"] == "Progressing")["message"]
    assert message == "The updateRun is waiting for after-stage tasks in stage staging to complete"
    assert waiting.wakeup == T0 + timedelta(minutes=11)
    assert sim.step(timedelta(minutes=9, seconds=59)).updates == ()
    done = sim.step(timedelta(seconds=1))
    task = _stage(sim, 0)["afterStageTaskStatus"][0]
    assert cond(task, "WaitTimeElapsed") == ("True", "AfterStageTaskWaitTimeElapsed")
    assert cond(_stage(sim, 0), "Succeeded") == ("True", "StageUpdatingSucceeded")
    assert list(done.updates[0].clusters) == ["a"]


def test_stuck_after_five_minutes() -> None:
    sim = _sim([{"name": "prod", **PROD, "maxConcurrency": 2}], clusters="ab")
    sim.slow = {"a", "b"}
    sim.step()
    waiting = sim.step(timedelta(minutes=4))
    assert cond(sim.status(), "Progressing") == ("True", "UpdateRunProgressing")
    assert waiting.wakeup == T0 + timedelta(minutes=5)
    sim.step(timedelta(minutes=1))
    assert cond(sim.status(), "Progressing") == ("False", "UpdateRunStuck")
    message = next(c for c in sim.status()["conditions"] if c["type"] == "Progressing")["message"]
    assert message.startswith("The updateRun is stuck waiting for a, b cluster(s) in stage prod")
    sim.finish("a")
    sim.finish("b")
    sim.step()
    assert cond(sim.status(), "Succeeded") == ("True", "UpdateRunSucceeded")


def test_failed_binding_is_retried_not_terminal() -> None:
    from reconciler.rollout.model import ObservedCondition

    sim = _sim([{"name": "prod", **PROD}], clusters="a")
    sim.slow = {"a"}
    sim.step()
    assert sim.placement is not None
    failed = binding("a", 1, ok=False)
    failed = type(failed)(
        "a",
        failed.state,
        1,
        conditions=(ObservedCondition("Applied", "False", "ManifestApplyFailed"),),
    )
    sim.placement = view([failed])
    sim.step()
    assert cond(sim.status(), "Succeeded") is None
    sim.finish("a")
    sim.step()
    assert cond(sim.status(), "Succeeded") == ("True", "UpdateRunSucceeded")


def test_preempted_cluster_fails_the_run() -> None:
    sim = _sim([{"name": "prod", **PROD}], clusters="ab")
    sim.slow = {"a"}
    sim.step()
    sim.placement = view([binding("a", 0, ok=False), binding("b")])
    sim.step()
    status = sim.status()
    assert cond(status["stagesStatus"][0]["clusters"][0], "Succeeded") == (
        "False",
        "ClusterUpdatingFailed",
    )
    assert cond(status["stagesStatus"][0], "Succeeded") == ("False", "StageUpdatingFailed")
    assert cond(status, "Succeeded") == ("False", "UpdateRunFailed")
    progressing = next(c for c in status["conditions"] if c["type"] == "Progressing")
    assert progressing["message"] == "The stages are aborted due to a non-recoverable error"
    assert not sim.step().updates, "a failed run is terminal"


def test_state_initialize_then_run_keeps_progress() -> None:
    sim = _sim([{"name": "prod", **PROD}], clusters="a", state="Initialize")
    sim.step()
    first = sim.status()["conditions"][0]["lastTransitionTime"]
    sim.fleet = fleet(strategy([{"name": "prod", **PROD}]), run(state="Run"))
    result = sim.step(timedelta(minutes=3))
    assert list(result.updates[0].clusters) == ["a"]
    assert sim.status()["conditions"][0]["lastTransitionTime"] == first
    assert {c["observedGeneration"] for c in sim.status()["conditions"]} == {2}


def test_no_change_gives_identical_bytes() -> None:
    sim = _sim([{"name": "prod", **PROD}], clusters="a")
    sim.slow = {"a"}
    sim.step()
    one = sim.step(timedelta(seconds=5))
    two = sim.step(timedelta(seconds=5))
    assert one.files == two.files


def test_namespaced_run_of_a_resource_placement() -> None:
    from dataclasses import replace

    from reconciler.rollout.model import RolloutInputs
    from reconciler.rollout.staged import drive_staged_runs

    ns_strategy = strategy([{"name": "prod", **PROD}]) | {"kind": "StagedUpdateStrategy"}
    ns_strategy["metadata"] = {"name": "strat", "namespace": "team-a"}
    ns_run = run(placement="web") | {"kind": "StagedUpdateRun"}
    ns_run["metadata"] = {"name": "run1", "namespace": "team-a"}
    snap = fleet(ns_strategy, ns_run)
    assert ("team-a", "run1") in snap.staged_update_runs
    placement = replace(
        view([binding("a")]),
        key="team-a.web",
        kind="ResourcePlacement",
        name="web",
        namespace="team-a",
    )
    result = drive_staged_runs(snap, RolloutInputs({"team-a.web": placement}, LABELS, T0), {})
    (update,) = result.updates
    assert (update.placement, update.source, dict(update.clusters)) == (
        "team-a.web",
        "StagedUpdateRun/team-a/run1",
        {"a": 1},
    )
    assert "status/updateruns/team-a/run1.yaml" in result.files


def test_older_index_is_a_rollback_and_deploys_through_the_stages() -> None:
    stage = {"name": "prod", **PROD, "maxConcurrency": 2}
    sim = Sim(
        fleet(strategy([stage]), run(index="0")), view([binding("a", 0), binding("b", 1)]), LABELS
    )
    assert dict(sim.step().updates[0].clusters) == {"a": 0, "b": 0}
    sim.step()
    assert cond(sim.status(), "Succeeded") == ("True", "UpdateRunSucceeded")
    assert clusters_at(sim, 0) == ["a", "b"]


def test_unrenderable_older_index_blocks_the_cluster_with_the_reason_not_the_run() -> None:
    stage = {"name": "prod", **PROD, "maxConcurrency": 2}
    why = (
        "resource snapshot index 0 of placement `app` was recorded at commit abc1234, "
        "which is not in this repository"
    )
    placement = replace(view([binding("a", 1), binding("b", 1)]), unavailable={0: why})
    sim = Sim(fleet(strategy([stage]), run(index="0")), placement, LABELS)
    result = sim.step()
    assert result.updates == ()
    assert [e[3] for e in result.errors] == [
        f"ClusterStagedUpdateRun/run1: cannot start cluster `a`: {why}"
    ]
    assert cond(sim.status(), "Succeeded") is None, "not terminal: a later pass may read it"


def test_overrides_frozen_at_init_must_still_be_current() -> None:
    stage = {"name": "prod", **PROD}
    placement = replace(view([binding("a", 0)]), override_snapshots={1: {"a": (("cro-0",), ())}})
    sim = Sim(fleet(strategy([stage]), run(state="Initialize")), placement, LABELS)
    sim.step()
    entry = sim.status()["stagesStatus"][0]["clusters"][0]
    assert entry["clusterResourceOverrideSnapshots"] == ["cro-0"]
    sim.fleet = fleet(strategy([stage]), run())
    sim.placement = replace(placement, override_snapshots={1: {"a": (("cro-1",), ())}})
    result = sim.step()
    assert result.updates == ()
    assert "frozen at initialization for cluster `a` (cro-0)" in result.errors[0][3]
    sim.placement = placement
    assert dict(sim.step().updates[0].clusters) == {"a": 1}

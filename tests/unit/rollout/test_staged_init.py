"""§4.2 initialization: every failure message, stage membership and order, the frozen snapshot."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.api.staged import ClusterStagedUpdateRun, StageConfig, UpdateStrategySpec
from reconciler.rollout.stagedinit import (
    InitError,
    check_tasks,
    compute_stages,
    resource_index,
    strategy_snapshot,
)
from reconciler.rollout.stagedstatus import RunRef
from tests.unit.rollout.stagedkit import (
    SCHEDULED,
    UNSCHEDULED,
    Sim,
    binding,
    cond,
    fleet,
    run,
    strategy,
    view,
)

ALL = {"labelSelector": {}}
LABELS = {"a": {"env": "x"}, "b": {"env": "x"}, "c": {"env": "y"}}


def _init(sim: Sim) -> dict[str, Any]:
    sim.step()
    return sim.status()


def _message(sim: Sim) -> str:
    status = _init(sim)
    found = next(c for c in status["conditions"] if c["type"] == "Initialized")
    assert (found["status"], found["reason"]) == ("False", "UpdateRunInitializedFailed")
    assert not sim.results[-1].updates
    return str(found["message"])


def _sim(objects: list[dict[str, Any]], placement: Any, labels: Any = None) -> Sim:
    return Sim(fleet(*objects), placement, labels or LABELS)


STANDARD = [strategy([{"name": "s1", **ALL}]), run()]
TWO = [binding("a"), binding("b")]

FAILURES = [
    ("placement missing", STANDARD, None, "parent placement not found"),
    (
        "rolling update placement",
        STANDARD,
        view(TWO, strategy_type="RollingUpdate"),
        "parent placement does not have an external rollout strategy, current strategy: RollingUpdate",
    ),
    (
        "policy not scheduled",
        STANDARD,
        view(TWO, fulfilled=False, policy_index=3),
        "policy snapshot `app-3` not fully scheduled yet",
    ),
    (
        "PickN without a number",
        STANDARD,
        view(TWO, placement_type="PickN"),
        "does not have a valid number-of-clusters annotation",
    ),
    (
        "no bindings",
        STANDARD,
        view([]),
        "no scheduled or to-be-deleted bindings found for the latest policy snapshot",
    ),
    (
        "PickFixed count differs",
        STANDARD,
        view([binding("a")], placement_type="PickFixed", names=("a", "b")),
        "the number of selected bindings 1 is not equal to the observed cluster count 2",
    ),
    ("strategy missing", [run()], view(TWO), "referenced updateStrategy not found"),
    (
        "cluster in two stages",
        [strategy([{"name": "s1", **ALL}, {"name": "s2", **ALL}]), run()],
        view(TWO),
        "cluster `a` appears in more than one stages",
    ),
    (
        "sorting label not an integer",
        [strategy([{"name": "s1", "labelSelector": {}, "sortingLabelKey": "env"}]), run()],
        view(TWO),
        'the sorting label `env:x` on cluster `a` is not valid: strconv.Atoi: parsing "x": invalid syntax',
    ),
    (
        "sorting label missing",
        [strategy([{"name": "s1", "labelSelector": {}, "sortingLabelKey": "order"}]), run()],
        view(TWO),
        "the sorting label `order:` on cluster `a` is not valid",
    ),
    (
        "cluster in no stage",
        [strategy([{"name": "s1", "labelSelector": {"matchLabels": {"env": "y"}}}]), run()],
        view([binding("a"), binding("b"), binding("c")]),
        "some clusters are not placed in any stage, total 2, showing up to 10: a, b",
    ),
    (
        "nil selector matches nothing",
        [strategy([{"name": "s1"}]), run()],
        view(TWO),
        "some clusters are not placed in any stage, total 2, showing up to 10: a, b",
    ),
    (
        "snapshot index missing",
        [strategy([{"name": "s1", **ALL}]), run(index="7")],
        view(TWO),
        "no resourceSnapshots with index `7` found for placement `app`",
    ),
]


@pytest.mark.parametrize(
    ("objects", "placement", "message"),
    [f[1:] for f in FAILURES],
    ids=[f[0] for f in FAILURES],
)
def test_initialization_failures(
    objects: list[dict[str, Any]], placement: Any, message: str
) -> None:
    sim = _sim(objects, placement)
    assert message in _message(sim)
    assert sim.results[-1].errors, "an init failure is reported as a user error"
    # terminal: a later pass (even with the placement fixed) does not retry
    sim.placement = view(TWO)
    sim.step()
    assert cond(sim.status(), "Initialized") == ("False", "UpdateRunInitializedFailed")


TASK_RULES = [
    (
        [{"type": "Approval"}, {"type": "Approval"}],
        [],
        "beforeStageTasks can have at most one task",
    ),
    (
        [{"type": "TimedWait", "waitTime": "1m"}],
        [],
        "task 0 of type TimedWait is not allowed in beforeStageTasks, allowed type: Approval",
    ),
    (
        [{"type": "Approval", "waitTime": "1m"}],
        [],
        "task 0 of type Approval cannot have wait duration set",
    ),
    (
        [],
        [{"type": "Approval"}, {"type": "Approval"}],
        "afterStageTasks cannot have two tasks of the same type: Approval",
    ),
    ([], [{"type": "TimedWait"}], "task 0 of type TimedWait has wait duration set to nil"),
    (
        [],
        [{"type": "Approval"}, {"type": "TimedWait", "waitTime": "0s"}],
        "task 1 of type TimedWait has wait duration <= 0",
    ),
]


@pytest.mark.parametrize(("before", "after", "message"), TASK_RULES)
def test_task_rules(before: list[Any], after: list[Any], message: str) -> None:
    stage = StageConfig.model_validate(
        {"name": "s", "beforeStageTasks": before, "afterStageTasks": after}
    )
    with pytest.raises(InitError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_tasks(stage)


def test_task_rules_also_fail_loading() -> None:
    from gitfleet.load.model import SourceDoc
    from gitfleet.load.snapshot import build_snapshot

    bad = strategy(
        [{"name": "s1", **ALL, "beforeStageTasks": [{"type": "TimedWait", "waitTime": "1m"}]}]
    )
    snap = build_snapshot([SourceDoc("rollouts/s.yaml", 0, 1, bad)], [])
    assert any("not allowed in beforeStageTasks" in e.message for e in snap.errors)


def test_invalid_index_text() -> None:
    model = ClusterStagedUpdateRun.model_validate(run(index="-1"))
    with pytest.raises(
        InitError, match="invalid resource snapshot index `-1` provided, expected an integer >= 0"
    ):
        resource_index(RunRef(model, None, None), view(TWO))


ORDER = [
    ("by sorting label then name", "order", {"a": "2", "b": "1", "c": "1"}, ["b", "c", "a"]),
    ("negative and signed", "order", {"a": "+3", "b": "-1", "c": "0"}, ["b", "c", "a"]),
    ("plain string order without key", None, {}, ["cluster-10", "cluster-2", "cluster-3"]),
]


@pytest.mark.parametrize(
    ("key", "values", "expected"), [o[1:] for o in ORDER], ids=[o[0] for o in ORDER]
)
def test_stage_order(key: str | None, values: dict[str, str], expected: list[str]) -> None:
    names = list(values) if values else ["cluster-2", "cluster-10", "cluster-3"]
    labels = {n: ({key: values[n]} if key else {}) for n in names}
    stage = StageConfig.model_validate({"name": "s", "labelSelector": {}, "sortingLabelKey": key})
    (computed,) = compute_stages([stage], names, labels)
    assert list(computed.clusters) == expected


def test_success_records_everything() -> None:
    objects = [
        strategy(
            [
                {"name": "canary", "labelSelector": {"matchLabels": {"env": "y"}}},
                {"name": "empty", "labelSelector": {"matchLabels": {"env": "none"}}},
                {
                    "name": "prod",
                    "labelSelector": {"matchLabels": {"env": "x"}},
                    "afterStageTasks": [{"type": "Approval"}],
                },
            ]
        ),
        run(state="Initialize"),
    ]
    bindings = [
        binding("a"),
        binding("b", state=SCHEDULED),
        binding("c"),
        binding("z", state=UNSCHEDULED),
    ]
    sim = _sim(objects, view(bindings, apply={"type": "ServerSideApply"}))
    status = _init(sim)
    assert cond(status, "Initialized") == ("True", "UpdateRunInitializedSuccessfully")
    assert status["policySnapshotIndexUsed"] == "0"
    assert status["policyObservedClusterCount"] == 3
    assert status["resourceSnapshotIndexUsed"] == "1"
    assert status["appliedStrategy"] == {"type": "ServerSideApply"}
    stages = [
        (s["stageName"], [c["clusterName"] for c in s["clusters"]]) for s in status["stagesStatus"]
    ]
    assert stages == [("canary", ["c"]), ("empty", []), ("prod", ["a", "b"])]
    assert status["stagesStatus"][2]["afterStageTaskStatus"] == [
        {"type": "Approval", "approvalRequestName": "run1-after-prod"}
    ]
    assert status["deletionStageStatus"]["clusters"] == [{"clusterName": "z"}]
    assert not sim.results[-1].updates, "state Initialize only initializes"
    # the strategy is frozen: editing it later changes nothing
    sim.fleet = fleet(strategy([{"name": "other", **ALL}]), run(state="Run"))
    sim.step()
    assert [s["stageName"] for s in sim.status()["stagesStatus"]] == ["canary", "empty", "prod"]


def test_snapshot_strips_wait_time_of_approvals() -> None:
    spec = UpdateStrategySpec.model_validate(
        {"stages": [{"name": "s", "beforeStageTasks": [{"type": "Approval", "waitTime": "1h"}]}]}
    )
    assert strategy_snapshot(spec)["stages"][0]["beforeStageTasks"] == [{"type": "Approval"}]

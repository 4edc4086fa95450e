"""§4.3: every re-validation abort fails the run (terminal) with its reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from reconciler.rollout.model import UNSCHEDULED
from tests.unit.rollout.stagedkit import Sim, binding, cond, fleet, run, strategy, view

LABELS = {
    "a": {"env": "prod", "order": "1"},
    "b": {"env": "prod", "order": "2"},
    "c": {"env": "prod", "order": "3"},
}
STAGES = [
    {"name": "prod", "labelSelector": {"matchLabels": {"env": "prod"}}, "sortingLabelKey": "order"}
]


def _placement(sim: Sim, **changes: Any) -> None:
    sim.placement = view([binding("a"), binding("b")], **changes)


def _labels(sim: Sim, labels: dict[str, dict[str, str]]) -> None:
    sim.labels = labels


def _tamper(edit: Callable[[dict[str, Any]], None]) -> Callable[[Sim], None]:
    def apply(sim: Sim) -> None:
        path = "status/updateruns/run1.yaml"
        doc = yaml.safe_load(sim.prior[path])
        edit(doc["status"])
        sim.prior[path] = yaml.safe_dump(doc).encode()

    return apply


def _failed_stage(status: dict[str, Any]) -> None:
    status["stagesStatus"][0]["conditions"] = [
        {
            "type": "Succeeded",
            "status": "False",
            "reason": "StageUpdatingFailed",
            "message": "x",
            "lastTransitionTime": "2026-11-21T10:00:00Z",
        }
    ]


ABORTS: list[tuple[str, Callable[[Sim], None], str]] = [
    ("placement gone", lambda s: setattr(s, "placement", None), "parent placement not found"),
    (
        "no longer External",
        lambda s: _placement(s, strategy_type="RollingUpdate"),
        "current strategy: RollingUpdate",
    ),
    (
        "apply strategy changed",
        lambda s: _placement(s, apply={"type": "ServerSideApply"}),
        "the apply strategy in the updateRun is outdated",
    ),
    (
        "policy index changed",
        lambda s: _placement(s, policy_index=1),
        "the policy snapshot index used in the updateRun is outdated",
    ),
    (
        "cluster count changed",
        lambda s: setattr(s, "placement", view([binding("a"), binding("b"), binding("c")])),
        "the cluster count initialized in the updateRun is outdated",
    ),
    (
        "cluster order changed",
        lambda s: _labels(
            s, {"a": {"env": "prod", "order": "9"}, "b": {"env": "prod", "order": "2"}}
        ),
        "the `0` cluster in the `0` stage has changed",
    ),
    (
        "stage lost a cluster",
        lambda s: _labels(s, {"a": {"env": "prod", "order": "1"}, "b": {"env": "test"}}),
        "some clusters are not placed in any stage",
    ),
    (
        "stage count changed",
        _tamper(lambda st: st["stagesStatus"].append({"stageName": "x", "clusters": []})),
        "the number of stages in the updateRun has changed",
    ),
    (
        "stage renamed",
        _tamper(lambda st: st["stagesStatus"][0].update(stageName="other")),
        "index `0` stage name in the updateRun has changed",
    ),
    (
        "stage cluster count",
        _tamper(lambda st: st["stagesStatus"][0]["clusters"].pop()),
        "the number of clusters in index `0` stage has changed",
    ),
    ("failed stage", _tamper(_failed_stage), "the stage `prod` has failed"),
    (
        "deleted cluster not in deletion stage",
        lambda s: setattr(
            s, "placement", view([binding("a"), binding("b"), binding("z", state=UNSCHEDULED)])
        ),
        "the cluster `z` to be deleted is not in the deletion stage",
    ),
]


@pytest.mark.parametrize(("change", "message"), [a[1:] for a in ABORTS], ids=[a[0] for a in ABORTS])
def test_revalidation_aborts(change: Callable[[Sim], None], message: str) -> None:
    sim = Sim(fleet(strategy(STAGES), run()), view([binding("a"), binding("b")]), LABELS)
    sim.slow = {"a", "b"}
    sim.step()
    change(sim)
    result = sim.step()
    status = sim.status()
    assert cond(status, "Succeeded") == ("False", "UpdateRunFailed")
    succeeded = next(c for c in status["conditions"] if c["type"] == "Succeeded")
    assert message in succeeded["message"]
    assert any(message in e[3] for e in result.errors)
    assert not result.updates

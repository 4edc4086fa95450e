"""Approvals through Git: request documents, which approvals count and why not, trailers."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import yaml

from gitfleet.load.model import PathCommit
from tests.unit.rollout.stagedkit import Sim, approval, binding, cond, fleet, run, strategy, view

LABELS = {"c1": {"env": "canary"}, "p1": {"env": "prod"}}
STAGES = [
    {
        "name": "canary",
        "labelSelector": {"matchLabels": {"env": "canary"}},
        "afterStageTasks": [{"type": "Approval"}],
    },
    {
        "name": "prod",
        "labelSelector": {"matchLabels": {"env": "prod"}},
        "beforeStageTasks": [{"type": "Approval"}],
    },
]
REQUEST = "status/approvals/run1-after-canary.yaml"
WHO = PathCommit("f" * 40, "Ana Approver <ana@example.com>", "GitHub <noreply@github.com>")


def _sim() -> Sim:
    return Sim(fleet(strategy(STAGES), run()), view([binding("c1"), binding("p1")]), LABELS)


def _with(sim: Sim, *approvals: dict[str, Any]) -> None:
    commits = {f"approvals/{a['metadata']['name']}.yaml": WHO for a in approvals}
    sim.fleet = fleet(strategy(STAGES), run(), *approvals, commits=commits)


def _request(sim: Sim, path: str = REQUEST) -> dict[str, Any]:
    doc = yaml.safe_load(sim.prior[path])
    assert isinstance(doc, dict)
    return doc


def _to_waiting(sim: Sim) -> None:
    sim.step()
    sim.step()
    assert REQUEST in sim.prior


def test_request_document_and_waiting_status() -> None:
    sim = _sim()
    _to_waiting(sim)
    doc = _request(sim)
    assert doc["kind"] == "ClusterApprovalRequest"
    assert doc["metadata"]["name"] == "run1-after-canary"
    assert doc["metadata"]["labels"] == {
        "kubernetes-fleet.io/isLatestUpdateRunApproval": "true",
        "kubernetes-fleet.io/targetUpdateRun": "run1",
        "kubernetes-fleet.io/targetUpdatingStage": "canary",
        "kubernetes-fleet.io/taskType": "afterStage",
    }
    assert doc["spec"] == {"parentStageRollout": "run1", "targetStage": "canary"}
    task = sim.status()["stagesStatus"][0]["afterStageTaskStatus"][0]
    assert cond(task, "ApprovalRequestCreated") == ("True", "StageTaskApprovalRequestCreated")
    assert (
        "Gitfleet-Approval-Pending",
        "run1-after-canary (gitfleet approve run1 canary)",
    ) in sim.results[-1].trailers
    assert "p1" not in [c for u in sim.results[-1].updates for c in u.clusters]


def test_merged_approval_is_accepted_with_who() -> None:
    sim = _sim()
    _to_waiting(sim)
    _with(sim, approval("run1-after-canary", "run1", "canary"))
    result = sim.step(timedelta(minutes=1))
    doc = _request(sim)
    assert cond(doc["status"], "ApprovalAccepted") == ("True", "ApprovalRequestApprovalAccepted")
    assert cond(doc["status"], "Approved") == ("True", "approved")
    assert doc["metadata"]["annotations"]["gitfleet.io/approved-by"] == WHO.author
    assert doc["metadata"]["annotations"]["gitfleet.io/approval-commit"] == WHO.commit
    assert ("Gitfleet-Approved-By", WHO.author) in result.trailers
    assert ("Gitfleet-Approval-Commit", WHO.commit) in result.trailers
    task = sim.status()["stagesStatus"][0]["afterStageTaskStatus"][0]
    assert cond(task, "ApprovalRequestApproved") == ("True", "StageTaskApprovalRequestApproved")
    # prod's before-stage approval is now requested; nothing moved to prod yet
    assert "status/approvals/run1-before-prod.yaml" in sim.prior
    assert not result.updates
    # deleting the approval file after acceptance changes nothing
    sim.fleet = fleet(strategy(STAGES), run())
    again = sim.step(timedelta(minutes=1))
    assert _request(sim) == doc
    assert cond(sim.status()["stagesStatus"][0], "Succeeded") == ("True", "StageUpdatingSucceeded")
    assert not again.errors


NOT_COUNTED = [
    (
        "another stage",
        approval("run1-after-canary", "run1", "prod"),
        "the approval is for run `run1` stage `prod`",
    ),
    (
        "another run",
        approval("run1-after-canary", "run2", "canary"),
        "the approval is for run `run2` stage `canary`",
    ),
    (
        "older generation",
        approval("run1-after-canary", "run1", "canary", generation=0),
        "observedGeneration 0",
    ),
    (
        "no generation",
        approval("run1-after-canary", "run1", "canary", generation=None),
        "no observedGeneration",
    ),
]


@pytest.mark.parametrize(
    ("found", "why"), [n[1:] for n in NOT_COUNTED], ids=[n[0] for n in NOT_COUNTED]
)
def test_approvals_that_do_not_count(found: dict[str, Any], why: str) -> None:
    sim = _sim()
    _to_waiting(sim)
    _with(sim, found)
    result = sim.step(timedelta(minutes=1))
    doc = _request(sim)
    assert why in doc["metadata"]["annotations"]["gitfleet.io/approval-not-counted"]
    assert any(why in e[3] and e[0] == "approvals/run1-after-canary.yaml" for e in result.errors)
    assert "status" not in doc
    assert "run1-before-prod" not in str(sim.prior.keys())


def test_approval_before_the_request_existed_never_counts() -> None:
    sim = _sim()
    _with(sim, approval("run1-after-canary", "run1", "canary"))
    sim.step()
    sim.step()
    doc = _request(sim)
    assert doc["metadata"]["annotations"]["gitfleet.io/ignored-approval"] == WHO.commit
    assert (
        "committed before the request existed"
        in doc["metadata"]["annotations"]["gitfleet.io/approval-not-counted"]
    )
    sim.step(timedelta(minutes=5))
    assert "status" not in _request(sim)
    # a new commit of the approval counts
    newer = PathCommit("e" * 40, WHO.author, WHO.committer)
    sim.fleet = fleet(
        strategy(STAGES),
        run(),
        approval("run1-after-canary", "run1", "canary"),
        commits={"approvals/run1-after-canary.yaml": newer},
    )
    result = sim.step()
    assert ("Gitfleet-Approval-Commit", "e" * 40) in result.trailers


def test_spec_immutable_and_state_transitions() -> None:
    sim = _sim()
    sim.step()
    before = dict(sim.prior)
    sim.fleet = fleet(strategy(STAGES), run(placement="other"))
    result = sim.step()
    assert result.files == before
    assert result.errors[0][2:] == (
        "spec.placementName",
        "spec.placementName is immutable (was 'app'); create a new run instead",
    )
    sim.fleet = fleet(strategy(STAGES), run(state="Initialize"))
    result = sim.step()
    assert (
        result.errors[0][3] == "invalid state transition: cannot transition from Run to Initialize"
    )

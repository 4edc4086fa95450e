"""Unit tables for evictions and disruption budgets (spec/kubefleet.md §5)."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.api import ClusterResourcePlacementDisruptionBudget, ClusterResourcePlacementEviction
from reconciler.rollout import eviction as ev
from reconciler.rollout.model import BindingView, ObservedCondition, PlacementView

AVAILABLE = (ObservedCondition("Available", "True", "AllWorkAreAvailable"),)
NOT_YET = (ObservedCondition("Available", "False", "NotAllWorkAreAvailable"),)
FAILED = (ObservedCondition("Applied", "False", "NotAllWorkHaveBeenApplied"),)
DIFF = (ObservedCondition("DiffReported", "False", "NotAllWorkHaveDiffReported"),)


def eviction(cluster: str = "c1", placement: str = "web") -> ClusterResourcePlacementEviction:
    return ClusterResourcePlacementEviction.model_validate(
        {
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacementEviction",
            "metadata": {"name": "e"},
            "spec": {"placementName": placement, "clusterName": cluster},
        }
    )


def budget(**spec: Any) -> ClusterResourcePlacementDisruptionBudget:
    return ClusterResourcePlacementDisruptionBudget.model_validate(
        {
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacementDisruptionBudget",
            "metadata": {"name": "web"},
            "spec": spec,
        }
    )


def view(
    bindings: list[BindingView], placement_type: str = "PickN", n: int | None = 3
) -> PlacementView:
    return PlacementView(
        key="web",
        kind="ClusterResourcePlacement",
        name="web",
        namespace="",
        strategy_type="RollingUpdate",
        placement_type=placement_type,
        number_of_clusters=n,
        cluster_names=(),
        apply_strategy={},
        policy_index=0,
        policy_fulfilled=True,
        latest_resource_index=0,
        resource_indexes=(0,),
        bindings=tuple(bindings),
    )


def bound(name: str, conds: tuple[ObservedCondition, ...] = AVAILABLE) -> BindingView:
    return BindingView(name, "Bound", 0, "x", "x", conditions=conds)


THREE = [bound("c1"), bound("c2"), bound("c3")]


@pytest.mark.parametrize(
    ("placement", "budget_", "expected"),
    [
        (None, None, ("False", ev.INVALID, ev.MSG_NOT_FOUND)),
        (view(THREE, "PickFixed", None), None, ("False", ev.INVALID, ev.MSG_PICK_FIXED)),
        (view([bound("c2")]), None, ("False", ev.INVALID, ev.MSG_NO_BINDING)),
        (
            view([bound("c1"), BindingView("c1", "Unscheduled", 0, "x")]),
            None,
            ("False", ev.INVALID, ev.MSG_MANY),
        ),
        (view(THREE), None, ("True", ev.VALID, ev.MSG_VALID)),
    ],
)
def test_validity(
    placement: PlacementView | None,
    budget_: ClusterResourcePlacementDisruptionBudget | None,
    expected: tuple[str, str, str],
) -> None:
    verdict = ev.judge(eviction(), placement, budget_)
    assert (verdict.valid.status, verdict.valid.reason, verdict.valid.message) == expected


@pytest.mark.parametrize(
    ("bindings", "placement_type", "n", "budget_", "executed", "message"),
    [
        ([BindingView("c1", "Scheduled")], "PickN", 3, None, False, ev.MSG_NOT_PLACED),
        (
            [BindingView("c1", "Unscheduled", 0, "x", previous_state="Scheduled")],
            "PickN",
            3,
            None,
            False,
            ev.MSG_NOT_PLACED,
        ),
        ([bound("c1", FAILED)], "PickN", 3, budget(minAvailable=3), True, ev.MSG_FAILED),
        ([bound("c1", DIFF)], "PickN", 3, budget(minAvailable=3), True, ev.MSG_FAILED),
        (THREE, "PickN", 3, None, True, ev.MSG_NO_PDB),
        (THREE, "PickAll", None, budget(maxUnavailable=1), False, ev.MSG_MISCONFIGURED),
        (THREE, "PickAll", None, budget(minAvailable="50%"), False, ev.MSG_MISCONFIGURED),
        # PickAll, integer minAvailable: allowed = available - 2 = 1
        (THREE, "PickAll", None, budget(minAvailable=2), True, ev.MSG_ALLOWED.format(a=3, t=3)),
        (THREE, "PickAll", None, budget(minAvailable=3), False, ev.MSG_BLOCKED.format(a=3, t=3)),
        # PickN 3: maxUnavailable 1 - (3 - 3) = 1 -> allowed; with one unavailable -> 0
        (THREE, "PickN", 3, budget(maxUnavailable=1), True, ev.MSG_ALLOWED.format(a=3, t=3)),
        (
            [bound("c1"), bound("c2", NOT_YET), bound("c3")],
            "PickN",
            3,
            budget(maxUnavailable=1),
            False,
            ev.MSG_BLOCKED.format(a=2, t=3),
        ),
        # minAvailable 50% of 3 = ceil(1.5) = 2; available 3 -> allowed 1
        (THREE, "PickN", 3, budget(minAvailable="50%"), True, ev.MSG_ALLOWED.format(a=3, t=3)),
        # missing clusters are not counted as unavailable: 2 of 3 placed, maxUnavailable 1
        (
            [bound("c1"), bound("c2")],
            "PickN",
            3,
            budget(maxUnavailable=1),
            True,
            ev.MSG_ALLOWED.format(a=2, t=2),
        ),
    ],
)
def test_execution(
    bindings: list[BindingView],
    placement_type: str,
    n: int | None,
    budget_: ClusterResourcePlacementDisruptionBudget | None,
    executed: bool,
    message: str,
) -> None:
    verdict = ev.judge(eviction(), view(bindings, placement_type, n), budget_)
    assert verdict.executed is not None
    assert verdict.executed.status == ("True" if executed else "False")
    assert verdict.executed.reason == (ev.EXECUTED if executed else ev.NOT_EXECUTED)
    assert verdict.executed.message == message
    assert verdict.evict is executed


def test_messages_are_kubefleets() -> None:
    assert ev.MSG_ALLOWED.format(a=2, t=3) == (
        "Eviction is allowed by specified ClusterResourcePlacementDisruptionBudget, "
        "availablePlacements: 2, totalPlacements: 3"
    )
    assert ev.MSG_NO_PDB == (
        "Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified"
    )

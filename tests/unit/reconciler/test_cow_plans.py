"""Copy on write of a reused plan's per-cluster override results (`rollkept.Frozen`): a plan
`placememo` reuses hands on the very `per_cluster` dict of the pass that made it, which no later
stage can change in place (a stage that must, `sealing` and `distributions`, takes its own copy,
`rollkept.thawed`); the rollout and the assembly key an unchanged placement by that very dict
and by the rollout's very `desired` dict (`rollmemo.reuse`), compared by identity, not copied
and compared cluster by cluster."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gitfleet.repo.workdir import WorkdirTree
from reconciler import assemble, assembleheld, placecarry, rollmemo
from reconciler.pass_ import PassResult, reconcile
from reconciler.placement import PlacementPlan
from reconciler.rollkept import Frozen, frozen, thawed
from reconciler.stagememo import forget_stages
from reconciler.state import State, read_state
from renderers import load_fleet
from tests.golden.test_golden import CASES
from tests.unit.reconciler.test_place_memo import NOW
from tests.unit.reconciler.test_roll_memo import D, World


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


def _passes(n: int) -> list[PassResult]:
    """`n` passes of a golden fleet, each from the state of the one before (placement `shop`,
    whose overrides change its manifests on 2 clusters)."""
    case = next(c for c in CASES if c.name == "compat-v1alpha1-overrides")
    fleet = load_fleet(WorkdirTree(case / "fleet"))
    out = [reconcile(fleet, State(), None, NOW)]
    for _ in range(n - 1):
        out.append(reconcile(fleet, read_state(out[-1].files)[0], None, NOW))
    return out


def _web(result: PassResult) -> PlacementPlan:
    return result.plans["shop"]


def test_a_reused_plan_hands_on_the_very_frozen_per_cluster() -> None:
    *_, before, after = _passes(4)
    plan, last = _web(after), _web(before)
    assert isinstance(plan.per_cluster, Frozen) and len(plan.per_cluster) == 2
    assert plan.per_cluster is last.per_cluster  # not a copy
    assert plan.errors is not last.errors and plan.waits is not last.waits  # still copies
    with pytest.raises(TypeError):
        plan.per_cluster["c9"] = next(iter(plan.per_cluster.values()))
    assert after.files == before.files


def test_the_stages_key_an_unchanged_placement_by_its_very_dicts() -> None:
    """The rollout's and the layout's remembered inputs hold the plan's own `per_cluster`
    and `desired` (no copies): the next pass finds them by identity."""
    *_, after = _passes(4)
    plan = _web(after)
    assert isinstance(plan.desired, Frozen)  # the remembered rollout's
    rolled = rollmemo._ROLLOUTS.last("shop")
    laid = assemble._LAYOUTS.last("shop")
    kept = assembleheld.KEPT.last("shop")
    assert rolled is not None and laid is not None and kept is not None
    assert rolled[0][2] is plan.per_cluster
    assert laid[0][5] is plan.desired and laid[0][8] is plan.per_cluster
    assert laid[0][11] is plan.cluster_apply_strategies
    assert kept[0][2] is plan.desired


def test_copy_plan_shares_per_cluster_and_copies_the_rest() -> None:
    plan = _web(_passes(2)[-1])
    plan.per_cluster = dict(plan.per_cluster)  # a plan as `place` returns it
    copied = placecarry.copy_plan(plan)
    assert isinstance(copied.per_cluster, Frozen) and copied.per_cluster == plan.per_cluster
    assert placecarry.copy_plan(copied).per_cluster is copied.per_cluster
    assert copied.sync_errors is not plan.sync_errors and copied.reports is not plan.reports


def test_thawed_copies_a_frozen_dict_only() -> None:
    mine = {"c1": "a"}
    assert thawed(mine) is mine
    kept = frozen(mine)
    own = thawed(kept)
    own["c2"] = "b"
    assert type(own) is dict and kept == {"c1": "a"} and own == {"c1": "a", "c2": "b"}


def test_a_rollout_remembered_hands_its_plan_the_dicts_reuse_hands_on() -> None:
    plan = World().plan()
    inputs = (object(),)
    plan.desired, plan.reports = {"c1": D}, {}
    rollmemo.keep(plan, inputs, plan.state, None, None)  # type: ignore[arg-type]
    assert isinstance(plan.desired, Frozen) and plan.desired == {"c1": D}
    again = World().plan()
    rollmemo.reuse(again, inputs)
    assert again.desired is plan.desired and again.reports is plan.reports
    assert again.cluster_apply_strategies is plan.cluster_apply_strategies

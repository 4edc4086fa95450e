"""`placecarry.carried`: the state of a plan made from one prior, as `place` makes it from a
prior that differs only in what agents report; None for every other difference."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reconciler.binding import Binding, BindingCondition
from reconciler.placecarry import carried, condition_moves
from reconciler.statetypes import PlacementState, Snapshot

APPLIED = (BindingCondition("Applied", "True", "AppliedWorkSuccessfully"),)
FAILED = (BindingCondition("Applied", "False", "ApplyFailed", "boom"),)


def _state(*bindings: Binding, **fields: object) -> PlacementState:
    base = PlacementState("crp-a", 1, "h", (Snapshot(0, "p"),), (Snapshot(0, "r"),), bindings)
    return replace(base, **fields)  # type: ignore[arg-type]


A = Binding("a", "Bound", 0, 0)
B = Binding("b", "Bound", 0, 0)


def test_equal_priors_give_the_plan_state_itself() -> None:
    made = _state(replace(A, policy_index=1), B)
    assert carried(made, _state(A, B), _state(A, B)) is made


def test_moved_conditions_are_swapped_into_the_plan() -> None:
    made = _state(replace(A, policy_index=1), B, generation=2)
    now = carried(made, _state(A, B), _state(replace(A, conditions=APPLIED), B))
    assert now == _state(replace(A, policy_index=1, conditions=APPLIED), B, generation=2)


def test_deleting_bindings_are_the_new_priors() -> None:
    gone = Binding("c", "Unscheduled", 0, 0, removing=3)
    made = _state(A, deleting=(gone,))
    now = carried(
        made, _state(A, deleting=(gone,)), _state(A, deleting=(replace(gone, removing=1),))
    )
    assert now is not None and now.deleting == (replace(gone, removing=1),)


@pytest.mark.parametrize(
    "after",
    [
        _state(replace(A, state="Scheduled"), B),  # more than conditions moved
        _state(replace(A, conditions=APPLIED, resource_index=1), B),
        _state(A),  # a binding gone
        _state(B, A),  # another order
        _state(A, B, generation=2),  # another field of the state
        _state(A, B, selected=(("x", "f"),)),
    ],
)
def test_any_other_difference_is_not_carried(after: PlacementState) -> None:
    assert carried(_state(A, B), _state(A, B), after) is None


def test_a_plan_that_did_not_carry_the_prior_conditions_is_not_carried() -> None:
    made = _state(replace(A, conditions=FAILED), B)  # not the earlier prior's conditions
    before, after = _state(A, B), _state(replace(A, conditions=APPLIED), B)
    assert carried(made, before, after) is None


def test_a_plan_whose_deleting_bindings_are_not_the_priors_is_not_carried() -> None:
    made = _state(A, deleting=(B,))
    assert carried(made, _state(A), _state(A)) is None


def test_a_cluster_named_twice_is_not_carried() -> None:
    twice = replace(A, state="Unscheduled")
    before = (A, twice)
    assert condition_moves(before, (replace(A, conditions=APPLIED), twice)) is None
    assert condition_moves(before, before) == {}


def test_bindings_taken_as_they_were_become_the_new_priors_objects() -> None:
    """Later stages compare bindings by identity: a binding the plan took unchanged from the
    earlier prior is the new prior's very object, moved or only equal."""
    b_again = replace(B)  # equal to B, another object (a prior read again)
    moved_a = replace(A, conditions=APPLIED)
    now = carried(_state(A, B), _state(A, B), _state(moved_a, b_again))
    assert now is not None
    assert now.bindings[0] is moved_a and now.bindings[1] is b_again

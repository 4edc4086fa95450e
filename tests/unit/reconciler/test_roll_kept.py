"""`rollkept.Frozen`: the dicts a remembered rollout hands out cannot change in place, yet read,
compare and copy as dicts; `rollmemo.reuse` hands out the very same ones pass after pass, and
`record_sync` compares them by identity - skipping an unchanged placement, and syncing again
when another desired content makes a cluster live."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from reconciler import rollmemo, rollsync
from reconciler.rollkept import Frozen, frozen
from reconciler.stagememo import forget_stages
from reconciler.state import Binding
from tests.unit.reconciler.test_roll_memo import D2, NOW, STARTED, D, World

MUTATIONS: list[tuple[str, Callable[[dict[str, str]], Any]]] = [
    ("set", lambda d: d.__setitem__("c9", "x")),
    ("delete", lambda d: d.__delitem__("c1")),
    ("pop", lambda d: d.pop("c1")),
    ("popitem", lambda d: d.popitem()),
    ("setdefault", lambda d: d.setdefault("c9", "x")),
    ("update", lambda d: d.update(c9="x")),
    ("clear", lambda d: d.clear()),
    ("in-place or", lambda d: d.__ior__({"c9": "x"})),
]


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    forget_stages()
    yield
    forget_stages()


@pytest.mark.parametrize(("name", "change"), MUTATIONS, ids=[n for n, _ in MUTATIONS])
def test_a_frozen_dict_cannot_change(name: str, change: Callable[[dict[str, str]], Any]) -> None:
    kept = frozen({"c1": D, "c2": D2})
    with pytest.raises(TypeError):
        change(kept)
    assert kept == {"c1": D, "c2": D2}, name


def test_a_frozen_dict_reads_compares_and_copies_as_a_dict() -> None:
    kept = frozen({"c1": D})
    assert frozen(kept) is kept and copy.copy(kept) is kept
    plain = dict(kept)
    plain["c2"] = D2  # a copy is the caller's own
    assert type(plain) is dict and kept == {"c1": D} and kept.get("c1") == D
    for again in (copy.deepcopy(kept), pickle.loads(pickle.dumps(kept))):
        assert isinstance(again, Frozen) and again == kept


def test_a_reused_rollout_hands_out_the_same_frozen_dicts() -> None:
    plan = World().plan()
    inputs = (object(),)
    plan.desired, plan.reports = {"c1": D}, {}
    rollmemo.keep(plan, inputs, plan.state, None, None)  # type: ignore[arg-type]
    first, second = World().plan(), World().plan()
    rollmemo.reuse(first, inputs)
    rollmemo.reuse(second, inputs)
    assert isinstance(first.desired, Frozen) and first.desired == {"c1": D}
    assert second.desired is first.desired and second.reports is first.reports
    assert second.cluster_apply_strategies is first.cluster_apply_strategies


def _synced(world: World, desired: dict[str, str], mp: pytest.MonkeyPatch) -> list[str]:
    """What `record_sync` looked at ("scan": the placement's bindings, then each cluster it
    synced); the plan's bindings after it follow."""
    plan = world.plan()
    plan.desired = desired
    real, real_scan, seen = rollsync.with_sync, rollsync._synced, []

    def counting(b: Binding, *rest: Any) -> Binding:
        seen.append(b.cluster)
        return real(b, *rest)

    def scanning(*args: Any) -> Any:
        seen.append("scan")
        return real_scan(*args)

    with mp.context() as m:
        m.setattr(rollsync, "with_sync", counting)
        m.setattr(rollsync, "_synced", scanning)
        rollsync.record_sync({"web": plan}, NOW)
    return [*seen, *(c.type for c in plan.state.bindings[0].conditions)]


def test_record_sync_skips_the_same_frozen_desired_and_syncs_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """c1 was given D but is to get D2 (not live), with a sync error; c2 is live, without an
    error or a WorkSynchronized condition: nothing to record, neither binding synced. The very
    same frozen desired again looks at nothing; a new one giving c1 D makes c1 live, and its
    binding (only) is synced and gets the sync error."""
    bindings = tuple(
        Binding(c, "Bound", 0, 3, content=h, conditions=(STARTED,))
        for c, h in (("c1", D), ("c2", D2))
    )
    world = replace(World(bindings=bindings), sync_errors={"c1": "lost"})
    not_live = frozen({"c1": D2, "c2": D2})
    assert _synced(world, not_live, monkeypatch) == ["scan", "RolloutStarted"]
    last = rollsync._SETTLED.last("web")
    assert last is not None and last[0][2] is not_live  # kept as it is, not copied
    assert _synced(world, not_live, monkeypatch) == ["RolloutStarted"]  # looked at nothing
    live = _synced(world, frozen({"c1": D, "c2": D2}), monkeypatch)
    assert live == ["scan", "c1", "RolloutStarted", "WorkSynchronized"]

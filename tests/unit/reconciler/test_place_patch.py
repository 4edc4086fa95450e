"""`placepatch.rerendered`: a remembered plan's per-cluster override results with those of the
relabelled clusters it targets made again, the others kept by identity and in `place`'s order
(by cluster name); none made for clusters it does not target; None when an override fails now
or failed before (then `place` runs and counts the failures)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from reconciler import placepatch
from reconciler.binding import Binding
from reconciler.manifests import NO_OVERRIDES, ClusterManifests
from reconciler.placement import PlacementPlan
from reconciler.state import PlacementState

KEPT = ClusterManifests(cluster_overrides=("kept-0",))
NEW = ClusterManifests(cluster_overrides=("new-0",))
FAILED = ClusterManifests(cluster_overrides=("new-0",), failures=(("a.yaml", "boom"),))


class _Renderer:
    """Stands in for `OverrideRenderer`: cluster name -> its result (the clusters asked)."""

    results: dict[str, ClusterManifests] = {}
    asked: list[str] = []

    def __init__(self, *args: Any) -> None:
        pass

    def for_cluster(self, selection: Any, view: Any) -> ClusterManifests:
        _Renderer.asked.append(view.name)
        return _Renderer.results[view.name]


@pytest.fixture(autouse=True)
def _renderer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(placepatch, "OverrideRenderer", _Renderer)
    _Renderer.asked = []


def _plan(per_cluster: dict[str, ClusterManifests], **fields: Any) -> PlacementPlan:
    bindings = (
        Binding("a", "Bound", 0, 0),
        Binding("b", "Scheduled", 0, 0),
        Binding("c", "Bound", 0, 0),
        Binding("d", "Unscheduled", 0, 0),
    )
    state = PlacementState(key="p", bindings=bindings)
    plan = PlacementPlan(key="p", state=state, scheduled=None, **fields)  # type: ignore[arg-type]
    plan.selection = SimpleNamespace(resources=())  # type: ignore[assignment]
    plan.per_cluster = per_cluster
    return plan


def _patch(plan: PlacementPlan, clusters: list[str], **results: ClusterManifests) -> Any:
    _Renderer.results = results
    serving = SimpleNamespace(overrides=("o",))
    inputs: Any = SimpleNamespace(
        overrides=SimpleNamespace(for_placement=lambda *a: serving), override_names={}
    )
    views: Any = {n: SimpleNamespace(name=n) for n in "abcde"}
    return placepatch.rerendered(plan, None, clusters, views, None, inputs)  # type: ignore[arg-type]


def test_a_cluster_that_gains_a_result_takes_its_place_by_name() -> None:
    plan = _plan({"a": KEPT, "c": KEPT})
    out = _patch(plan, ["b"], b=NEW)
    assert list(out.items()) == [("a", KEPT), ("b", NEW), ("c", KEPT)]
    assert out["a"] is KEPT and plan.per_cluster == {"a": KEPT, "c": KEPT}


def test_a_result_is_replaced_in_place_or_dropped() -> None:
    plan = _plan({"a": KEPT, "b": KEPT, "c": KEPT})
    assert list(_patch(plan, ["b"], b=NEW).items()) == [("a", KEPT), ("b", NEW), ("c", KEPT)]
    assert list(_patch(plan, ["a"], a=NO_OVERRIDES)) == ["b", "c"]


def test_clusters_not_targeted_are_not_rendered() -> None:
    plan = _plan({"a": KEPT})
    assert _patch(plan, ["d", "e"], d=NEW, e=NEW) is plan.per_cluster
    assert _Renderer.asked == []


@pytest.mark.parametrize(
    ("fields", "result"),
    [({}, FAILED), ({"errors": [("spec", "cluster a: boom")]}, NEW)],
    ids=["fails-now", "failed-before"],
)
def test_failures_leave_it_to_place(fields: dict[str, Any], result: ClusterManifests) -> None:
    assert _patch(_plan({"a": KEPT}, **fields), ["a"], a=result) is None

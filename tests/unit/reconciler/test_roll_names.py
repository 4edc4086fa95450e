"""The override snapshot names a placement view lists per snapshot index and cluster
(`reconciler.rollnames`) equal an eager reading of the plan, and an older render is asked
only when its index is read, once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from reconciler.manifests import ClusterManifests
from reconciler.placement import PlacementPlan
from reconciler.rollnames import NO_NAMES, override_names


@dataclass
class _Binding:
    cluster: str
    state: str = "Bound"


@dataclass
class _Render:
    tag: str
    asked: list[str] = field(default_factory=list)

    def names(self, cluster: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        self.asked.append(cluster)
        return ((f"{self.tag}-{cluster}",), ())


@dataclass
class _Snapshot:
    index: int


@dataclass
class _Plan:
    bindings: list[_Binding]
    per_cluster: dict[str, ClusterManifests]
    renders: dict[int, _Render]
    latest: int | None

    @property
    def state(self) -> Any:
        return self

    def target(self) -> _Snapshot | None:
        return None if self.latest is None else _Snapshot(self.latest)


def _eager(plan: _Plan) -> dict[int, dict[str, Any]]:
    clusters = [b.cluster for b in plan.bindings if b.state != "Unscheduled"]
    out: dict[int, dict[str, Any]] = {}
    if plan.latest is not None:
        mine = {c: (m.cluster_overrides, m.resource_overrides) for c, m in plan.per_cluster.items()}
        out[plan.latest] = {c: mine.get(c, NO_NAMES) for c in clusters}
    for index, render in plan.renders.items():
        out[index] = {c: render.names(c) for c in clusters}
    return out


@pytest.mark.parametrize("latest", [None, 3, 2])
def test_names_equal_an_eager_reading(latest: int | None) -> None:
    bindings = [_Binding("eu-1"), _Binding("eu-2"), _Binding("gone", "Unscheduled")]
    custom = {"eu-2": ClusterManifests(cluster_overrides=("cro-1",))}
    plan = _Plan(bindings, custom, {2: _Render("r2"), 1: _Render("r1")}, latest)
    names = override_names(cast(PlacementPlan, plan))
    assert not plan.renders[2].asked and not plan.renders[1].asked  # nothing read yet
    assert not names._made
    expected = _eager(plan)
    assert list(names) == list(expected) and len(names) == len(expected)
    assert {i: dict(names[i]) for i in names} == expected
    assert dict(names) == expected and expected == names
    assert plan.renders[1].asked == ["eu-1", "eu-2"] * 2  # once by us, once by the eager read
    assert names.get(9) is None


def test_names_read_later_are_those_of_the_plan_when_made() -> None:
    """The plan's renders may change after the view is made (a later pass): a late read
    gives what the view was made of."""
    custom = {"eu-1": ClusterManifests(resource_overrides=("web/ro-2",))}
    plan = _Plan([_Binding("eu-1")], custom, {1: _Render("r1")}, 3)
    names = override_names(cast(PlacementPlan, plan))
    plan.renders.clear()
    plan.per_cluster.clear()
    plan.bindings = [_Binding("eu-1"), _Binding("us-1")]  # a later pass's state
    assert dict(names[1]) == {"eu-1": (("r1-eu-1",), ())}
    assert dict(names[3]) == {"eu-1": ((), ("web/ro-2",))}

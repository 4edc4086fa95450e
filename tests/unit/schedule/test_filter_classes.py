"""Filter classes of a pass's clusters (`classes.filter_classes`) are worked out once for
every placement whose required terms read the same labels (and no property): clusters share a
class exactly when their `filter_class` keys are equal, the very same classes serve those
placements on the same cluster list, and they are made again for another label set, a
ResourcePlacement or another list."""

from __future__ import annotations

import random
from typing import Any

import pytest

from reconciler.schedule.classes import Classes, filter_class, filter_classes
from reconciler.schedule.framework import PlacementInfo
from reconciler.stagememo import forget_stages
from tests.unit.schedule.fleet import cluster, crp, required
from tests.unit.schedule.test_incremental import random_views
from tests.unit.schedule.test_reuse import fresh, random_any_policy, reusing

TAINT = [{"key": "gpu", "value": "x", "effect": "NoSchedule"}]


def _info(key: str, values: list[str], namespace: str | None = None) -> PlacementInfo:
    term = {
        "labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": values}]}
    }
    policy = crp(affinity=required(term)).spec.policy
    return PlacementInfo(policy=policy, namespace=namespace)


def _clusters() -> list[Any]:
    return [
        cluster("a", {"env": "prod", "region": "eu"}),
        cluster("b", {"env": "dev", "region": "eu"}),
        cluster("c", {"env": "prod", "region": "us"}, taints=TAINT),
        cluster("d", {"region": "us"}, ineligible="not joined"),
        cluster("e", {"env": "prod", "region": "eu"}),
    ]


def _same_as_filter_class(info: PlacementInfo, clusters: list[Any]) -> Classes:
    firsts, index = made = filter_classes(info, clusters)
    key_of = filter_class(info)
    assert [key_of(v) for v in clusters] == [key_of(firsts[i]) for i in index]
    assert len({key_of(v) for v in firsts}) == len(firsts)
    assert [firsts[i] for i in sorted(set(index), key=index.index)] == firsts
    return made


def test_placements_reading_the_same_labels_share_the_classes() -> None:
    clusters = _clusters()
    prod, dev = _info("env", ["prod"]), _info("env", ["dev"])
    classes = _same_as_filter_class(prod, clusters)
    assert classes[1] == [0, 1, 2, 3, 0]  # c: tainted, its own class; d: ineligible
    assert filter_classes(dev, clusters) is classes
    region = _info("region", ["eu"])
    assert _same_as_filter_class(region, clusters)[1] == [0, 0, 1, 2, 0]
    own = _info("env", ["prod"], namespace="ns")
    assert _same_as_filter_class(own, clusters)[1] == [0, 1, 2, 3, 4]
    again = _clusters()
    assert filter_classes(prod, again) is not classes
    assert filter_classes(prod, again)[1] == classes[1]


@pytest.mark.parametrize("seed", range(8))
def test_placements_sharing_classes_schedule_as_fresh_runs(seed: int) -> None:
    """Random policies over one pass's fleet (one cluster list, the classes shared) decide
    exactly as the plain runner."""
    forget_stages()
    rng = random.Random(seed)
    views = random_views(rng, broken=False)
    for _ in range(10):
        policy = random_any_policy(rng, sorted(views))
        ns = "ns" if rng.random() < 0.2 else None
        assert reusing(policy, ns, (), views, 1) == fresh(policy, ns, (), views, 1)

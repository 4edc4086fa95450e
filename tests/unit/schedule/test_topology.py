"""TopologySpreadConstraints (spec §1.3.7): domain verdicts, filter, score, one pick per cycle."""

from __future__ import annotations

import pytest

from reconciler.schedule.cycle import schedule
from reconciler.schedule.topologyspreadconstraints import DomainVerdict, verdicts
from reconciler.state import Binding
from tests.unit.schedule.fleet import cluster, crp, fleet, spread

V = DomainVerdict


@pytest.mark.parametrize(
    ("counts", "max_skew", "want"),
    [
        ({"x": 0}, 1, {"x": V(False, 1)}),
        ({"x": 0, "y": 0}, 1, {"x": V(False, 1), "y": V(False, 1)}),
        ({"x": 1, "y": 0}, 1, {"x": V(True, 1), "y": V(False, -1)}),
        ({"x": 1, "y": 0, "z": 0}, 1, {"x": V(True, 1), "y": V(False, 0), "z": V(False, 0)}),
        ({"x": 2, "y": 1, "z": 0}, 2, {"x": V(True, 1), "y": V(False, 0), "z": V(False, -1)}),
        ({"x": 2, "y": 0}, 1, {"x": V(True, 1), "y": V(False, -1)}),
        # Already violated: even the emptiest domain "violates" (quirk §9.4).
        ({"x": 3, "y": 0}, 1, {"x": V(True, 1), "y": V(True, -1)}),
        ({"x": 2, "y": 0, "z": 0}, 1, {"x": V(True, 1), "y": V(True, 0), "z": V(True, 0)}),
        ({}, 1, {}),
    ],
)
def test_domain_verdicts(
    counts: dict[str, int], max_skew: int, want: dict[str, DomainVerdict]
) -> None:
    assert verdicts(counts, max_skew) == want


REGIONS = fleet(
    cluster("eu-1", {"region": "eu"}),
    cluster("eu-2", {"region": "eu"}),
    cluster("us-1", {"region": "us"}),
    cluster("us-2", {"region": "us"}),
    cluster("bare"),
)


def test_spread_alternates_domains_one_pick_per_cycle() -> None:
    out = schedule(
        crp("PickN", numberOfClusters=4, topologySpreadConstraints=[spread("region")]),
        [],
        REGIONS,
        0,
    )
    picked = sorted(b.cluster for b in out.bindings)
    # bare (no label) scores 0 like an empty domain's -change... first pick is us-2 by reverse
    # name among {all +(-1)}... every choice keeps regions within skew 1.
    assert out.cycles >= 4 and out.fulfilled
    assert len(picked) == 4
    regions = [REGIONS[c].labels.get("region") for c in picked]
    assert abs(regions.count("eu") - regions.count("us")) <= 1


def test_spread_first_cycles_in_detail() -> None:
    views = fleet(cluster("a1", {"z": "a"}), cluster("a2", {"z": "a"}), cluster("b1", {"z": "b"}))
    out = schedule(
        crp("PickN", numberOfClusters=2, topologySpreadConstraints=[spread("z")]), [], views, 0
    )
    # Cycle 1: all domains empty -> every cluster -1; reverse name picks b1.
    # Cycle 2: b has 1, a has 0 -> a-clusters +1, b1 already selected; a2 wins on name.
    assert sorted(b.cluster for b in out.bindings) == ["a2", "b1"]
    assert out.cycles == 2
    reasons = {d.cluster: d.reason for d in out.decisions if d.selected}
    assert reasons["b1"].endswith(
        "(affinity score: 0, topology spread score: -1): picked by scheduling policy"
    )
    assert "topology spread score: 1)" in reasons["a2"]
    a1 = out.explanations["a1"]
    assert not a1.selected and a1.rank == 3


def test_do_not_schedule_filters_when_skew_would_exceed() -> None:
    views = fleet(
        cluster("a1", {"z": "a"}),
        cluster("a2", {"z": "a"}),
        cluster("b1", {"z": "b"}, ineligible="cluster has left the fleet"),
    )
    prior = [Binding("a1", "Bound", 0, 0)]
    out = schedule(
        crp("PickN", numberOfClusters=2, topologySpreadConstraints=[spread("z")]), prior, views, 0
    )
    assert [b.cluster for b in out.bindings] == ["a1"]
    assert out.fulfilled is False
    assert out.explanations["a2"].filter_reason == (
        'ClusterUnschedulable, violated doNotSchedule topology spread constraint "z" (max skew 1)'
    )
    assert out.explanations["a2"].filter_plugin == "TopologySpreadConstraints"


def test_already_violated_skew_blocks_every_cluster() -> None:
    views = fleet(
        *(cluster(f"a{i}", {"z": "a"}) for i in range(3)),
        cluster("b0", {"z": "b"}),
        cluster("c0", {"z": "c"}),
    )
    prior = [Binding("a0", "Bound", 0, 0), Binding("a1", "Bound", 0, 0)]
    out = schedule(
        crp("PickN", numberOfClusters=3, topologySpreadConstraints=[spread("z")]), prior, views, 0
    )
    assert sorted(b.cluster for b in out.bindings) == ["a0", "a1"]
    assert {n for n, e in out.explanations.items() if e.filter_reason} == {"a2", "b0", "c0"}
    assert out.fulfilled is False


def test_schedule_anyway_scores_minus_1000_instead_of_filtering() -> None:
    views = fleet(*(cluster(f"a{i}", {"z": "a"}) for i in range(3)), cluster("b0", {"z": "b"}))
    prior = [Binding("a0", "Bound", 0, 0), Binding("a1", "Bound", 0, 0)]
    policy = {
        "numberOfClusters": 4,
        "topologySpreadConstraints": [spread("z", when="ScheduleAnyway")],
    }
    out = schedule(crp("PickN", **policy), prior, views, 0)
    assert sorted(b.cluster for b in out.bindings) == ["a0", "a1", "a2", "b0"]
    picked = {d.cluster: d.topology_score for d in out.decisions if d.selected}
    assert picked["b0"] == 1 and picked["a2"] == -1000


def test_do_not_schedule_is_checked_before_schedule_anyway_and_scores_add() -> None:
    views = fleet(cluster("x", {"z": "a", "r": "1"}), cluster("y", {"z": "b", "r": "1"}))
    constraints = [spread("r", when="ScheduleAnyway"), spread("z")]
    out = schedule(
        crp("PickN", numberOfClusters=1, topologySpreadConstraints=constraints), [], views, 0
    )
    # Both constraints: single domain r -> -1, empty z domains -> -1; y wins on name.
    assert [(d.cluster, d.topology_score) for d in out.decisions if d.selected] == [("y", -2)]

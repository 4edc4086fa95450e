"""Subset-level rows of the distribution test table (spec/replica-distribution.md §13, rows
2-17, 21-22) and the value rules: the allocator functions alone, with the given prev values."""

from __future__ import annotations

from typing import Any, cast

import pytest

from gitfleet.api.distribution import ReplicaDistribution, Subset
from reconciler.distribute import stage
from reconciler.distribute.allocate import (
    allocate_minmax,
    allocate_specific,
    membership,
    partitions,
    split_evenly,
)
from reconciler.distribute.stage import DistributionInput, PriorDistribution
from reconciler.distribute.validate import parse_value, validate
from reconciler.distribute.workload import ClusterResult
from tests.helpers.counting import CountedName


def subsets(*specs: dict[str, Any]) -> list[Subset]:
    return [Subset.model_validate(s) for s in specs]


def rd_of(replicas: int, *specs: dict[str, Any], **spec: Any) -> ReplicaDistribution:
    body = {
        "workload": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"},
        "replicas": replicas,
        "topology": {"subsets": [{"clusterNames": ["x"], **s} for s in specs]},
        **spec,
    }
    return ReplicaDistribution.model_validate(
        {
            "apiVersion": "gitfleet.io/v1alpha1",
            "kind": "ReplicaDistribution",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": body,
        }
    )


T = [{"name": f"t{i}"} for i in range(1, 5)]


@pytest.mark.parametrize(
    ("row", "prev", "total", "specified", "expected"),
    [
        ("2a", [1, 4, 2, 2], 5, {}, [1, 2, 1, 1]),
        ("2b", [1, 4, 2, 2], 17, {}, [4, 5, 4, 4]),
        ("3", [2, 4, 2, 2], 9, {}, [2, 3, 2, 2]),
        ("5", [1, 4, 2, 2], 27, {"t1": 4, "t3": 4}, [4, 10, 4, 9]),
        ("6", [2, 4, 2, 2], 8, {"t1": 4, "t3": 4}, [4, 0, 4, 0]),
    ],
)
def test_specific_vectors(
    row: str, prev: list[int], total: int, specified: dict[str, int], expected: list[int]
) -> None:
    specs = subsets(
        *[
            {**t, **({"replicas": specified[t["name"]]} if t["name"] in specified else {})}
            for t in T
        ]
    )
    got = allocate_specific(specs, total, {f"t{i + 1}": p for i, p in enumerate(prev)})
    assert list(got.values()) == expected, row


@pytest.mark.parametrize(("total", "expected"), [(19, [9, 10]), (21, [10, 11])])
def test_row4_two_subsets(total: int, expected: list[int]) -> None:
    got = allocate_specific(subsets(*T[:2]), total, {"t1": 0, "t2": 10})
    assert list(got.values()) == expected


def test_row7_percentage_and_unspecified() -> None:
    got = allocate_specific(
        subsets({"name": "a", "replicas": "25%"}, {"name": "b"}, {"name": "c"}), 10, {}
    )
    assert got == {"a": 3, "b": 3, "c": 4}


@pytest.mark.parametrize(
    ("total", "pct", "expected"), [(5, 50, 3), (3, 50, 2), (7, 15, 1), (10, 25, 3), (0, 100, 0)]
)
def test_percent_rounds_half_up(total: int, pct: int, expected: int) -> None:
    assert parse_value(f"{pct}%", total) == expected


def first(rd: ReplicaDistribution, total: int) -> str | None:
    problems = validate(rd, total)
    return problems[0][1] if problems else None


def test_row8_percentages_sum_too_big() -> None:
    rd = rd_of(5, {"name": "a", "replicas": "50%"}, {"name": "b", "replicas": "50%"})
    assert first(rd, 5) == "sum of subset replicas (6) is greater than spec.replicas (5)"


def test_row9_all_specified_short() -> None:
    rd = rd_of(10, {"name": "a", "replicas": 3}, {"name": "b", "replicas": 5})
    assert (
        first(rd, 10)
        == "subset replicas are given for every subset but add up to 8, not spec.replicas (10)"
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("101%", "subset a: replicas (101%) must be between 0% and 100%"),
        ("30", 'subset a: replicas (30) must be an integer or a percentage such as "30%"'),
        (-1, "subset a: replicas (-1) must not be negative"),
    ],
)
def test_row10_value_errors(value: int | str, message: str) -> None:
    assert first(rd_of(10, {"name": "a", "replicas": value}, {"name": "b"}), 10) == message


MINMAX = [
    {"name": f"s{i}", "minReplicas": 2, **({"maxReplicas": 5} if i < 4 else {})} for i in range(5)
]


@pytest.mark.parametrize(
    ("total", "expected"), [(14, [5, 3, 2, 2, 2]), (5, [2, 2, 1, 0, 0]), (10, [2, 2, 2, 2, 2])]
)
def test_row11_minmax(total: int, expected: list[int]) -> None:
    assert first(rd_of(total, *MINMAX), total) is None
    assert list(allocate_minmax(subsets(*MINMAX), total).values()) == expected


def test_row12_every_subset_has_max() -> None:
    rd = rd_of(10, {"name": "a", "maxReplicas": 5}, {"name": "b", "maxReplicas": 5})
    assert first(rd, 10) == "at least one subset must leave maxReplicas unset"


def test_row13_replicas_and_minmax_exclusive() -> None:
    rd = rd_of(10, {"name": "a", "replicas": 2}, {"name": "b", "minReplicas": 1})
    assert first(rd, 10) == "subset replicas and minReplicas/maxReplicas cannot be used together"


def test_row14_min_above_max() -> None:
    rd = rd_of(10, {"name": "a", "minReplicas": 5, "maxReplicas": 3}, {"name": "b"})
    assert first(rd, 10) == "subset a: minReplicas (5) is greater than maxReplicas (3)"


def test_row15_minmax_percentages() -> None:
    specs = ({"name": "a", "minReplicas": "20%", "maxReplicas": "50%"}, {"name": "b"})
    assert first(rd_of(10, *specs), 10) is None
    assert allocate_minmax(subsets(*specs), 10) == {"a": 5, "b": 5}


def test_sum_of_mins_above_sum_of_maxes() -> None:
    rd = rd_of(
        10, {"name": "a", "minReplicas": 3, "maxReplicas": 3}, {"name": "b", "minReplicas": 1000001}
    )
    assert (
        first(rd, 10) == "sum of minReplicas (1000004) is greater than sum of maxReplicas (1000003)"
    )


def test_row16_joining_cluster_takes_from_nobodys_extra() -> None:
    got = split_evenly(["us-1", "us-2", "us-3"], 7, {"us-1": 3, "us-2": 4})
    assert got == {"us-1": 2, "us-2": 3, "us-3": 2}


def test_row17_evicted_cluster_leaves() -> None:
    got = split_evenly(["us-1", "us-2"], 7, {"us-1": 2, "us-2": 3, "us-3": 2})
    assert got == {"us-1": 3, "us-2": 4}


@pytest.mark.parametrize(
    ("members", "amount", "expected"),
    [
        (["eu-1", "eu-2"], 5, {"eu-1": 2, "eu-2": 3}),
        (["us-1", "us-2", "us-3"], 5, {"us-1": 1, "us-2": 2, "us-3": 2}),
    ],
)
def test_even_split_without_history(
    members: list[str], amount: int, expected: dict[str, int]
) -> None:
    assert split_evenly(members, amount, {}) == expected


@pytest.mark.parametrize(
    ("partition", "expected"), [(4, {"eu-1": 1, "eu-2": 3}), (6, {"eu-1": 3, "eu-2": 3})]
)
def test_rows21_22_partitions_walk_descending(partition: int, expected: dict[str, int]) -> None:
    assert partitions(["eu-1", "eu-2"], {"eu-1": 3, "eu-2": 3}, partition) == expected


def test_membership_first_subset_wins_and_reports_overlap() -> None:
    specs = subsets(
        {"name": "gold", "clusterSelector": {"matchLabels": {"tier": "gold"}}},
        {"name": "eu", "clusterSelector": {"matchLabels": {"region": "eu"}}},
    )
    labels = {"eu-1": {"region": "eu", "tier": "gold"}, "eu-2": {"region": "eu"}, "ap-1": {}}
    m = membership(specs, ["eu-2", "eu-1", "ap-1"], labels)
    assert m.members == {"gold": ("eu-1",), "eu": ("eu-2",)}
    assert m.overlapping == (("eu-1", ("gold", "eu")),)
    assert m.unassigned == ("ap-1",)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"updateStrategy": {"type": "Auto"}}, "updateStrategy.type Auto is not supported"),
        (
            {"updateStrategy": {"manualUpdate": {"partitions": {"zz": 1}}}},
            "partitions: subset zz does not exist",
        ),
        (
            {"updateStrategy": {"manualUpdate": {"partitions": {"a": -1}}}},
            "partitions: subset a must not be negative",
        ),
    ],
)
def test_update_strategy_checks(spec: dict[str, Any], message: str) -> None:
    assert first(rd_of(4, {"name": "a"}, **spec), 4) == message


def test_names_and_selection_checks() -> None:
    rd = ReplicaDistribution.model_validate(
        {
            "apiVersion": "gitfleet.io/v1alpha1",
            "kind": "ReplicaDistribution",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {
                "workload": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"},
                "replicas": -1,
                "topology": {
                    "subsets": [{"name": "a", "clusterNames": ["x"]}, {"name": "a"}, {"name": "B_"}]
                },
            },
        }
    )
    messages = [m for _, m in validate(rd, 3)]
    assert messages[:3] == [
        "spec.replicas must not be negative",
        "duplicated subset name a",
        "subset B_: name must be a DNS-1123 label",
    ]
    assert "subset a selects no clusters: set clusterSelector or clusterNames" in messages


def test_empty_subsets() -> None:
    rd = rd_of(3)
    assert first(rd, 3) == "topology.subsets must not be empty"


def test_a_held_distribution_keeps_its_placed_clusters_results_in_linear_time() -> None:
    """An invalid RD keeps the last results of the clusters still placed and holds the rest:
    each prior cluster is looked up once among the placed ones (not in their list: 3,000
    clusters made 2 million comparisons)."""
    names = [CountedName(f"c{i:05d}") for i in range(3000)]
    result = ClusterResult(subset=None, replicas=1, partition=None, content="")
    prior = PriorDistribution(clusters={n: result for n in names[::2]})
    inp = DistributionInput(cast(Any, None), "ns/rd", None, names[1000:], {}, prior)
    CountedName.compared = 0
    out = stage._kept(inp, "InvalidSpec", "held")
    assert CountedName.compared < 10 * len(names)
    assert list(out.results) == [n for n in names[::2] if n >= "c01000"]
    assert list(out.held) == [n for n in names[1000:] if n not in out.results]

"""The condition record of `state/prior/` (reconciler.priorconds) reads back to exactly the
conditions it was written from: grouped clusters, clusters that cannot be grouped, entries
without a cluster name in their numbered order."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from gitfleet.api import Condition
from gitfleet.api.grouping import NAME_TOKEN
from gitfleet.load.yamlio import dump_yaml
from reconciler import priorconds
from reconciler.priorconds import (
    PriorConditions,
    conditions_section,
    parse_conditions_section,
)
from reconciler.stagememo import forget_stages

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = datetime(2026, 1, 2, tzinfo=UTC)


def cond(type_: str, message: str, when: datetime = T0, status: str = "True") -> Condition:
    return Condition.model_validate(
        {
            "type": type_,
            "status": status,
            "reason": type_,
            "message": message,
            "observedGeneration": 1,
            "lastTransitionTime": when,
        }
    )


def conds(name: str, when: datetime = T0) -> tuple[Condition, ...]:
    return (cond("Scheduled", f'picked "{name}" (score 1)', when), cond("Applied", "all applied"))


def roundtrip(prior: PriorConditions) -> tuple[dict[str, Any], PriorConditions]:
    section = yaml.safe_load(dump_yaml(conditions_section(prior)))
    return section, parse_conditions_section(section)


def test_clusters_with_the_same_conditions_but_their_name_are_one_group() -> None:
    per_cluster = {n: conds(n) for n in ("c", "a", "b")} | {"late": conds("late", T1)}
    prior: PriorConditions = ((cond("Placed", "ok"),), per_cluster)
    section, back = roundtrip(prior)
    (group,) = section["perClusterGroups"]
    assert group["clusters"] == ["a", "b", "c"]
    assert group["conditions"][0]["message"] == f"picked {NAME_TOKEN} (score 1)"
    assert [e["cluster"] for e in section["perCluster"]] == ["late"]  # another time: alone
    assert back == prior


def test_a_name_already_holding_the_token_and_unnamed_entries_stay_single() -> None:
    odd = (cond("Scheduled", f"literal {NAME_TOKEN} text"),)
    unnamed = {
        f"#unselected-{i}": (cond("Scheduled", f"missing {i}", status="False"),) for i in range(12)
    }
    prior: PriorConditions = ((), {"x": odd, "y": odd, **unnamed})
    section, back = roundtrip(prior)
    assert "perClusterGroups" not in section
    assert [e.get("cluster") for e in section["perCluster"]] == ["x", "y", *[None] * 12]
    assert back == prior
    assert list(back[1]) == list(prior[1])  # #unselected-10 after #unselected-9


def test_an_empty_record_reads_back_empty() -> None:
    assert roundtrip(((), {}))[1] == ((), {})


def test_equal_conditions_of_other_objects_make_no_group_key_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    forget_stages()
    per_cluster = {n: conds(n) for n in ("a", "b", "c")}
    first = conditions_section(((), per_cluster), "web")
    made: list[str] = []
    real = priorconds._group_key

    def counted(name: str, cs: tuple[Condition, ...], plain: dict[int, Any]) -> Any:
        made.append(name)
        return real(name, cs, plain)

    monkeypatch.setattr(priorconds, "_group_key", counted)
    equal = {n: tuple(c.model_copy() for c in cs) for n, cs in per_cluster.items()}
    assert conditions_section(((), {**equal, "c": conds("c", T1)}), "web") != first
    assert made == ["c"]  # only the cluster whose conditions changed
    assert conditions_section(((), equal), "web") == first  # its key made again, the others kept
    assert made == ["c", "c"]
    forget_stages()


def test_a_groups_conditions_are_copied_only_where_they_name_the_cluster() -> None:
    """Read back, a group's clusters share the template's conditions that hold no token (and
    its whole tuple when none does); only a condition naming the cluster is its own."""
    named = {n: conds(n) for n in ("a", "b")}
    plain: dict[str, tuple[Condition, ...]] = {
        n: (cond("Applied", "all applied"),) for n in ("c", "d")
    }
    _, back = roundtrip(((), named | plain))
    assert back == ((), named | plain)
    a, b = back[1]["a"], back[1]["b"]
    assert a[1] is b[1] and a[0] is not b[0]
    assert (a[0].message, b[0].message) == ('picked "a" (score 1)', 'picked "b" (score 1)')
    assert back[1]["c"] is back[1]["d"]


def test_a_clusters_named_condition_is_one_object_across_records_of_a_pass() -> None:
    """Two placements' records whose groups hold equal conditions give a cluster the same
    named object (its JSON is then made once, as a cold pass's); a new pass starts afresh."""
    priorconds.next_pass()
    section = conditions_section(((), {n: conds(n) for n in ("a", "b")}))
    other = yaml.safe_load(dump_yaml(section))  # another placement's record: other objects
    first = parse_conditions_section(section)[1]["a"]
    second = parse_conditions_section(other)[1]["a"]
    assert first[0] is second[0] and first[0].message == 'picked "a" (score 1)'
    priorconds.next_pass()
    again = parse_conditions_section(other)[1]["a"]
    assert again[0] == first[0] and again[0] is not first[0]

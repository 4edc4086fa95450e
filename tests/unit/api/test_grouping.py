"""Grouping with a member field (`gitfleet.api.grouping`): entries that differ only in it group,
each member's value kept beside the names; expansion gives every entry back; a malformed list
is an error, not lost values; the shape written before members is still read."""

from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import replace
from typing import Any

import pytest
import yaml

from gitfleet.api.grouping import CONTENTS, NAME_TOKEN, expand_named, group_named, renamed
from gitfleet.load.yamlio import dump_yaml
from reconciler.binding import Binding, BindingDecision
from reconciler.state import PlacementState, parse_placement_state, placement_state_doc


def _row(name: str, content: str | None = "sha256:a", reason: str = "picked") -> dict[str, Any]:
    row: dict[str, Any] = {"cluster": name, "state": "Bound", "reason": f'{reason} "{name}"'}
    if content is not None:
        row["content"] = content
    return row


CASES = [
    ("one content a cluster: one group, a list", [_row("a", "h1"), _row("b", "h2")], 0, ["h1h2"]),
    ("one content for all: written once", [_row("a"), _row("b")], 0, ["sha256:a"]),
    ("no content: no list", [_row("a", None), _row("b", None)], 0, [None]),
    (
        "with and without content: two groups",
        [_row("a", "h1"), _row("b", None), _row("c", "h2"), _row("d", None)],
        0,
        ["h1h2", None],
    ),
    ("another field differs: singles", [_row("a", "h1"), _row("b", "h2", "other")], 2, []),
]


def _values(group: dict[str, Any]) -> str | None:
    if "contents" in group:
        return "".join(group["contents"])
    return group.get("content")


@pytest.mark.parametrize(("case", "rows", "singles", "groups"), CASES)
def test_entries_differing_in_the_member_group_and_expand_back(
    case: str, rows: list[dict[str, Any]], singles: int, groups: list[str | None]
) -> None:
    single, grouped = group_named(rows, "cluster", "clusters", member=CONTENTS)
    assert len(single) == singles, case
    assert [_values(g) for g in grouped] == groups, case
    assert all("content" not in g or "contents" not in g for g in grouped)
    assert expand_named(single, grouped, "cluster", "clusters", CONTENTS) == rows, case


def test_without_a_member_the_field_keeps_entries_apart() -> None:
    single, grouped = group_named([_row("a", "h1"), _row("b", "h2")], "cluster", "clusters")
    assert (len(single), grouped) == (2, [])


@pytest.mark.parametrize("contents", [["h1"], ["h1", "h2", "h3"], "h1", None])
def test_a_member_list_that_is_not_one_value_a_name_is_an_error(contents: Any) -> None:
    group = {"clusters": ["a", "b"], "state": "Bound", "contents": contents}
    with pytest.raises(ValueError, match="contents: must list one value for each"):
        expand_named([], [group], "cluster", "clusters", CONTENTS)


def test_a_group_written_before_members_is_read() -> None:
    group = {"clusters": ["a", "b"], "state": "Bound", "content": "sha256:a"}
    rows = expand_named([], [group], "cluster", "clusters", CONTENTS)
    assert rows == [{"cluster": n, "state": "Bound", "content": "sha256:a"} for n in "ab"]


def _binding(rng: random.Random, cluster: str) -> Binding:
    reason = f'Successfully scheduled resources for placement in "{cluster}": picked'
    content = rng.choice([None, "sha256:1", f"sha256:{cluster}"])
    return Binding(cluster, "Bound", 0, 1, decision=BindingDecision(reason), content=content)


@pytest.mark.parametrize("seed", range(20))
def test_a_state_file_with_per_cluster_contents_round_trips(seed: int) -> None:
    rng = random.Random(seed)
    clusters = sorted(rng.sample([f"c{i:02d}" for i in range(60)], rng.randrange(2, 40)))
    ps = PlacementState(key="p", bindings=tuple(_binding(rng, c) for c in clusters))
    doc = yaml.safe_load(dump_yaml(placement_state_doc(ps)))
    assert len(doc["bindings"]) <= 1 and len(doc.get("bindingGroups", [])) <= 2
    assert parse_placement_state(doc) == ps


def test_bindings_differing_only_in_content_are_one_group_in_a_fraction_of_the_bytes() -> None:
    """A cluster-dependent override gives every cluster its own content: 100 bindings."""
    rng = random.Random(1)
    bindings = tuple(replace(_binding(rng, f"c{i:03d}"), content=f"sha256:{i}") for i in range(100))
    text = dump_yaml(placement_state_doc(PlacementState(key="p", bindings=bindings)))
    doc = yaml.safe_load(text)
    assert doc["bindings"] == [] and len(doc["bindingGroups"]) == 1
    assert len(doc["bindingGroups"][0]["contents"]) == 100
    one = dump_yaml(placement_state_doc(PlacementState(key="p", bindings=bindings[:1])))
    assert len(text) < 100 * len(one) / 4


def test_renamed_copies_every_container_and_renames_every_string() -> None:
    """Plain dicts and lists (told by their exact type) and their subclasses, scalars kept."""
    inner = OrderedDict([("why", 'in "a"'), ("n", 3)])
    value = {"m": [inner, 'at "a"', 1.5, True, None, ("t", 'in "a"')], "k": {"s": 'x "a"'}}
    out = renamed(value, '"a"', NAME_TOKEN)
    assert out == {
        "m": [
            {"why": f"in {NAME_TOKEN}", "n": 3},
            f"at {NAME_TOKEN}",
            1.5,
            True,
            None,
            ("t", 'in "a"'),  # a tuple is no list: kept as it is, as before
        ],
        "k": {"s": f"x {NAME_TOKEN}"},
    }
    assert type(out["m"][0]) is dict and out["m"] is not value["m"]
    assert out["k"] is not value["k"] and value["k"] == {"s": 'x "a"'}  # the input unchanged

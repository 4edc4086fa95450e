"""A placement's clusters mostly share their conditions, and the status stage holds each distinct
one once: `status.timed` builds one Condition for equal ones under one pass clock, the entries
share its dumped dict, the grouping texts of one group are one string, and the condition
record's group keys share the parts of conditions that name no cluster. Sharing changes no byte
(the golden tests), and a condition that names another cluster keeps its grouping."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchmarks.generate import FleetSize, build_fleet, write_fleet
from gitfleet.api import Condition
from gitfleet.api.canonical import canonical_json
from gitfleet.api.grouping import group_key
from gitfleet.api.output import group_cluster_statuses
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo, statusentries, statusrollout
from reconciler.pass_ import reconcile
from reconciler.placement import PlacementPlan
from reconciler.priorconds import _group_key, conditions_section, dump_conditions
from reconciler.state import State
from reconciler.status import Cond, timed
from reconciler.statusgroups import _single
from renderers import load_fleet

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
LATER = datetime(2026, 11, 21, 11, tzinfo=UTC)
APPLIED = Cond("Applied", "Unknown", "ApplyPending", "pending")


def test_a_conditions_json_is_made_once_and_only_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A dumped condition's JSON text is made when an entry's grouping text asks for it, once
    per condition object."""
    made: list[object] = []

    def counted(value: object) -> str:
        made.append(value)
        return canonical_json(value)

    monkeypatch.setattr(statusrollout, "canonical_json", counted)
    cond = timed([APPLIED], (), 1, NOW)[0]
    for _ in range(2):  # nothing an earlier test dumped is remembered
        statusrollout.next_round()
    dumped = statusrollout.dumped(cond)
    assert statusrollout.dumped(cond) is dumped and made == []
    text = statusrollout.dumped_json(cond)
    assert statusrollout.dumped_json(cond) is text and made == [dumped]
    assert text == canonical_json(dump_conditions((cond,))[0])


def test_equal_conditions_under_one_clock_are_one_object() -> None:
    first = timed([Cond("Scheduled", "True", "Scheduled", 'in "a"'), APPLIED], (), 1, NOW)
    second = timed([Cond("Scheduled", "True", "Scheduled", 'in "b"'), APPLIED], (), 1, NOW)
    assert first[1] is second[1]
    assert first[0] is not second[0] and first[0].message == 'in "a"'
    assert timed([APPLIED], (), 2, NOW)[0] is not first[1]  # another generation
    later = timed([APPLIED], (), 1, LATER)[0]
    assert later.last_transition_time == "2026-11-21T11:00:00Z"
    kept = timed([APPLIED], (first[1],), 1, LATER)[0]
    assert kept is first[1]  # a kept condition is the prior's own object, whatever the clock


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlacementPlan]:
    """The generated fleet's placement with the most selected clusters."""
    placememo.forget()
    root: Path = tmp_path_factory.mktemp("fleet")
    write_fleet(build_fleet(FleetSize(16, 12, 48, 6), seed=7), root)
    result = reconcile(load_fleet(WorkdirTree(root)), State(), None, NOW)
    yield max(result.plans.values(), key=lambda p: (len(p.live_clusters()), p.key))
    placememo.forget()


def test_a_placements_entries_hold_each_distinct_condition_once(plan: PlacementPlan) -> None:
    placememo.forget()
    made = statusentries.cluster_entries(plan, {}, {}, NOW)
    conds = [c for timed_conds in made.by_name.values() for c in timed_conds]
    assert len(made.by_name) > 3
    distinct = {c.model_dump_json(): c for c in conds}
    assert len({id(c) for c in conds}) == len(distinct)
    dumped = [d for entry in made.entries for d in entry["conditions"]]
    assert len({id(d) for d in dumped}) == len(distinct)


def test_the_grouping_texts_of_one_group_are_one_string(plan: PlacementPlan) -> None:
    placememo.forget()
    made = statusentries.cluster_entries(plan, {}, {}, NOW)
    group_cluster_statuses(made.entries, made.texts)
    texts = [slot[0] for slot in made.texts if slot and slot[0] is not None]
    assert len(texts) == len(made.entries)
    assert len({id(t) for t in texts}) == len(set(texts)) < len(texts)


def _cond(message: str) -> Condition:
    return timed([Cond("Applied", "True", "Applied", message)], (), 1, NOW)[0]


def test_group_keys_share_the_parts_that_name_no_cluster() -> None:
    shared = _cond("applied")
    plain: dict[int, tuple[object, ...]] = {}
    a = _group_key("a", (_cond('in "a"'), shared), plain)
    b = _group_key("b", (_cond('in "b"'), shared), plain)
    assert a is not None and b is not None
    assert a == b and a[1] is b[1]


def test_a_shared_condition_naming_a_cluster_is_tokenized_for_that_cluster() -> None:
    """Clusters `a` and `b` hold the very condition naming `"b"`: for `b` it is its own
    name (written as the token), for `a` another cluster's, so they are not one group."""
    names_b = _cond('waiting for "b"')
    section = conditions_section(((), {"a": (names_b,), "b": (names_b,), "c": (names_b,)}))
    assert [e["cluster"] for e in section["perCluster"]] == ["b"]
    assert [g["clusters"] for g in section["perClusterGroups"]] == [["a", "c"]]


def test_clusters_reading_the_same_prior_conditions_share_one_rollout() -> None:
    """`statusrollout.rollout` with prior conditions is made once per the prior objects it
    reads (their Scheduled condition, each cluster's own, is not read), and is what `timed`
    gives, with its JSON text."""
    statusrollout.next_round()
    applied = _cond("applied")
    conds = (Cond("Applied", "True", "Applied", "applied"),)
    first = statusrollout.rollout(conds, (_cond('in "a"'), applied), 1, LATER)
    assert statusrollout.rollout(conds, (_cond('in "b"'), applied), 1, LATER) is first
    assert first.timed == (applied,) == timed(conds, (applied,), 1, LATER)
    assert first.text == "," + canonical_json(dump_conditions((applied,))[0])
    other = applied.model_copy()  # equal, another object: made again, to the same value
    again = statusrollout.rollout(conds, (other,), 1, LATER)
    assert again is not first and again.timed == (other,) and again.text == first.text
    changed = statusrollout.rollout(conds, (_cond("stale"),), 1, LATER)
    assert changed.timed[0].last_transition_time == "2026-11-21T11:00:00Z"


def test_entries_with_prior_conditions_get_their_grouping_texts(plan: PlacementPlan) -> None:
    """As a restarted hub makes them: each entry's text from its conditions' texts, the one
    `group_key` would make."""
    placememo.forget()
    prior = statusentries.cluster_entries(plan, {}, {}, NOW).by_name
    placememo.forget()
    statusrollout.next_round()
    made = statusentries.cluster_entries(plan, dict(prior), {}, LATER)
    texts = [slot[0] for slot in made.texts]
    assert len(texts) == len(made.entries) > 3
    assert texts == [group_key(e, "clusterName", _single) for e in made.entries]

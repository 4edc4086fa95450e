"""Per-placement documents assembled from kept per-cluster fragments equal the documents built
whole: PlacementDecision slices from kept entry texts (`publish._slice_bytes`), grouping keys
kept with each entry (`group_named`'s slots), placement conditions counted per distinct
conditions object; and across pass sequences on a generated fleet (a cluster added, removed,
a report changed, a condition's time changed, a placement's spec changed) every status, state,
prior and decision file of the warm pass equals the fresh pass's."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from gitfleet.api import Condition
from gitfleet.api.output import group_cluster_statuses, group_named
from gitfleet.api.report import AgentReport, FailedResourcePlacement, PlacementReport
from reconciler import placememo, publish
from reconciler.decisions import decision_documents, decision_slices
from reconciler.output import yaml_bytes
from reconciler.pass_ import PassResult
from reconciler.status import Cond, cluster_rollout_conditions, placement_conditions
from reconciler.yamlparts import ItemTexts, item_text, names_block, padded

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
DOC_PREFIXES = ("status/placements/", "state/", "decisions/")


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    placememo.forget()
    yield
    placememo.forget()


def _names(n: int, prefix: str = "c") -> list[str]:
    return [f"{prefix}-{i:03d}" for i in range(n)]


SLICES: list[tuple[str, str, str, list[str], dict[str, str]]] = [
    ("no clusters", "web", "", [], {}),
    ("one cluster", "web", "", ["a"], {"a": "picked"}),
    ("a full slice", "web", "team", _names(100), {c: "r" for c in _names(100)}),
    ("two slices", "web", "", _names(101), {}),
    ("three slices, unsorted", "web", "", list(reversed(_names(250))), {"c-007": "x"}),
    (
        "reasons YAML quotes",
        "ns1-api",
        "ns1",
        ["b", "a", "yes", "1.5"],
        {"a": "it's: here", "b": '"quoted" - x', "yes": "#hash", "1.5": "ünïcode ✓"},
    ),
    ("a reason on two lines", "web", "", ["a", "b"], {"a": "line one\nline two"}),
    ("a long key", "k" * 70, "", ["a"], {"a": "r"}),
]


@pytest.mark.parametrize(
    ("case", "key", "namespace", "clusters", "reasons"), SLICES, ids=[c[0] for c in SLICES]
)
def test_decision_slices_from_kept_entries_equal_the_whole_documents(
    case: str, key: str, namespace: str, clusters: list[str], reasons: dict[str, str]
) -> None:
    revision = publish._revision(sorted(clusters))
    whole = {
        path: yaml_bytes(doc)
        for path, doc in decision_documents(key, "name", namespace, clusters, revision, reasons)
    }
    for _ in range(2):  # the second time from the kept texts
        publish._ENTRY_TEXTS.next_round()
        parts = {
            path: publish._slice_bytes(doc, chunk, reasons)
            for path, doc, chunk in decision_slices(key, "name", namespace, clusters, revision)
        }
        assert parts == whole, case


def test_item_texts_pad_to_any_indent_and_refuse_empty_lines() -> None:
    texts = ItemTexts()
    names = ["a", "yes", "it's", "x: y", "ü"]
    block = names_block(names, 2, texts)
    doc = yaml.safe_dump({"k": {"names": names}}, allow_unicode=True, sort_keys=True)
    assert block is not None and doc.endswith(block)
    assert item_text({"m": "one\n\ntwo"}) is None
    assert padded("- a\n  b: c\n", 2) == "  - a\n    b: c\n"


def _entry(name: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"clusterName": name, "conditions": [{"message": message}], **extra}


def test_grouping_with_kept_slots_equals_grouping_afresh() -> None:
    entries = [
        _entry("b", 'in "b"'),
        _entry("a", 'in "a"'),
        _entry("c", "other"),
        _entry("d", "other", failedPlacements=[{"name": "x"}]),
        _entry("e", '"${clusterName}"'),
        {"conditions": []},
    ]
    slots: list[list[Any]] = [[] for _ in entries]
    fresh = group_cluster_statuses(entries)
    assert group_cluster_statuses(entries, slots) == fresh
    assert all(len(slot) == 1 for slot in slots)
    assert group_cluster_statuses(entries, slots) == fresh  # from the kept keys
    # a slot is what decides: a wrong kept key groups wrongly (the key is not re-made)
    slots[2][0] = slots[0][0]
    assert group_cluster_statuses(entries, slots) != fresh
    rows = [{"cluster": "x", "v": 1}, {"cluster": "y", "v": 1}]
    assert group_named(rows, "cluster", "clusters", texts=[[], []]) == group_named(
        rows, "cluster", "clusters"
    )


def _rollout(*reported: Cond) -> list[Cond]:
    return [
        Cond("Scheduled", "True", "Scheduled", "s"),
        *cluster_rollout_conditions(True, None, reported),
    ]


APPLIED = Cond("Applied", "True", "Applied", "ok")
AVAILABLE = Cond("Available", "True", "Available", "ok")
FAILED = Cond("Applied", "False", "Failed", "no")
OVERRIDDEN = Cond("Overridden", "True", "OverriddenSucceeded", "o")
CONDITIONS = [
    ("all pending", [_rollout()] * 3),
    ("all available", [_rollout(APPLIED, AVAILABLE)] * 4),
    ("one failed", [_rollout(APPLIED, AVAILABLE)] * 3 + [_rollout(FAILED)]),
    ("mixed", [_rollout(APPLIED)] * 2 + [_rollout(APPLIED, AVAILABLE)] + [_rollout()]),
    ("not started", [_rollout(), cluster_rollout_conditions(False, None)]),
    (
        "overridden in one",
        [_rollout(APPLIED, AVAILABLE), [Cond("RolloutStarted", "True", "r", "m"), OVERRIDDEN]],
    ),
]


@pytest.mark.parametrize(("case", "clusters"), CONDITIONS, ids=[c for c, _ in CONDITIONS])
def test_placement_conditions_count_the_same_with_shared_or_copied_objects(
    case: str, clusters: list[list[Cond]]
) -> None:
    shared = placement_conditions("P", Cond("Scheduled", "True", "s", "m"), clusters)
    copied = [list(c) for c in clusters]  # every cluster its own object
    assert placement_conditions("P", Cond("Scheduled", "True", "s", "m"), copied) == shared
    counts = [c.message for c in shared]
    assert any(str(len(clusters)) in m for m in counts) or len(shared) > 1, case


# --- pass sequences on a generated fleet -------------------------------------------------


def _reports(result: PassResult, failing: str | None = None) -> dict[str, AgentReport]:
    """Every cluster's report of what the pass gave it (`failing`: one object failed there)."""
    failed = []
    if failing is not None:
        cond = Condition(type="Applied", status="False", reason="Failed", message="denied")
        failed = [
            FailedResourcePlacement(version="v1", kind="ConfigMap", name=failing, condition=cond)
        ]
    by_cluster: dict[str, list[PlacementReport]] = {}
    for key, plan in sorted(result.plans.items()):
        for b in plan.state.bindings:
            if b.content is None or b.resource_index is None:
                continue
            entry = PlacementReport.model_validate(
                {
                    "key": key,
                    "contentHash": b.content,
                    "resourceSnapshotIndex": b.resource_index,
                    "conditions": [
                        {"type": "Applied", "status": "True", "reason": "Applied", "message": "ok"}
                    ],
                }
            )
            if failed:
                entry = entry.model_copy(update={"failed_placements": failed})
            by_cluster.setdefault(b.cluster, []).append(entry)
    return {
        c: AgentReport.model_validate(
            {"cluster": c, "placements": [], "observedAt": "2026-11-21T09:00:00Z"}
        ).model_copy(update={"placements": entries})
        for c, entries in by_cluster.items()
    }

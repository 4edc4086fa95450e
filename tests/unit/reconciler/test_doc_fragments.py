"""Per-placement documents assembled from kept per-cluster fragments equal the documents built
whole: PlacementDecision slices from kept entry texts (`publish._slice_bytes`), grouping keys
kept with each entry (`group_named`'s slots), placement conditions counted per distinct
conditions object; and across pass sequences on a generated fleet (a cluster added, removed,
a report changed, a condition's time changed, a placement's spec changed) every status, state,
prior and decision file of the warm pass equals the fresh pass's."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.generate import FleetSize, GeneratedFleet, build_fleet, write_fleet
from benchmarks.hub_scenarios import _edit_placement
from gitfleet.api.grouping import group_named
from gitfleet.api.output import group_cluster_statuses
from gitfleet.api.report import AgentReport
from gitfleet.load.model import FleetSnapshot
from gitfleet.load.yamlio import dump_yaml
from gitfleet.repo.workdir import WorkdirTree
from reconciler import placememo, publish, statusentries
from reconciler.decisions import decision_documents, decision_slices
from reconciler.output import yaml_bytes
from reconciler.pass_ import PassResult, reconcile
from reconciler.state import Binding, PlacementState, State, read_state
from reconciler.status import (
    _PLACEMENT,
    NO_OVERRIDE,
    ROLLOUT_TYPES,
    Cond,
    cluster_rollout_conditions,
    placement_conditions,
)
from reconciler.yamlparts import (
    Blocks,
    Spliced,
    grouped_parts,
    item_text,
    items_block,
    padded,
    piece_text,
)
from renderers import load_fleet

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
    whole = {
        path: yaml_bytes(doc)
        for path, doc in decision_documents(key, "name", namespace, clusters, reasons)
    }
    for _ in range(2):  # the second time from the kept texts
        publish._ENTRY_TEXTS.next_round()
        parts = {
            path: publish._slice_bytes(doc, chunk, reasons)
            for path, doc, chunk in decision_slices(key, "name", namespace, clusters)
        }
        assert parts == whole, case


class _Plan:
    """What `publish._published` reads of a plan."""

    def __init__(self, clusters: list[str], reasons: dict[str, str]) -> None:
        self.name, self.namespace = "web", ""
        self.clusters = clusters
        self.decisions = [_Decision(c, reasons.get(c, "")) for c in clusters]
        self.state = PlacementState("web", bindings=tuple(Binding(c, "Bound", 0) for c in clusters))

    def targeted_clusters(self) -> list[str]:
        return sorted(self.clusters)


@dataclasses.dataclass(frozen=True)
class _Decision:
    cluster: str
    reason: str
    selected: bool = True


def _whole(plan: _Plan) -> dict[str, bytes]:
    clusters = plan.targeted_clusters()
    reasons = {d.cluster: d.reason for d in plan.decisions}
    docs = decision_documents("web", "web", "", clusters, reasons)
    return {path: yaml_bytes(doc) for path, doc in docs}


def test_decision_files_follow_each_reason_and_cluster() -> None:
    names = _names(150)
    plans = [
        ("first", _Plan(names, {})),
        ("a reason changed", _Plan(names, {"c-003": "picked"})),
        ("another reason", _Plan(names, {"c-003": "picked again"})),
        ("a cluster added", _Plan([*names, "c-150"], {"c-003": "picked again"})),
        ("a cluster removed", _Plan(names[1:], {"c-003": "picked again"})),
        ("as before", _Plan(names, {})),
    ]
    for name, plan in plans:
        publish._ENTRY_TEXTS.next_round()
        assert publish._published("web", plan) == _whole(plan), name  # type: ignore[arg-type]


def test_item_texts_pad_to_any_indent_and_refuse_empty_lines() -> None:
    blocks = Blocks()
    names = ["a", "yes", "it's", "x: y", "ü"]
    block = blocks.names(names)(2)
    blocks.next_round()
    assert blocks.names(list(names))(2) == block
    assert blocks.names(names)(0) == "".join(f"- {n}\n" for n in ["a", "'yes'", "it's"]) + (
        "- 'x: y'\n- ü\n"
    )
    doc = yaml.safe_dump({"k": {"names": names}}, allow_unicode=True, sort_keys=True)
    assert block is not None and doc.endswith(block)
    assert item_text({"m": "one\n\ntwo"}) is None
    assert padded("- a\n  b: c\n", 2) == "  - a\n    b: c\n"


def _status_like(n: int) -> dict[str, Any]:
    entries = [_entry(f"c{i}", f'in "c{i}"', failedPlacements=[{"n": i}]) for i in range(n)]
    return {
        "kind": "X",
        "status": {
            "conditions": [{"type": "A", "message": "m"}],
            "perClusterPlacementStatuses": entries,
            "perClusterPlacementStatusGroups": [
                {"clusterNames": [f"g{i}" for i in range(n)], "conditions": [{"a": 1}]},
                {"clusterNames": ["yes", "no"], "x": {"deep": [{"clusterNames": ["z"]}]}},
            ],
        },
        "zzz": [{"clusters": ["a", "b"]}, "two\nlines"],
    }


@pytest.mark.parametrize("n", [1, 3])
def test_spliced_documents_equal_the_whole_document(n: int) -> None:
    doc = _status_like(n)
    status = doc["status"]
    for pieces in ({}, {id(e): [] for e in status["perClusterPlacementStatuses"]}):
        for _ in range(2):  # the second time from the kept slots
            blocks, spliced = Blocks(), Spliced()
            entries = status["perClusterPlacementStatuses"]
            parts = {
                **status,
                "perClusterPlacementStatuses": spliced.part(entries, items_block(entries, pieces)),
                "perClusterPlacementStatusGroups": grouped_parts(
                    status["perClusterPlacementStatusGroups"], "clusterNames", spliced, blocks
                ),
            }
            zzz = grouped_parts(doc["zzz"][:1], "clusters", spliced, blocks) + doc["zzz"][1:]
            assert spliced.dump({**doc, "status": parts, "zzz": zzz}) == dump_yaml(doc)


def test_a_kept_piece_is_written_again_at_another_indent() -> None:
    item = {"a": 1, "b": [{"c": 2}]}
    pieces: dict[int, list[Any]] = {id(item): []}
    assert piece_text(item, 0, pieces) == "- a: 1\n  b:\n  - c: 2\n"
    assert piece_text(item, 2, pieces) == "  - a: 1\n    b:\n    - c: 2\n"
    assert piece_text(item, 2, pieces) == "  - a: 1\n    b:\n    - c: 2\n"  # from the slot


def test_a_part_that_cannot_be_padded_gives_the_whole_document() -> None:
    doc = {"a": [{"m": "one\n\ntwo", "n": "x"}], "b": [{"k": "v"}]}
    spliced = Spliced()
    parts = {
        "a": spliced.part(doc["a"], items_block(doc["a"], {})),
        "b": spliced.part(doc["b"], items_block(doc["b"], {})),
    }
    assert spliced.dump(parts) == dump_yaml(doc)


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
    ("diff reported", [[*_rollout(), Cond("DiffReported", "False", "d", "m")]] * 2),
    ("diff pending", [_rollout(), [*_rollout(), Cond("DiffReported", "True", "d", "m")]]),
]


def _reference_conditions(per_cluster: list[list[Cond]], report_diff: bool) -> list[Cond]:
    """placement_conditions as it was: every cluster's conditions looked at for every type."""
    conds = [Cond("PScheduled", "True", "s", "m")]
    types = (*ROLLOUT_TYPES[:3], "DiffReported") if report_diff else ROLLOUT_TYPES
    for ctype in types:
        found = [next((c for c in cl if c.type == ctype), None) for cl in per_cluster]
        unknown = sum(1 for c in found if c is None or c.status == "Unknown")
        false = sum(1 for c in found if c is not None and c.status == "False")
        status, count = (
            ("Unknown", unknown) if unknown else ("False", false) if false else ("True", len(found))
        )
        reason, message = _PLACEMENT[(ctype, status)]
        if (
            ctype == "Overridden"
            and status == "True"
            and not any(c is not None and c.reason == "OverriddenSucceeded" for c in found)
        ):
            reason, message = NO_OVERRIDE
        conds.append(Cond("P" + ctype, status, reason, message.format(n=count)))
        if status != "True":
            break
    return conds


@pytest.mark.parametrize(("case", "clusters"), CONDITIONS, ids=[c for c, _ in CONDITIONS])
@pytest.mark.parametrize("report_diff", [False, True])
def test_placement_conditions_from_summaries_equal_looking_at_every_cluster(
    case: str, clusters: list[list[Cond]], report_diff: bool
) -> None:
    scheduled = Cond("Scheduled", "True", "s", "m")
    out = placement_conditions("P", scheduled, clusters, report_diff)
    assert out == _reference_conditions(clusters, report_diff), case
    assert len(out) > 1


# --- pass sequences on a generated fleet -------------------------------------------------


def _reports(
    result: PassResult, failing: str | None = None, available: bool = True
) -> dict[str, AgentReport]:
    """Every cluster's report that it applied what the pass gave it (`failing`: that cluster
    failed one object; `available`: the objects are available too)."""
    by_cluster: dict[str, list[dict[str, Any]]] = {}
    for key, plan in sorted(result.plans.items()):
        for b in plan.state.bindings:
            if b.content is None or b.resource_index is None:
                continue
            conds = [_reported("Applied", b.cluster != failing)]
            if available and b.cluster != failing:
                conds.append(_reported("Available", True))
            entry: dict[str, Any] = {
                "key": key,
                "name": plan.name,
                "contentHash": b.content,
                "resourceSnapshotIndex": b.resource_index,
                "conditions": conds,
            }
            if b.cluster == failing:
                entry["failedPlacements"] = [
                    {
                        "version": "v1",
                        "kind": "ConfigMap",
                        "name": "x",
                        "namespace": "n",
                        "condition": _reported("Applied", False),
                    }
                ]
            by_cluster.setdefault(b.cluster, []).append(entry)
    return {
        cluster: AgentReport.model_validate(
            {
                "apiVersion": "gitfleet.io/v1alpha1",
                "kind": "AgentReport",
                "metadata": {"name": cluster},
                "heartbeatTime": "2026-11-21T10:01:00Z",
                "agentVersion": "test",
                "placements": entries,
            }
        )
        for cluster, entries in by_cluster.items()
    }


def _reported(ctype: str, ok: bool) -> dict[str, Any]:
    return {
        "type": ctype,
        "status": "True" if ok else "False",
        "reason": "Done" if ok else "Failed",
        "message": "done" if ok else "denied",
        "lastTransitionTime": "2026-11-21T10:01:00Z",
    }


Step = Callable[[FleetSnapshot, PassResult], tuple[FleetSnapshot, dict[str, AgentReport]]]


def _copy_as(fleet: FleetSnapshot, source: str, name: str) -> FleetSnapshot:
    old = fleet.clusters[source]
    meta = old.metadata.model_copy(update={"name": name})
    clusters = {**fleet.clusters, name: old.model_copy(update={"metadata": meta})}
    return dataclasses.replace(fleet, clusters=clusters)


def _without(fleet: FleetSnapshot, name: str) -> FleetSnapshot:
    clusters = {k: v for k, v in fleet.clusters.items() if k != name}
    return dataclasses.replace(fleet, clusters=clusters)


def _steps(edited: FleetSnapshot) -> list[tuple[str, Step]]:
    """(name, step): the next pass's fleet and reports from the fleet and the last result."""
    return [
        ("reports arrive", lambda f, r: (f, _reports(r))),
        ("settled", lambda f, r: (f, _reports(r))),  # the new condition times are kept now
        (
            "cluster added first",
            lambda f, r: (_copy_as(f, sorted(f.clusters)[0], "aaa-new"), _reports(r)),
        ),
        ("its report arrives", lambda f, r: (f, _reports(r))),
        ("settled again", lambda f, r: (f, _reports(r))),
        (
            "cluster added last",
            lambda f, r: (_copy_as(f, sorted(f.clusters)[1], "zzz-new"), _reports(r)),
        ),
        ("cluster removed", lambda f, r: (_without(f, "aaa-new"), _reports(r))),
        ("a report changed", lambda f, r: (f, _reports(r, failing=sorted(f.clusters)[2]))),
        ("a condition changed", lambda f, r: (f, _reports(r, available=False))),
        ("placement spec changed", lambda f, r: (edited, _reports(r))),
        ("a cluster of it removed", lambda f, r: (_without(f, sorted(f.clusters)[3]), _reports(r))),
    ]


def _edited(root: Path, fleet: GeneratedFleet) -> FleetSnapshot:
    """The fleet with one PickFixed placement's cluster list changed."""
    edit = _edit_placement(fleet)
    assert edit is not None
    edit(root, 0)
    return load_fleet(WorkdirTree(root))


def test_pass_sequences_give_the_documents_a_fresh_pass_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generated = build_fleet(FleetSize(16, 12, 48, 6), seed=7)
    write_fleet(generated, tmp_path)
    fleet = load_fleet(WorkdirTree(tmp_path))
    edited = _edited(tmp_path, generated)
    made: list[str] = []
    real = statusentries._entry

    def counting(plan: Any, *args: Any) -> Any:
        made.append(plan.key)
        return real(plan, *args)

    monkeypatch.setattr(statusentries, "_entry", counting)
    result = reconcile(fleet, State(), None, NOW)
    for k, (name, step) in enumerate(_steps(edited)):
        fleet, reports = step(fleet, result)
        prior = read_state(result.files)[0]
        now = NOW + timedelta(minutes=k + 1)
        made.clear()
        warm = reconcile(fleet, prior, None, now, reports)
        warm_made = len(made)
        placememo.forget()
        made.clear()
        fresh = reconcile(fleet, prior, None, now, reports)
        differ = sorted(p for p in fresh.files if warm.files.get(p) != fresh.files[p])
        assert not differ and warm.files.keys() == fresh.files.keys(), (name, differ[:3])
        assert any(p.startswith(DOC_PREFIXES) for p in fresh.files)
        if name.startswith("cluster added"):
            assert warm_made < len(made) / 4, (name, warm_made, len(made))
        result = fresh  # the memos hold the fresh pass now: the next step starts from it

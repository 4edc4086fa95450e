"""The output contract's shape (gitfleet.api.output, version gitfleet.io/v1alpha2): grouping and
expansion are exact inverses, an older-shape output is migrated by the next pass (also for a
held placement, whose files come only from the old output), and per-placement indexes are
shared bytes across clusters."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitfleet.api.canonical import content_hash
from gitfleet.api.grouping import NAME_TOKEN, expand_named, group_named
from gitfleet.api.output import (
    GROUPS_FIELD,
    PER_CLUSTER_FIELD,
    expand_cluster_statuses,
    group_cluster_statuses,
    split_cluster_path,
)
from gitfleet.load.yamlio import dump_yaml
from gitfleet.repo.workdir import WorkdirTree
from reconciler.pass_ import reconcile
from reconciler.state import (
    Binding,
    BindingDecision,
    PlacementState,
    State,
    parse_placement_state,
    placement_state_doc,
    read_state,
)
from renderers import load_fleet

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)
QUICKSTART = ROOT / "examples/quickstart"


def _entry(name: str, message: str = "", **extra: Any) -> dict[str, Any]:
    text = message or f'scheduled in "{name}": picked'
    return {"clusterName": name, "conditions": [{"type": "Scheduled", "message": text}], **extra}


GROUPING = [
    ("identical but for the name", [_entry("a"), _entry("b")], 0, 1),
    ("a single cluster stays single", [_entry("a")], 1, 0),
    ("different messages", [_entry("a"), _entry("b", "other")], 2, 0),
    (
        "failed objects stay single",
        [_entry("a"), _entry("b"), _entry("c", failedPlacements=[{}])],
        1,
        1,
    ),
    ("an entry holding the token", [_entry("a", NAME_TOKEN), _entry("b", NAME_TOKEN)], 2, 0),
    ("no cluster name", [{"conditions": []}, {"conditions": []}], 2, 0),
    (
        "name inside another name",
        [_entry("a", 'in "a" and "ab"'), _entry("b", 'in "b" and "ab"')],
        0,
        1,
    ),
    ("names JSON escapes", [_entry('q"1'), _entry('q"2'), _entry("t\t1"), _entry("t\t2")], 0, 1),
    ("a backslash and a line break", [_entry("b\\1"), _entry("b\\2"), _entry("n\n")], 0, 1),
    (
        "names beyond ASCII",
        [_entry("ü1"), _entry("ü2"), _entry("\u2028x"), _entry("\u2028y")],
        0,
        1,
    ),
]


@pytest.mark.parametrize(("case", "entries", "singles", "groups"), GROUPING)
def test_grouping_is_undone_exactly_by_expansion(
    case: str, entries: list[dict[str, Any]], singles: int, groups: int
) -> None:
    single, grouped = group_cluster_statuses(entries)
    assert (len(single), len(grouped)) == (singles, groups), case
    status = {PER_CLUSTER_FIELD: single, GROUPS_FIELD: grouped}
    named = sorted((e for e in entries if "clusterName" in e), key=lambda e: e["clusterName"])
    assert expand_cluster_statuses(status) == named + [e for e in entries if "clusterName" not in e]


def test_malformed_groups_are_skipped_not_fatal() -> None:
    assert expand_named("x", [3, {"names": ["a"], "v": 1}], "name", "names") == [
        {"name": "a", "v": 1}
    ]
    assert group_named([], "name", "names") == ([], [])


def _binding(cluster: str, state: str = "Bound", content: str = "sha256:x") -> Binding:
    reason = f'Successfully scheduled resources for placement in "{cluster}": picked'
    return Binding(cluster, state, 0, 1, decision=BindingDecision(reason), content=content)


@pytest.mark.parametrize(
    ("bindings", "grouped"),
    [
        ((_binding("a"), _binding("b"), _binding("c", content="sha256:y")), True),
        ((_binding("a"), _binding("a", "Unscheduled")), False),
        ((_binding("b"), _binding("a")), False),  # not in scheduler order: written as it is
        ((_binding("a"), _binding("a")), False),  # a repeated (cluster, state)
    ],
)
def test_state_bindings_round_trip(bindings: tuple[Binding, ...], grouped: bool) -> None:
    ps = PlacementState(key="p", bindings=bindings)
    doc = yaml.safe_load(dump_yaml(placement_state_doc(ps)))
    assert ("bindingGroups" in doc) is grouped
    assert parse_placement_state(doc) == ps


def _legacy(files: dict[str, bytes]) -> dict[str, bytes]:
    """The same output in the gitfleet.io/v1alpha1 shape: objects (with hashes) listed in the
    cluster index, no placement indexes, one status entry a cluster, plain binding lists, no
    `state/prior/` records (they came later)."""
    out = {
        p: d
        for p, d in files.items()
        if (p.count("/") != 3 or not p.endswith("/index.yaml")) and not p.startswith("state/prior/")
    }
    for path, data in files.items():
        where = split_cluster_path(path)
        doc = yaml.safe_load(data)
        if where is not None and where.what == "cluster-index":
            for entry in doc["placements"]:
                listed = yaml.safe_load(
                    files[f"clusters/{where.cluster}/{entry['key']}/index.yaml"]
                )
                entry["objects"] = [
                    {
                        **o,
                        "hash": content_hash(
                            yaml.safe_load(
                                files[f"clusters/{where.cluster}/{entry['key']}/{o['file']}"]
                            )
                        ),
                    }
                    for o in listed["objects"]
                ]
            doc["apiVersion"] = "gitfleet.io/v1alpha1"
        elif path.startswith("status/placements/"):
            entries = expand_cluster_statuses(doc["status"])
            doc["status"].pop(GROUPS_FIELD, None)
            doc["status"].pop(PER_CLUSTER_FIELD, None)
            if entries:
                doc["status"][PER_CLUSTER_FIELD] = entries
        elif path.startswith("state/placements/"):
            ps = parse_placement_state(doc)
            doc["bindings"] = [{"cluster": b.cluster, **_plain(b)} for b in ps.bindings]
            doc.pop("bindingGroups", None)
            doc["apiVersion"] = "gitfleet.io/v1alpha1"
        else:
            continue
        out[path] = dump_yaml(doc).encode()
    return out


def _plain(b: Binding) -> dict[str, Any]:
    one = placement_state_doc(PlacementState(key="x", bindings=(b,)))["bindings"][0]
    return {k: v for k, v in one.items() if k != "cluster"}


def test_an_older_shape_output_is_migrated_by_the_next_pass() -> None:
    fleet = load_fleet(WorkdirTree(QUICKSTART))
    first = reconcile(fleet, State(), None, NOW)
    legacy = _legacy(first.files)
    assert legacy != first.files and not any(p.endswith("web/index.yaml") for p in legacy)
    prior, problems = read_state(legacy)
    assert not problems and prior.placements == read_state(first.files)[0].placements
    second = reconcile(fleet, State(prior.placements, legacy, prior.overrides), None, NOW)
    assert second.files == first.files


def test_a_held_placement_is_migrated_from_the_older_shape(tmp_path: Path) -> None:
    shutil.copytree(QUICKSTART, tmp_path / "fleet")
    first = reconcile(load_fleet(WorkdirTree(tmp_path / "fleet")), State(), None, NOW)
    legacy = _legacy(first.files)
    prior, _ = read_state(legacy)
    web = next((tmp_path / "fleet/resources").rglob("configmap*.yaml"))
    web.write_text(web.read_text() + "  broken: [unclosed\n")
    fleet = load_fleet(WorkdirTree(tmp_path / "fleet"))
    held = reconcile(fleet, State(prior.placements, legacy, prior.overrides), None, NOW)
    assert held.plans["web"].held
    cluster_paths = {p for p in first.files if p.startswith("clusters/")}
    assert {p: held.files.get(p) for p in cluster_paths} == {
        p: first.files[p] for p in cluster_paths
    }


def test_clusters_with_the_same_objects_share_one_placement_index() -> None:
    files = reconcile(load_fleet(WorkdirTree(QUICKSTART)), State(), None, NOW).files
    listed = {files[p] for p in files if p.endswith("/web/index.yaml")}
    assert len(listed) == 1 and b"hash" not in next(iter(listed))
    assert b"objects" not in files["clusters/eu-1/index.yaml"]

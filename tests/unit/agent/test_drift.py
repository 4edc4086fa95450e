"""Drift and diff detection (§6.2-6.3): Full/Partial, ReportDiff, IfNotDrifted, takeover, Secrets."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from gitfleet.agent.drift import clean, diff_objects, go_value
from gitfleet.agent.memory import InMemoryCluster
from gitfleet.agent.run import run_once
from gitfleet.api import PatchDetail
from gitfleet.load.yamlio import dump_yaml

from .conftest import COMMIT, COMMIT2, NOW, cm, deployment, directory, ns, options
from .test_run import cond, placement


def edit(cluster: InMemoryCluster, kind: str, name: str, patch: dict[str, Any]) -> None:
    api = "apps/v1" if kind == "Deployment" else "v1"
    cluster.patch(api, kind, "app", name, patch, field_manager="kubectl-edit")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "<nil>"),
        (True, "true"),
        (10, "10"),
        (1.5, "1.5"),
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (0.00001, "1e-05"),
        ("x", "x"),
        ({"b": 1, "a": "x"}, "map[a:x b:1]"),
        ([{"name": "http", "port": 80}], "[map[name:http port:80]]"),
    ],
)
def test_go_value_rendering(value: Any, text: str) -> None:
    assert go_value(value) == text


@pytest.mark.parametrize(
    ("hub", "member", "expected"),
    [
        ({"a": 1}, {"a": 2}, [PatchDetail(path="/a", value_in_member="2", value_in_hub="1")]),
        ({"a": 1}, {}, [PatchDetail(path="/a", value_in_hub="1")]),
        ({}, {"b": True}, [PatchDetail(path="/b", value_in_member="true")]),
        ({"l": [1, 2]}, {"l": [1]}, [PatchDetail(path="/l/1", value_in_hub="2")]),
        (
            {"m": {"x/y": "1"}},
            {"m": {"x/y": "2"}},
            [PatchDetail(path="/m/x~1y", value_in_member="2", value_in_hub="1")],
        ),
        ({"a": True}, {"a": 1}, [PatchDetail(path="/a", value_in_member="1", value_in_hub="true")]),
    ],
)
def test_diff_details(hub: Any, member: Any, expected: list[PatchDetail]) -> None:
    assert diff_objects(hub, member) == expected


def test_clean_drops_irrelevant_fields() -> None:
    live = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "a",
            "namespace": "b",
            "uid": "u",
            "resourceVersion": "1",
            "generation": 1,
            "managedFields": [],
            "creationTimestamp": "t",
            "labels": {"app.kubernetes.io/name": "x", "keep": "y", "gitfleet.io/placement": "p"},
            "annotations": {"kubernetes-fleet.io/spec-hash": "h"},
        },
        "status": {"x": 1},
        "spec": {"template": {"metadata": {"creationTimestamp": None}}},
    }
    assert clean(live) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"labels": {"keep": "y"}},
        "spec": {"template": {"metadata": {}}},
    }


def test_diff_capped_at_100() -> None:
    hub = {str(i): i for i in range(150)}
    assert len(diff_objects(hub, {})) == 100


@pytest.mark.parametrize(
    ("option", "expect_drift"),
    [
        ("FullComparison", True),  # the member has a field the manifest lacks: drift reported
        ("PartialComparison", False),  # only manifest-managed fields are compared
    ],
)
def test_drift_full_vs_partial_for_unmanaged_field(option: str, expect_drift: bool) -> None:
    cluster = InMemoryCluster()
    strategy = {
        "type": "ServerSideApply",
        "comparisonOption": option,
        "whenToApply": "IfNotDrifted",
    }
    files = directory("c1", {"app": [ns("app"), cm("a")]}, strategy=strategy)
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    edit(cluster, "ConfigMap", "a", {"data": {"extra": "added"}})
    report = run_once(cluster, "c1", files, COMMIT, report, NOW, options())
    drifted = placement(report, "app").drifted_placements
    paths = [d.path for entry in drifted for d in entry.observed_drifts]
    assert ("/data/extra" in paths) == expect_drift


@pytest.mark.parametrize("option", ["FullComparison", "PartialComparison"])
def test_if_not_drifted_refuses_to_overwrite_managed_drift(option: str) -> None:
    cluster = InMemoryCluster()
    strategy = {
        "type": "ClientSideApply",
        "comparisonOption": option,
        "whenToApply": "IfNotDrifted",
    }
    files = directory("c1", {"app": [ns("app"), deployment("web")]}, strategy=strategy)
    first = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    edit(cluster, "Deployment", "web", {"spec": {"replicas": 7}})
    later = NOW + timedelta(minutes=5)
    second = run_once(cluster, "c1", files, COMMIT, first, later, options())
    third = run_once(cluster, "c1", files, COMMIT, second, later + timedelta(minutes=5), options())
    assert cluster.get("apps/v1", "Deployment", "app", "web")["spec"]["replicas"] == 7  # type: ignore[index]
    assert cond(third, "app", "Applied") == ("False", "NotAllWorkHaveBeenApplied")
    entry = placement(third, "app").drifted_placements[0]
    assert (
        PatchDetail(path="/spec/replicas", value_in_member="7", value_in_hub="2")
        in entry.observed_drifts
    )
    assert entry.first_drifted_observed_time == "2026-11-21T10:05:00Z"
    assert entry.observation_time == "2026-11-21T10:10:00Z"
    assert placement(third, "app").failed_placements[0].condition.reason == "FoundDrifts"


def test_always_overwrites_drift_when_applying() -> None:
    cluster = InMemoryCluster()
    files = directory("c1", {"app": [ns("app"), deployment("web")]})
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    edit(cluster, "Deployment", "web", {"spec": {"replicas": 7}})
    report = run_once(cluster, "c1", files, COMMIT, report, NOW, options())
    assert cluster.get("apps/v1", "Deployment", "app", "web")["spec"]["replicas"] == 2  # type: ignore[index]


@pytest.mark.parametrize("option", ["FullComparison", "PartialComparison"])
def test_report_diff_never_writes(option: str) -> None:
    cluster = InMemoryCluster()
    cluster.apply(ns("app"), field_manager="kubectl", force=False, dry_run=False)
    cluster.apply(cm("a", k="live"), field_manager="kubectl", force=False, dry_run=False)
    writes = cluster.writes
    strategy = {"type": "ReportDiff", "comparisonOption": option}
    files = directory("c1", {"app": [cm("a", k="hub"), cm("missing")]}, strategy=strategy)
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    assert cluster.writes == writes
    assert cond(report, "app", "DiffReported") == ("True", "AllWorkHaveDiffReported")
    assert cond(report, "app", "Applied") is None
    diffs = {d.name: d.observed_diffs for d in placement(report, "app").diffed_placements}
    assert diffs["missing"] == [PatchDetail(path="/", value_in_hub="(the whole object)")]
    assert PatchDetail(path="/data/k", value_in_member="live", value_in_hub="hub") in diffs["a"]


@pytest.mark.parametrize(
    ("take_over", "same", "reason", "labelled"),
    [
        ("Always", False, None, True),
        ("IfNoDiff", True, None, True),
        ("IfNoDiff", False, "FailedToTakeOver", False),
        ("Never", True, "NotTakenOver", False),
    ],
)
def test_takeover(take_over: str, same: bool, reason: str | None, labelled: bool) -> None:
    cluster = InMemoryCluster()
    cluster.apply(ns("app"), field_manager="kubectl", force=False, dry_run=False)
    cluster.apply(
        cm("a", k="v" if same else "other"), field_manager="kubectl", force=False, dry_run=False
    )
    files = directory("c1", {"app": [cm("a", k="v")]}, strategy={"whenToTakeOver": take_over})
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    failed = placement(report, "app").failed_placements
    assert [f.condition.reason for f in failed] == ([reason] if reason else [])
    live = cluster.get("v1", "ConfigMap", "app", "a")
    assert (
        live is not None
        and ("gitfleet.io/placement" in live["metadata"].get("labels", {})) == labelled
    )
    if reason == "FailedToTakeOver":
        assert placement(report, "app").diffed_placements[0].observed_diffs


SECRET_VALUE = "hunter2-very-secret"


@pytest.mark.parametrize("option", ["FullComparison", "PartialComparison"])
def test_secret_drift_reports_key_names_only(option: str) -> None:
    cluster = InMemoryCluster()
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "app"},
        "stringData": {"password": SECRET_VALUE},
        "data": {"token": "aHVudGVyMg=="},
    }
    strategy = {"comparisonOption": option, "whenToApply": "IfNotDrifted"}
    files = directory("c1", {"app": [ns("app"), secret]}, strategy=strategy)
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    cluster.patch(
        "v1",
        "Secret",
        "app",
        "s",
        {"stringData": {"password": "changed-" + SECRET_VALUE}, "data": {"token": "Y2hhbmdlZA=="}},
        field_manager="kubectl-edit",
    )
    report = run_once(cluster, "c1", files, COMMIT, report, NOW, options())
    text = dump_yaml(report.dump())
    assert SECRET_VALUE not in text and "aHVudGVyMg==" not in text and "Y2hhbmdlZA==" not in text
    drifts = placement(report, "app").drifted_placements[0].observed_drifts
    # the server turns stringData into data, so the drift shows under /data
    assert {d.path for d in drifts} >= {"/data/password", "/data/token"}
    assert all(
        d.value_in_member in (None, "(redacted for security reasons)")
        for d in drifts
        if d.path.startswith(("/data", "/stringData"))
    )


def test_secret_values_scrubbed_from_api_errors() -> None:
    cluster = InMemoryCluster()
    cluster.reject("Secret", "app", "s", f'stringData[password]: Invalid value: "{SECRET_VALUE}"')
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "app"},
        "stringData": {"password": SECRET_VALUE},
    }
    report = run_once(
        cluster, "c1", directory("c1", {"app": [ns("app"), secret]}), COMMIT2, None, NOW, options()
    )
    text = dump_yaml(report.dump())
    assert SECRET_VALUE not in text and "(redacted)" in text

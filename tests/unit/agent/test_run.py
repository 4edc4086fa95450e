"""run_once against InMemoryCluster: apply order, idempotence, prune, crash repair, faults."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.agent.client import Conflict
from gitfleet.agent.inventory import INVENTORY_NAME, INVENTORY_NAMESPACE, read_inventory
from gitfleet.agent.memory import InMemoryCluster
from gitfleet.agent.run import run_once
from gitfleet.api import AgentReport, PlacementReport, find_condition

from .conftest import (
    COMMIT,
    COMMIT2,
    CRD,
    NOW,
    SSA_CONFLICTS,
    WIDGET,
    Sleeps,
    cm,
    deployment,
    directory,
    ns,
    options,
)


def placement(report: AgentReport, key: str) -> PlacementReport:
    return next(p for p in report.placements if p.key == key)


def cond(report: AgentReport, key: str, type_: str) -> tuple[str, str] | None:
    found = find_condition(placement(report, key).conditions, type_)
    return (found.status, found.reason) if found else None


def names(cluster: InMemoryCluster, kind: str) -> list[str]:
    return [o["metadata"]["name"] for o in cluster.objects() if o["kind"] == kind]


class Recorder(InMemoryCluster):
    """Records the order of applied kinds."""

    def __init__(self) -> None:
        super().__init__()
        self.applied: list[str] = []

    def apply(self, obj: Any, *, field_manager: str, force: bool, dry_run: bool) -> Any:
        if not dry_run and field_manager == "gitfleet":
            self.applied.append(f"{obj['kind']}/{obj['metadata']['name']}")
        return super().apply(obj, field_manager=field_manager, force=force, dry_run=dry_run)


def test_quickstart_first_apply_namespaces_first_then_idempotent(
    quickstart: dict[str, dict[str, bytes]],
) -> None:
    cluster = Recorder()
    report = run_once(cluster, "eu-1", quickstart["eu-1"], COMMIT, None, NOW, options())
    payload = [a for a in cluster.applied if "gitfleet-" not in a]
    assert payload[0] == "Namespace/web"
    assert payload.index("ConfigMap/frontend-content") < payload.index("Deployment/frontend")
    assert sorted(payload) == sorted(
        [
            "Namespace/web",
            "ConfigMap/frontend-content",
            "Service/frontend",
            "Deployment/frontend",
            "ClusterRole/fleet-viewer",
        ]
    )
    assert cond(report, "web", "Applied") == ("True", "AllWorkHaveBeenApplied")
    assert cond(report, "web", "Available") == ("False", "NotAllWorkAreAvailable")
    assert cond(report, "fleet-viewer", "Available") == ("True", "AllWorkAreAvailable")
    assert report.output_commit == COMMIT
    live = cluster.get("apps/v1", "Deployment", "web", "frontend")
    assert live is not None and live["metadata"]["labels"]["gitfleet.io/placement"] == "web"
    assert live["metadata"]["labels"]["gitfleet.io/cluster"] == "eu-1"
    writes = cluster.writes
    again = run_once(cluster, "eu-1", quickstart["eu-1"], COMMIT, report, NOW, options())
    assert cluster.writes == writes
    assert again.placements == report.placements


def test_deployment_becomes_available_when_status_reports_it(
    quickstart: dict[str, dict[str, bytes]],
) -> None:
    cluster = InMemoryCluster()
    first = run_once(cluster, "eu-1", quickstart["eu-1"], COMMIT, None, NOW, options())
    cluster.set_status(
        "apps/v1",
        "Deployment",
        "web",
        "frontend",
        {"observedGeneration": 1, "availableReplicas": 2, "updatedReplicas": 2},
    )
    second = run_once(cluster, "eu-1", quickstart["eu-1"], COMMIT, first, NOW, options())
    assert cond(second, "web", "Available") == ("True", "AllWorkAreAvailable")
    assert placement(second, "web").failed_placements == []


def test_prune_after_object_leaves_index(cluster: InMemoryCluster) -> None:
    v1 = directory("c1", {"app": [ns("app"), cm("a"), cm("b")]})
    report = run_once(cluster, "c1", v1, COMMIT, None, NOW, options())
    v2 = directory("c1", {"app": [ns("app"), cm("a")]})
    run_once(cluster, "c1", v2, COMMIT2, report, NOW, options())
    assert names(cluster, "ConfigMap") == ["a", INVENTORY_NAME]
    assert read_inventory(cluster) == {
        "app": frozenset({("v1", "Namespace", "", "app"), ("v1", "ConfigMap", "app", "a")})
    }


@pytest.mark.parametrize(
    "setup",
    [
        "unrecorded",  # an object the agent never applied, same namespace
        "other-manager",  # recorded name, but someone else re-created it without our labels
    ],
)
def test_never_prune_unrecorded_objects(cluster: InMemoryCluster, setup: str) -> None:
    v1 = directory("c1", {"app": [ns("app"), cm("a"), cm("b")]})
    report = run_once(cluster, "c1", v1, COMMIT, None, NOW, options())
    if setup == "unrecorded":
        cluster.apply(cm("mine"), field_manager="kubectl", force=False, dry_run=False)
        keep = "mine"
    else:
        cluster.delete("v1", "ConfigMap", "app", "b")
        cluster.apply(cm("b"), field_manager="kubectl", force=False, dry_run=False)
        keep = "b"
    v2 = directory("c1", {"app": [ns("app"), cm("a")]})
    run_once(cluster, "c1", v2, COMMIT2, report, NOW, options())
    assert keep in names(cluster, "ConfigMap")


class Killed(BaseException):
    """A simulated kill of the agent process."""


@pytest.mark.parametrize("after", [0, 1, 2, 3, 4, 5])
def test_crash_mid_apply_is_repaired_and_nothing_orphaned(after: int) -> None:
    cluster = InMemoryCluster()
    v1 = directory("c1", {"app": [ns("app"), cm("a"), cm("b")]})
    report = run_once(cluster, "c1", v1, COMMIT, None, NOW, options())
    v2 = directory("c1", {"app": [ns("app"), cm("a", k="changed"), cm("c")], "more": [cm("d")]})
    cluster.crash_after_writes(after, Killed())
    with pytest.raises(Killed):
        run_once(cluster, "c1", v2, COMMIT2, report, NOW, options())
    repaired = run_once(cluster, "c1", v2, COMMIT2, report, NOW, options())
    assert names(cluster, "ConfigMap") == ["a", "c", "d", INVENTORY_NAME]
    assert cluster.get("v1", "ConfigMap", "app", "a")["data"] == {"k": "changed"}  # type: ignore[index]
    assert read_inventory(cluster) == {
        "app": frozenset(
            {
                ("v1", "Namespace", "", "app"),
                ("v1", "ConfigMap", "app", "a"),
                ("v1", "ConfigMap", "app", "c"),
            }
        ),
        "more": frozenset({("v1", "ConfigMap", "app", "d")}),
    }
    assert cond(repaired, "app", "Applied") == ("True", "AllWorkHaveBeenApplied")


@pytest.mark.parametrize(
    ("strategy", "replicas", "applied", "manager_text"),
    SSA_CONFLICTS,
)
def test_ssa_conflict_reported_unless_forced(
    cluster: InMemoryCluster,
    strategy: dict[str, Any],
    replicas: int,
    applied: tuple[str, str],
    manager_text: str,
) -> None:
    files = directory("c1", {"app": [ns("app"), deployment("web")]}, strategy=strategy)
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    cluster.patch(
        "apps/v1",
        "Deployment",
        "app",
        "web",
        {"spec": {"replicas": 5}},
        field_manager="kubectl-edit",
    )
    cluster.patch(
        "apps/v1",
        "Deployment",
        "app",
        "web",
        {"metadata": {"annotations": {"x": "y"}}},
        field_manager="kubectl-edit",
    )
    report = run_once(cluster, "c1", files, COMMIT2, report, NOW, options())
    assert cond(report, "app", "Applied") == applied
    assert cluster.get("apps/v1", "Deployment", "app", "web")["spec"]["replicas"] == replicas  # type: ignore[index]
    failed = placement(report, "app").failed_placements
    if manager_text:
        assert failed[0].kind == "Deployment" and manager_text in failed[0].condition.message
        assert failed[0].condition.reason == "ManifestApplyFailed"


def test_conflict_error_names_managers(cluster: InMemoryCluster) -> None:
    cluster.apply(ns("app"), field_manager="a", force=False, dry_run=False)
    cluster.apply(cm("x", k="1"), field_manager="a", force=False, dry_run=False)
    with pytest.raises(Conflict) as caught:
        cluster.apply(cm("x", k="2"), field_manager="b", force=False, dry_run=False)
    assert caught.value.managers == ("a",)


def test_invalid_object_reported_while_others_apply(cluster: InMemoryCluster) -> None:
    cluster.reject("ConfigMap", "app", "bad", 'data[k]: Invalid value: "nope"')
    files = directory("c1", {"app": [ns("app"), cm("bad"), cm("good")]})
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    failed = placement(report, "app").failed_placements
    assert [(f.name, f.condition.reason) for f in failed] == [("bad", "ManifestApplyFailed")]
    assert "Invalid value" in failed[0].condition.message
    assert "good" in names(cluster, "ConfigMap")


@pytest.mark.parametrize(
    ("failures", "status", "sleeps_expected", "ok"),
    [(2, 429, 2, True), (3, 503, 3, True), (10, 429, 8, False)],
)
def test_throttling_backs_off_then_succeeds(
    failures: int, status: int, sleeps_expected: int, ok: bool
) -> None:
    cluster = InMemoryCluster()
    files = directory("c1", {"app": [ns("app"), cm("a")]})
    sleeps = Sleeps()
    run_once(cluster, "c1", files, COMMIT, None, NOW, options(sleeps))
    sleeps.clear()
    cluster.fail_next(failures, status)
    report = run_once(cluster, "c1", files, COMMIT2, None, NOW, options(sleeps, attempts=5))
    assert len(sleeps) == sleeps_expected
    assert all(0 <= s <= 0.5 * 2 ** (i % 4) for i, s in enumerate(sleeps))
    passed = find_condition(report.conditions, "gitfleet.io/PassCompleted")
    assert passed is not None and (passed.status == "True") == ok
    if not ok:
        # properties failed first (5 tries), then the inventory read (5 tries): nothing applied
        assert passed.reason == "ClusterUnavailable" and report.output_commit == ""
        assert report.properties is None


def test_namespace_missing_is_reported(cluster: InMemoryCluster) -> None:
    files = directory("c1", {"app": [ns("app"), cm("a"), cm("orphan", namespace="elsewhere")]})
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    failed = placement(report, "app").failed_placements
    assert [(f.name, f.condition.reason) for f in failed] == [("orphan", "ManifestApplyFailed")]
    assert 'namespaces "elsewhere" not found' in failed[0].condition.message
    assert "a" in names(cluster, "ConfigMap")


@pytest.mark.parametrize(("polls", "ok"), [(0, True), (3, True), (50, False)])
def test_crd_before_custom_resource_waiting_until_established(polls: int, ok: bool) -> None:
    cluster = InMemoryCluster(crd_establish_polls=polls)
    files = directory("c1", {"app": [WIDGET, CRD, ns("app")]})
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    assert ("w" in names(cluster, "Widget")) == ok
    expected = ("True", "NotAllWorkAreAvailabilityTrackable") if ok else None
    assert cond(report, "app", "Available") == expected


def test_crd_without_schema_is_invalid_like_on_a_real_server(cluster: InMemoryCluster) -> None:
    bare = {**CRD, "spec": {**CRD["spec"], "versions": [{"name": "v1", "served": True}]}}  # type: ignore[dict-item]
    report = run_once(cluster, "c1", directory("c1", {"app": [bare]}), COMMIT, None, NOW, options())
    failed = placement(report, "app").failed_placements
    assert [(f.name, f.condition.reason) for f in failed] == [
        ("widgets.example.com", "ManifestApplyFailed")
    ]
    assert "openAPIV3Schema: Required value" in failed[0].condition.message


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda f: f.pop("clusters/c1/index.yaml"), "index.yaml is missing"),
        (lambda f: f.__setitem__("clusters/c1/index.yaml", b"kind: [unclosed"), "index.yaml"),
        (lambda f: f.__setitem__("clusters/c2/x/a.yaml", b"{}"), "outside clusters/c1/"),
        (lambda f: f.__setitem__("clusters/c1/../c2/index.yaml", b"{}"), "outside clusters/c1/"),
    ],
)
def test_invalid_directory_applies_and_prunes_nothing(mutate: Any, reason: str) -> None:
    cluster = InMemoryCluster()
    good = directory("c1", {"app": [ns("app"), cm("a")]})
    report = run_once(cluster, "c1", good, COMMIT, None, NOW, options())
    bad = dict(directory("c1", {"app": [ns("app")]}))
    mutate(bad)
    writes = cluster.writes
    after = run_once(cluster, "c1", bad, COMMIT2, report, NOW, options())
    assert cluster.writes == writes
    assert after.output_commit == COMMIT and after.placements == report.placements
    valid = find_condition(after.conditions, "gitfleet.io/DirectoryValid")
    assert valid is not None and valid.status == "False" and reason in valid.message


def test_tampered_object_file_fails_its_placement_alone(cluster: InMemoryCluster) -> None:
    files = directory("c1", {"app": [ns("app"), cm("a"), cm("b")], "other": [ns("other")]})
    files["clusters/c1/app/configmap_app_b.yaml"] = (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: app}\ndata: {k: tampered}\n"
    )
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    failed = placement(report, "app").failed_placements
    assert sorted((f.name, f.condition.reason) for f in failed) == [
        ("a", "DecodingErred"),
        ("app", "DecodingErred"),
        ("b", "DecodingErred"),
    ]
    assert "contentHash" in failed[0].condition.message
    assert not {"a", "b"} & set(names(cluster, "ConfigMap"))
    assert "other" in names(cluster, "Namespace")


def test_unreadable_object_file_fails_alone(cluster: InMemoryCluster) -> None:
    files = directory("c1", {"app": [ns("app"), cm("a"), cm("b")]})
    files["clusters/c1/app/configmap_app_b.yaml"] = b"kind: [unclosed"
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    failed = placement(report, "app").failed_placements
    assert [(f.name, f.condition.reason) for f in failed] == [("b", "DecodingErred")]
    assert "a" in names(cluster, "ConfigMap")


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda f: f.pop("clusters/c1/app/index.yaml"), "app/index.yaml is missing"),
        (
            lambda f: f.__setitem__(
                "clusters/c1/index.yaml",
                f["clusters/c1/index.yaml"].replace(b"v1alpha2", b"v1alpha1"),
            ),
            "older output shape",
        ),
        (
            lambda f: f.__setitem__(
                "clusters/c1/app/index.yaml",
                f["clusters/c1/app/index.yaml"].replace(b"v1alpha2", b"v9"),
            ),
            "does not know",
        ),
        (
            lambda f: f.__setitem__(
                "clusters/c1/app/index.yaml",
                f["clusters/c1/app/index.yaml"].replace(b"name: app", b"name: other"),
            ),
            'expected "app"',
        ),
    ],
)
def test_bad_placement_index_or_shape_applies_nothing(mutate: Any, reason: str) -> None:
    cluster = InMemoryCluster()
    files = directory("c1", {"app": [ns("app"), cm("a")]})
    mutate(files)
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    assert "a" not in names(cluster, "ConfigMap")
    valid = find_condition(report.conditions, "gitfleet.io/DirectoryValid")
    assert valid is not None and valid.status == "False" and reason in valid.message


def test_object_in_two_placements_is_taken_by_the_first(cluster: InMemoryCluster) -> None:
    files = directory("c1", {"one": [ns("app"), cm("a")], "two": [cm("a")]})
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    assert [f.condition.reason for f in placement(report, "two").failed_placements] == [
        "Duplicated"
    ]
    live = cluster.get("v1", "ConfigMap", "app", "a")
    assert live is not None and live["metadata"]["labels"]["gitfleet.io/placement"] == "one"


def test_inventory_lives_in_gitfleet_system(cluster: InMemoryCluster) -> None:
    run_once(cluster, "c1", directory("c1", {"app": [ns("app")]}), COMMIT, None, NOW, options())
    live = cluster.get("v1", "ConfigMap", INVENTORY_NAMESPACE, INVENTORY_NAME)
    assert live is not None and live["metadata"]["labels"] == {"gitfleet.io/cluster": "c1"}

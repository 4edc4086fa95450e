"""Patch-time errors: file, rule and op named; no half-patched object; no Secret values
(kubefleet.md §3.4.6, robustness.md §3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconciler.override import MAX_PATCH_OPS_PER_OBJECT
from tests.unit.override.override_helpers import (
    DEPLOY,
    EU,
    NS_SELECTOR,
    app_fleet,
    apply_on,
    cro,
    index_of,
    pick,
    replicas,
    ro,
    rule,
    selected,
)

HEAD = 'ResourceOverrideSnapshot "web-0" failed to apply on Deployment "web" in namespace "app": overrides/main.yaml: '


@pytest.mark.parametrize(
    ("ops", "where", "reason"),
    [
        (
            [{"op": "remove", "path": "/spec/missing"}],
            "rule 0, op 0 (remove /spec/missing)",
            "path /spec/missing does not exist",
        ),
        (
            [
                {"op": "replace", "path": "/spec/replicas", "value": 2},
                {"op": "replace", "path": "/spec/paused", "value": True},
            ],
            "rule 0, op 1 (replace /spec/paused)",
            "path /spec/paused does not exist",
        ),
        (
            [{"op": "add", "path": "/spec/a/b", "value": 1}],
            "rule 0, op 0 (add /spec/a/b)",
            "path /spec/a does not exist",
        ),
        (
            [{"op": "add", "path": "/spec/x~2y", "value": 1}],
            "rule 0, op 0 (add /spec/x~2y)",
            "invalid escape in path segment 'x~2y' (use ~0 for ~ and ~1 for /)",
        ),
        (
            [{"op": "add", "path": "/spec/x~", "value": 1}],
            "rule 0, op 0 (add /spec/x~)",
            "invalid escape in path segment 'x~' (use ~0 for ~ and ~1 for /)",
        ),
        (
            [{"op": "add", "path": "/spec/replicas/-", "value": 1}],
            "rule 0, op 0 (add /spec/replicas/-)",
            "/spec/replicas is a number, not an object or array",
        ),
        (
            [{"op": "remove", "path": "/spec/template/spec/containers/-"}],
            "rule 0, op 0 (remove /spec/template/spec/containers/-)",
            "/spec/template/spec/containers/- (the end of the array) can only be the last segment of an add",
        ),
        (
            [{"op": "replace", "path": "/spec/template/spec/containers/1", "value": {}}],
            "rule 0, op 0 (replace /spec/template/spec/containers/1)",
            "index 1 is out of range at /spec/template/spec/containers (array length 1)",
        ),
        (
            [{"op": "add", "path": "/spec/template/spec/containers/2", "value": {}}],
            "rule 0, op 0 (add /spec/template/spec/containers/2)",
            "index 2 is out of range at /spec/template/spec/containers (array length 1)",
        ),
        (
            [{"op": "replace", "path": "/spec/template/spec/containers/01", "value": {}}],
            "rule 0, op 0 (replace /spec/template/spec/containers/01)",
            "'01' is not a valid array index at /spec/template/spec/containers",
        ),
        (
            [
                {
                    "op": "add",
                    "path": "/metadata/labels/r",
                    "value": "${MEMBER-CLUSTER-LABEL-KEY-zone}",
                }
            ],
            "rule 0, op 0 (add /metadata/labels/r)",
            "label key zone not found on cluster eu-1",
        ),
        (
            [
                {
                    "op": "add",
                    "path": "/metadata/labels/r",
                    "value": "${MEMBER-CLUSTER-LABEL-KEY-zone",
                }
            ],
            "rule 0, op 0 (add /metadata/labels/r)",
            "a ${MEMBER-CLUSTER-LABEL-KEY-<key>} variable is missing the closing bracket `}`",
        ),
        (
            [{"op": "add", "path": "/metadata/labels/r", "value": "${MEMBER-CLUSTER-LABEL-KEY-}"}],
            "rule 0, op 0 (add /metadata/labels/r)",
            "empty label key in a ${MEMBER-CLUSTER-LABEL-KEY-} variable",
        ),
    ],
)
def test_patch_errors_name_file_rule_and_op(
    tmp_path: Path, ops: list[dict[str, Any]], where: str, reason: str
) -> None:
    applied = apply_on(tmp_path, [ro("web", "app", [DEPLOY], [rule(ops)])], "Deployment", "web")
    assert applied.obj is None and not applied.deleted
    assert applied.error == f"{HEAD}{where}: {reason}"
    assert applied.failed_override == "ResourceOverride/app/web"


def test_error_in_a_later_override_leaves_no_half_patched_object(tmp_path: Path) -> None:
    overrides = [
        cro("ns", [NS_SELECTOR], [replicas(5)]),
        ro("web", "app", [DEPLOY], [replicas(6), rule([{"op": "remove", "path": "/spec/gone"}])]),
    ]
    fleet = app_fleet(tmp_path, *overrides)
    resources = selected(fleet, "app")
    original = pick(resources, "Deployment", "web")
    before = original.raw
    placement = index_of(fleet).for_placement(fleet.placements["app"], resources)
    applied = placement.apply(original, EU)
    assert applied.obj is None
    assert applied.error is not None and "rule 1, op 0 (remove /spec/gone)" in applied.error
    assert original.obj["spec"]["replicas"] == 1 and original.raw == before


def test_cluster_scoped_error_has_no_namespace(tmp_path: Path) -> None:
    sel = {
        "group": "rbac.authorization.k8s.io",
        "version": "v1",
        "kind": "ClusterRole",
        "name": "reader",
    }
    applied = apply_on(
        tmp_path,
        [cro("cr", [sel], [rule([{"op": "remove", "path": "/aggregationRule"}])])],
        "ClusterRole",
        "reader",
    )
    assert applied.error == (
        'ClusterResourceOverrideSnapshot "cr-0" failed to apply on ClusterRole "reader": '
        "overrides/main.yaml: rule 0, op 0 (remove /aggregationRule): path /aggregationRule does not exist"
    )


def test_secret_errors_never_echo_values(tmp_path: Path) -> None:
    secret = {"group": "", "version": "v1", "kind": "Secret", "name": "creds"}
    ops = [
        {"op": "replace", "path": "/stringData/password", "value": "new-SECRET-value"},
        {"op": "add", "path": "/stringData/token/deep", "value": "other-SECRET"},
    ]
    applied = apply_on(tmp_path, [ro("creds", "app", [secret], [rule(ops)])], "Secret", "creds")
    assert (
        applied.error is not None and "rule 0, op 1 (add /stringData/token/deep)" in applied.error
    )
    assert "SECRET" not in applied.error and "hunter2" not in applied.error


def test_op_cap(tmp_path: Path) -> None:
    ops = [{"op": "add", "path": f"/metadata/labels/l{i}", "value": "v"} for i in range(3)]
    overrides = [
        cro("ns", [NS_SELECTOR], [rule(ops[:2])]),
        ro("web", "app", [DEPLOY], [rule(ops), rule(ops)]),
    ]
    fleet = app_fleet(tmp_path, *overrides)
    resources = selected(fleet, "app")
    web = pick(resources, "Deployment", "web")
    big = (
        index_of(fleet, max_ops=8).for_placement(fleet.placements["app"], resources).apply(web, EU)
    )
    assert big.error is None  # 2 + 3 + 3 = 8 ops, exactly the cap
    small = (
        index_of(fleet, max_ops=4).for_placement(fleet.placements["app"], resources).apply(web, EU)
    )
    assert small.obj is None and small.error is not None
    assert small.error.endswith(
        "rule 0, op 2 (add /metadata/labels/l2): more than 4 JSON patch operations on one object "
        "(MAX_PATCH_OPS_PER_OBJECT)"
    )
    assert MAX_PATCH_OPS_PER_OBJECT == 1000

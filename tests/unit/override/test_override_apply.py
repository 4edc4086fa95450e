"""Applying overrides to one object on one cluster (kubefleet.md §3.4, robustness.md §3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.override.override_helpers import (
    DEPLOY,
    EU,
    NS_SELECTOR,
    US,
    app_fleet,
    apply_on,
    cro,
    index_of,
    pick,
    region,
    replicas,
    ro,
    rule,
    selected,
    view,
)


@pytest.mark.parametrize(
    ("overrides", "cluster", "want"),
    [
        # Only a CRO on the namespace: it patches objects inside the namespace.
        ([cro("ns", [NS_SELECTOR], [replicas(2)])], EU, 2),
        # CRO first, then RO: the RO wins.
        (
            [cro("ns", [NS_SELECTOR], [replicas(2)]), ro("web", "app", [DEPLOY], [replicas(7)])],
            EU,
            7,
        ),
        # Within an override later rules win.
        ([ro("web", "app", [DEPLOY], [replicas(3), replicas(4)])], EU, 4),
        # Rules whose selector does not match are skipped.
        ([ro("web", "app", [DEPLOY], [replicas(3), replicas(4, region("us"))])], EU, 3),
        ([ro("web", "app", [DEPLOY], [replicas(3), replicas(4, region("us"))])], US, 4),
        # RO rule not matching this cluster: the CRO value stays.
        (
            [
                cro("ns", [NS_SELECTOR], [replicas(2)]),
                ro("web", "app", [DEPLOY], [replicas(7, region("us"))]),
            ],
            EU,
            2,
        ),
        # No matching rule at all: the object is unchanged.
        ([ro("web", "app", [DEPLOY], [replicas(9, region("ap"))])], EU, 1),
    ],
)
def test_precedence_and_rule_order(
    tmp_path: Path, overrides: list[dict[str, Any]], cluster: Any, want: int
) -> None:
    applied = apply_on(tmp_path, overrides, "Deployment", "web", cluster)
    assert applied.error is None
    assert applied.obj is not None and applied.obj["spec"]["replicas"] == want
    assert applied.overridden == (want != 1)


def test_ops_within_a_rule_apply_in_order(tmp_path: Path) -> None:
    ops = [
        {"op": "add", "path": "/metadata/labels/tier", "value": "a"},
        {"op": "replace", "path": "/metadata/labels/tier", "value": "b"},
        {"op": "remove", "path": "/metadata/labels/app"},
        {
            "op": "add",
            "path": "/spec/template/spec/containers/-",
            "value": {"name": "side", "image": "s:1"},
        },
        {"op": "add", "path": "/spec/template/spec/containers/0/args", "value": ["--x"]},
    ]
    applied = apply_on(tmp_path, [ro("web", "app", [DEPLOY], [rule(ops)])], "Deployment", "web")
    assert applied.obj is not None
    assert applied.obj["metadata"]["labels"] == {"tier": "b"}
    containers = applied.obj["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["web", "side"]
    assert containers[0]["args"] == ["--x"]


@pytest.mark.parametrize(
    ("overrides", "cluster", "deleted"),
    [
        ([ro("web", "app", [DEPLOY], [rule(delete=True)])], EU, True),
        # The Delete rule does not match this cluster: nothing applies.
        ([ro("web", "app", [DEPLOY], [rule(delete=True, selector=region("ap"))])], EU, None),
        # A Delete ends that override: the later rule would fail, but is never run.
        (
            [
                ro(
                    "web",
                    "app",
                    [DEPLOY],
                    [rule(delete=True), rule([{"op": "remove", "path": "/nope"}])],
                )
            ],
            EU,
            True,
        ),
        # CRO deletes, the RO after it cannot bring the object back (or fail on it).
        (
            [
                cro("ns", [NS_SELECTOR], [rule(delete=True)]),
                ro("web", "app", [DEPLOY], [rule([{"op": "remove", "path": "/nope"}])]),
            ],
            EU,
            True,
        ),
        # Patch first, then Delete in a later rule of the same override.
        (
            [ro("web", "app", [DEPLOY], [replicas(3), rule(delete=True, selector=region("eu"))])],
            EU,
            True,
        ),
        (
            [ro("web", "app", [DEPLOY], [replicas(3), rule(delete=True, selector=region("eu"))])],
            US,
            False,
        ),
    ],
)
def test_delete(
    tmp_path: Path, overrides: list[dict[str, Any]], cluster: Any, deleted: bool | None
) -> None:
    """deleted: True / False (patched, kept) / None (no rule matched)."""
    applied = apply_on(tmp_path, overrides, "Deployment", "web", cluster)
    assert applied.error is None
    assert applied.deleted is bool(deleted)
    assert (applied.obj is None) is bool(deleted)
    assert applied.overridden is (deleted is not None)


def label_value(value: Any) -> dict[str, Any]:
    return ro(
        "web",
        "app",
        [DEPLOY],
        [rule([{"op": "add", "path": "/metadata/labels/x", "value": value}])],
    )


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("${MEMBER-CLUSTER-NAME}", "eu-1"),
        ("${MEMBER-CLUSTER-NAME}-${MEMBER-CLUSTER-NAME}", "eu-1-eu-1"),
        ("${MEMBER-CLUSTER-LABEL-KEY-region}", "eu"),
        ("${MEMBER-CLUSTER-LABEL-KEY-region}/${MEMBER-CLUSTER-LABEL-KEY-tier}", "eu/gold"),
        ("pre-${MEMBER-CLUSTER-LABEL-KEY-tier}-post", "pre-gold-post"),
        # Other spellings stay verbatim.
        ("$CLUSTER_NAME", "$CLUSTER_NAME"),
        ("${Member-Cluster-Name}", "${Member-Cluster-Name}"),
        ("${CLUSTER-NAME}", "${CLUSTER-NAME}"),
        ("${member-cluster-label-key-region}", "${member-cluster-label-key-region}"),
        # Structured values: strings inside are replaced, other types kept.
        (
            {"nm": "${MEMBER-CLUSTER-NAME}", "k": [1, "${MEMBER-CLUSTER-LABEL-KEY-tier}", True]},
            {"nm": "eu-1", "k": [1, "gold", True]},
        ),
        # A value that looks like YAML is inserted as one string, never parsed.
        ("a: b\nc: [d]\n---\nkind: Secret", "a: b\nc: [d]\n---\nkind: Secret"),
        ("{name: ${MEMBER-CLUSTER-NAME}}", "{name: eu-1}"),
    ],
)
def test_variables_in_values(tmp_path: Path, value: Any, want: Any) -> None:
    applied = apply_on(tmp_path, [label_value(value)], "Deployment", "web")
    assert applied.error is None
    assert applied.obj is not None and applied.obj["metadata"]["labels"]["x"] == want


def test_variables_are_not_replaced_in_paths(tmp_path: Path) -> None:
    ops = [{"op": "add", "path": "/metadata/annotations", "value": {}}]
    ops.append({"op": "add", "path": "/metadata/annotations/${MEMBER-CLUSTER-NAME}", "value": "v"})
    applied = apply_on(tmp_path, [ro("web", "app", [DEPLOY], [rule(ops)])], "Deployment", "web")
    assert applied.obj is not None
    assert applied.obj["metadata"]["annotations"] == {"${MEMBER-CLUSTER-NAME}": "v"}


def test_memoised_results_are_shared(tmp_path: Path) -> None:
    overrides = [
        cro(
            "ns",
            [NS_SELECTOR],
            [
                rule(
                    [
                        {
                            "op": "add",
                            "path": "/metadata/annotations",
                            "value": {"r": "${MEMBER-CLUSTER-LABEL-KEY-region}"},
                        }
                    ]
                )
            ],
        ),
        ro(
            "web",
            "app",
            [DEPLOY],
            [
                replicas(3, region("eu")),
                rule(
                    [
                        {
                            "op": "add",
                            "path": "/metadata/labels/c",
                            "value": "${MEMBER-CLUSTER-NAME}",
                        }
                    ],
                    selector=region("us"),
                ),
            ],
        ),
    ]
    fleet = app_fleet(tmp_path, *overrides)
    resources = selected(fleet, "app")
    index = index_of(fleet)
    placement = index.for_placement(fleet.placements["app"], resources)
    web, cm, role = (
        pick(resources, k, n)
        for k, n in [("Deployment", "web"), ("ConfigMap", "settings"), ("ClusterRole", "reader")]
    )
    eu1, eu2 = view("eu-1", region="eu"), view("eu-2", region="eu", extra="x")
    us1, us2 = view("us-1", region="us"), view("us-2", region="us")
    # Same object, same matching rules, same variable values -> the same instance.
    assert placement.apply(web, eu1) is placement.apply(web, eu2)
    assert placement.apply(cm, eu1) is placement.apply(cm, eu2)
    # The cluster name is used on us clusters: distinct results.
    assert placement.apply(web, us1) is not placement.apply(web, us2)
    assert placement.apply(cm, us1) is placement.apply(cm, us2)
    assert placement.apply(cm, eu1) is not placement.apply(cm, us1)
    # Untouched objects keep their hub object.
    assert placement.apply(role, eu1).obj is role.obj
    # Another placement view of the same index shares the memo.
    again = index.for_placement(fleet.placements["app"], resources)
    assert again.apply(web, eu1) is placement.apply(web, eu1)

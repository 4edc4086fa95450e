"""Which overrides apply to a placement and a cluster (kubefleet.md §3.2, §3.3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gitfleet.api.selectors import ClusterSelector
from reconciler.override import wrapped_resource
from reconciler.override.compiled import CompiledRule
from tests.unit.override.override_helpers import (
    DEPLOY,
    NS_SELECTOR,
    app_fleet,
    cro,
    crp,
    dump,
    index_of,
    load,
    pick,
    region,
    ro,
    rp,
    rule,
    selected,
    view,
)

ROLE = {
    "group": "rbac.authorization.k8s.io",
    "version": "v1",
    "kind": "ClusterRole",
    "name": "reader",
}
PATCH = [{"op": "add", "path": "/metadata/annotations", "value": {"o": "1"}}]


@pytest.mark.parametrize(
    ("selector", "labels", "want"),
    [
        (None, {"region": "eu"}, False),  # nil selects no cluster
        ({}, {}, True),  # {} selects every cluster
        ({"clusterSelectorTerms": []}, {"region": "eu"}, True),
        ({"clusterSelectorTerms": [{}]}, {"region": "eu"}, False),  # nil labelSelector: none
        ({"clusterSelectorTerms": [{"labelSelector": {}}]}, {}, True),  # {} labelSelector: all
        (region("eu"), {"region": "eu"}, True),
        (region("eu"), {"region": "us"}, False),
        (region("eu"), {}, False),
        # Terms are OR-ed.
        (
            {
                "clusterSelectorTerms": [
                    region("us")["clusterSelectorTerms"][0],
                    {"labelSelector": {"matchLabels": {"tier": "gold"}}},
                ]
            },
            {"tier": "gold"},
            True,
        ),
        (
            {
                "clusterSelectorTerms": [
                    {"labelSelector": {"matchLabels": {"tier": "gold", "region": "eu"}}}
                ]
            },
            {"tier": "gold"},
            False,
        ),
    ],
)
def test_cluster_selector(
    selector: dict[str, Any] | None, labels: dict[str, str], want: bool
) -> None:
    model = None if selector is None else ClusterSelector.model_validate(selector)
    assert CompiledRule(0, model, False, ()).matches(labels) is want


def keys(
    tmp_path: Path,
    overrides: list[dict[str, Any]],
    cluster: Any,
    placement: str = "app",
    extra: str = "",
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    fleet = app_fleet(tmp_path, *overrides, extra=extra)
    target = fleet.placements[placement]
    resources = selected(fleet, placement)
    return index_of(fleet).for_placement(target, resources).applicable(cluster)


EU = view("eu-1", region="eu")
OTHER = dump(
    crp(
        "other",
        {
            "group": "rbac.authorization.k8s.io",
            "version": "v1",
            "kind": "ClusterRole",
            "name": "reader",
        },
    )
)


@pytest.mark.parametrize(
    ("overrides", "placement", "want"),
    [
        # Relevance: a CRO on a selected cluster-scoped object or on the namespace of a selected
        # namespaced object; an RO on a selected object of its namespace.
        (
            [cro("b-role", [ROLE], [rule(PATCH)]), cro("a-ns", [NS_SELECTOR], [rule(PATCH)])],
            "app",
            (("ClusterResourceOverride/a-ns", "ClusterResourceOverride/b-role"), ()),
        ),
        ([ro("web", "app", [DEPLOY], [rule(PATCH)])], "app", ((), ("ResourceOverride/app/web",))),
        # Not relevant: the placement does not select the target.
        (
            [cro("a-ns", [NS_SELECTOR], [rule(PATCH)]), ro("web", "app", [DEPLOY], [rule(PATCH)])],
            "other",
            ((), ()),
        ),
        ([cro("x", [{**ROLE, "name": "writer"}], [rule(PATCH)])], "app", ((), ())),
        ([cro("v", [{**ROLE, "version": "v1beta1"}], [rule(PATCH)])], "app", ((), ())),
        ([ro("web", "app", [{**DEPLOY, "name": "api"}], [rule(PATCH)])], "app", ((), ())),
        # Placement scoping: a CRO for another CRP is ignored; for this one it applies.
        (
            [cro("r", [ROLE], [rule(PATCH)], placement={"name": "app"})],
            "app",
            (("ClusterResourceOverride/r",), ()),
        ),
        ([cro("r", [ROLE], [rule(PATCH)], placement={"name": "app"})], "other", ((), ())),
        (
            [cro("r", [ROLE], [rule(PATCH)], placement={"name": "other"})],
            "other",
            (("ClusterResourceOverride/r",), ()),
        ),
        # RO with scope Cluster names a CRP; scope Namespaced an RP, never a CRP.
        (
            [
                ro(
                    "web",
                    "app",
                    [DEPLOY],
                    [rule(PATCH)],
                    placement={"name": "app", "scope": "Cluster"},
                )
            ],
            "app",
            ((), ("ResourceOverride/app/web",)),
        ),
        (
            [
                ro(
                    "web",
                    "app",
                    [DEPLOY],
                    [rule(PATCH)],
                    placement={"name": "app", "scope": "Namespaced"},
                )
            ],
            "app",
            ((), ()),
        ),
        ([ro("web", "app", [DEPLOY], [rule(PATCH)], placement={"name": "nope"})], "app", ((), ())),
        # Kept only when some rule matches the cluster.
        (
            [
                ro(
                    "web",
                    "app",
                    [DEPLOY],
                    [rule(PATCH, selector=region("us")), rule(PATCH, no_selector=True)],
                )
            ],
            "app",
            ((), ()),
        ),
        (
            [
                ro(
                    "web",
                    "app",
                    [DEPLOY],
                    [rule(PATCH, selector=region("us")), rule(delete=True, selector=region("eu"))],
                )
            ],
            "app",
            ((), ("ResourceOverride/app/web",)),
        ),
    ],
)
def test_applicable(
    tmp_path: Path, overrides: list[dict[str, Any]], placement: str, want: Any
) -> None:
    assert keys(tmp_path, overrides, EU, placement, extra=OTHER) == want


def test_applicable_sorting(tmp_path: Path) -> None:
    files = {
        "resources/r.yaml": dump(
            *[
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": ns},
                }
                for name, ns in [("c", "zeta"), ("d", "zeta"), ("c", "alpha")]
            ],
            *[
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                for ns in ("zeta", "alpha")
            ],
        ),
        "placements/p.yaml": dump(
            crp(
                "p",
                *[
                    {"group": "", "version": "v1", "kind": "Namespace", "name": ns}
                    for ns in ("zeta", "alpha")
                ],
            )
        ),
        "overrides/o.yaml": dump(
            *[
                ro(
                    name,
                    ns,
                    [{"group": "", "version": "v1", "kind": "ConfigMap", "name": cm}],
                    [rule(PATCH)],
                )
                for name, ns, cm in [("b", "zeta", "c"), ("a", "zeta", "d"), ("z", "alpha", "c")]
            ],
            *[
                cro(name, [{**NS_SELECTOR, "name": ns}], [rule(PATCH)])
                for name, ns in [("n2", "alpha"), ("n1", "zeta")]
            ],
        ),
    }
    fleet = load(tmp_path, files)
    po = index_of(fleet).for_placement(fleet.placements["p"], selected(fleet, "p"))
    assert po.applicable(EU) == (
        ("ClusterResourceOverride/n1", "ClusterResourceOverride/n2"),
        ("ResourceOverride/alpha/z", "ResourceOverride/zeta/a", "ResourceOverride/zeta/b"),
    )


RP_FILES = {
    "resources/r.yaml": dump(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}},
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "app"},
            "data": {"k": "v"},
        },
    ),
    "placements/p.yaml": dump(
        rp("rp", "app", {"group": "", "version": "v1", "kind": "ConfigMap", "name": "c"})
    ),
}
CM = {"group": "", "version": "v1", "kind": "ConfigMap", "name": "c"}


@pytest.mark.parametrize(
    ("override", "applies"),
    [
        (ro("o", "app", [CM], [rule(PATCH)]), True),
        (
            ro("o", "app", [CM], [rule(PATCH)], placement={"name": "rp", "scope": "Namespaced"}),
            True,
        ),
        (ro("o", "app", [CM], [rule(PATCH)], placement={"name": "rp", "scope": "Cluster"}), False),
        (
            ro("o", "app", [CM], [rule(PATCH)], placement={"name": "other", "scope": "Namespaced"}),
            False,
        ),
        # A CRO on the namespace also covers objects an RP places from it.
        (cro("o", [NS_SELECTOR], [rule(PATCH)]), True),
        (cro("o", [NS_SELECTOR], [rule(PATCH)], placement={"name": "rp"}), False),
    ],
)
def test_resource_placement_scoping(
    tmp_path: Path, override: dict[str, Any], applies: bool
) -> None:
    fleet = load(tmp_path, {**RP_FILES, "overrides/o.yaml": dump(override)})
    resources = selected(fleet, "rp", "app")
    po = index_of(fleet).for_placement(fleet.resource_placements[("app", "rp")], resources)
    applied = po.apply(resources[0], EU)
    assert applied.overridden is applies
    assert applied.obj is not None and ("annotations" in applied.obj["metadata"]) is applies
    assert any(po.applicable(EU)) is applies


ENVELOPE = {
    "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
    "kind": "ResourceEnvelope",
    "metadata": {"name": "env", "namespace": "app"},
    "data": {
        "cm.yaml": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "inner", "namespace": "app"},
            "data": {"a": "1"},
        }
    },
}


def test_envelope_and_wrapped_objects(tmp_path: Path) -> None:
    env_sel = {
        "group": "placement.kubernetes-fleet.io",
        "version": "v1beta1",
        "kind": "ResourceEnvelope",
        "name": "env",
    }
    inner_sel = {"group": "", "version": "v1", "kind": "ConfigMap", "name": "inner"}
    files = {
        "resources/r.yaml": dump(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}}, ENVELOPE
        ),
        "placements/p.yaml": dump(crp("p", NS_SELECTOR)),
        "overrides/o.yaml": dump(
            ro(
                "env",
                "app",
                [env_sel],
                [rule([{"op": "replace", "path": "/data/cm.yaml/data/a", "value": "2"}])],
            ),
            ro(
                "inner",
                "app",
                [inner_sel],
                [rule([{"op": "add", "path": "/data/b", "value": "${MEMBER-CLUSTER-NAME}"}])],
            ),
        ),
    }
    fleet = load(tmp_path, files)
    resources = selected(fleet, "p")
    po = index_of(fleet).for_placement(fleet.placements["p"], resources)
    # The wrapped object counts as a candidate: both ROs are applicable.
    assert po.applicable(EU) == ((), ("ResourceOverride/app/env", "ResourceOverride/app/inner"))
    envelope = pick(resources, "ResourceEnvelope", "env")
    patched = po.apply(envelope, EU)
    assert patched.obj is not None
    wrapped = patched.obj["data"]["cm.yaml"]
    inner = po.apply(wrapped_resource(envelope, wrapped), EU)
    assert inner.obj is not None and inner.obj["data"] == {"a": "2", "b": "eu-1"}
    assert envelope.obj["data"]["cm.yaml"]["data"] == {"a": "1"}


def test_serving_table_and_selection_memo_equal_the_long_way(tmp_path: Path) -> None:
    """`for_placement` picks the serving overrides from a per-placement table and makes its
    result once per selection object: the same overrides `CompiledOverride.serves` keeps, and
    a new selection (even of a placement seen before) is looked at again."""
    fleet = app_fleet(
        tmp_path,
        cro("any", [NS_SELECTOR], [rule(PATCH)]),
        cro("mine", [ROLE], [rule(PATCH)], placement={"name": "app"}),
        cro("theirs", [{**NS_SELECTOR, "name": "other"}], [rule(PATCH)], placement={"name": "x"}),
        ro("r", "app", [{**CM, "name": "settings"}], [rule(PATCH)]),
    )
    index = index_of(fleet)
    placement = fleet.placements["app"]
    resources = selected(fleet, "app")
    po = index.for_placement(placement, resources)
    serving = [o for o in index.overrides if o.serves("ClusterResourcePlacement", "", "app")]
    assert sorted(o.key for o in index._serving(("ClusterResourcePlacement", "", "app"))) == sorted(
        o.key for o in serving
    )
    assert [o.key for o in po.overrides] == [
        "ClusterResourceOverride/any",
        "ClusterResourceOverride/mine",
        "ResourceOverride/app/r",
    ]
    assert index.for_placement(placement, resources) is po
    fewer = tuple(r for r in resources if r.kind != "ClusterRole")
    again = index.for_placement(placement, fewer)
    assert again is not po
    assert [o.key for o in again.overrides] == [
        "ClusterResourceOverride/any",
        "ResourceOverride/app/r",
    ]

"""Every tenant rule, as a table through the pure pass: a fleet with a `payments` tenant, one
change per row, the error it must give (file, field, rule) and what must still render.
Plus the Tenant kind's own validation and the path globs."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from gitfleet.api.registry import parse_object
from gitfleet.api.tenant import Tenant, path_glob_regex
from gitfleet.load.model import SourceDoc
from gitfleet.load.snapshot import build_snapshot
from reconciler.pass_ import PassResult, reconcile
from reconciler.state import State, read_state

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)

TENANT = """apiVersion: gitfleet.io/v1alpha1
kind: Tenant
metadata: {name: payments}
spec:
  paths: ["tenants/payments/**", "resources/payments/**"]
  clusterSelector: {matchLabels: {team: payments}}
  namespaces: [payments, "payments-*"]
"""
CLUSTER = """apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {{name: {name}, labels: {{team: {team}}}}}
"""
CRP = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {{name: {name}}}
spec:
  resourceSelectors: [{{group: "", version: v1, kind: Namespace, name: {ns}}}]
  policy:
    placementType: PickAll
{affinity}"""
AFFINITY = """    affinity:
      clusterAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          clusterSelectorTerms: [{labelSelector: {matchLabels: {team: payments}}}]
"""
NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n"
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {ns}}}\n"
CLUSTER_ROLE = (
    "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: pay-reader}\n"
)
CRO = """apiVersion: placement.kubernetes-fleet.io/v1alpha1
kind: ClusterResourceOverride
metadata: {{name: {name}}}
spec:
{placement}  clusterResourceSelectors: [{{group: "", version: v1, kind: Namespace, name: {ns}}}]
  policy:
    overrideRules:
      - overrideType: JSONPatch
        jsonPatchOverrides: [{{op: add, path: /metadata/labels/x, value: "y"}}]
"""
RP = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourcePlacement
metadata: {{name: pay-cm, namespace: {ns}}}
spec:
  resourceSelectors: [{{group: "", version: v1, kind: ConfigMap, name: cm}}]
  policy:
    placementType: PickAll
    affinity:
      clusterAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          clusterSelectorTerms: [{{labelSelector: {{matchLabels: {{team: payments}}}}}}]
"""
EVICTION = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementEviction
metadata: {{name: evict-one}}
spec: {{placementName: {placement}, clusterName: c-nowhere}}
"""
BUDGET = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementDisruptionBudget
metadata: {{name: {placement}}}
spec: {{maxUnavailable: 1}}
"""
APPROVAL = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterApprovalRequest
metadata: {name: run-1-stage-a}
spec: {parentStageRollout: run-1, targetStage: stage-a}
status:
  conditions:
    - {type: Approved, status: "True", reason: ok, message: ok, observedGeneration: 1, lastTransitionTime: "2026-11-21T10:00:00Z"}
"""


def base() -> dict[str, str]:
    return {
        "tenants/payments.yaml": TENANT,
        "clusters/c-pay.yaml": CLUSTER.format(name="c-pay", team="payments"),
        "clusters/c-shop.yaml": CLUSTER.format(name="c-shop", team="shop"),
        "resources/payments/ns.yaml": NAMESPACE.format(name="payments"),
        "resources/payments/cm.yaml": CONFIGMAP.format(name="cm", ns="payments"),
        "resources/shop/ns.yaml": NAMESPACE.format(name="shop"),
        "tenants/payments/pay.yaml": CRP.format(name="pay", ns="payments", affinity=AFFINITY),
        "placements/shop.yaml": CRP.format(name="shop", ns="shop", affinity=""),
    }


def run(files: Mapping[str, str | None]) -> PassResult:
    docs = []
    for path, text in sorted(files.items()):
        if text is None:
            continue
        for i, body in enumerate(yaml.safe_load_all(text)):
            docs.append(SourceDoc(path, i, 1, body, text=text))
    return reconcile(build_snapshot(docs, []), State(), None, NOW)


def tenant_with(**spec: Any) -> str:
    doc = yaml.safe_load(TENANT)
    doc["spec"].update(spec)
    return yaml.safe_dump(doc)


def own_cro(placement: str | None, name: str = "pay-label") -> str:
    ref = f"  placement: {{name: {placement}}}\n" if placement else ""
    return CRO.format(name=name, placement=ref, ns="payments")


OK: list[tuple[str, dict[str, str | None]]] = [
    ("the tenant's own placement, objects and clusters", {}),
    (
        "a cluster-scoped kind the tenant allows by name",
        {
            "tenants/payments.yaml": tenant_with(
                kinds={"allow": ["*", "rbac.authorization.k8s.io/ClusterRole"]}
            ),
            "resources/payments/cr.yaml": CLUSTER_ROLE,
        },
    ),
    ("an override of its own placement", {"tenants/payments/cro.yaml": own_cro("pay")}),
    (
        "an eviction of its own placement",
        {"tenants/payments/e.yaml": EVICTION.format(placement="pay")},
    ),
    (
        "an override of a placement spec.overrideTargets allows",
        {
            "tenants/payments.yaml": tenant_with(overrideTargets=["sho*"]),
            "tenants/payments/cro.yaml": own_cro("shop"),
        },
    ),
    (
        "files outside every tenant's paths are not restricted",
        {
            "resources/shop/cr.yaml": CLUSTER_ROLE.replace("pay-reader", "shop-reader"),
            "placements/roles.yaml": CRP.format(name="roles", ns="shop", affinity="").replace(
                'group: "", version: v1, kind: Namespace, name: shop',
                "group: rbac.authorization.k8s.io, version: v1, kind: ClusterRole, name: shop-reader",
            ),
        },
    ),
    ("a namespace matching a glob", {"tenants/payments/rp.yaml": RP.format(ns="payments-eu")}),
]


@pytest.mark.parametrize("files", [f for _, f in OK], ids=[n for n, _ in OK])
def test_allowed(files: dict[str, str | None]) -> None:
    result = run({**base(), **files})
    assert result.errors == ()
    assert "clusters/c-pay/pay/namespace_payments.yaml" in result.files
    assert not [p for p in result.files if p.startswith("clusters/c-shop/pay/")]


REFUSED: list[tuple[str, dict[str, str | None], str, str, str]] = [
    # (name, change, file, field, message part)
    (
        "a placement reaching a cluster outside the tenant's selector",
        {"tenants/payments/pay.yaml": CRP.format(name="pay", ns="payments", affinity="")},
        "tenants/payments/pay.yaml",
        "spec.policy",
        "would reach cluster c-shop, outside tenant payments's spec.clusterSelector",
    ),
    (
        "a payload object in a foreign namespace",
        {"resources/payments/cm.yaml": CONFIGMAP.format(name="cm", ns="shop")},
        "resources/payments/cm.yaml",
        "metadata.namespace",
        "ConfigMap shop/cm: tenant payments may not place into namespace 'shop'",
    ),
    (
        "a cluster-scoped kind (denied by default)",
        {"resources/payments/cr.yaml": CLUSTER_ROLE},
        "resources/payments/cr.yaml",
        "kind",
        "may not place the cluster-scoped kind rbac.authorization.k8s.io/ClusterRole",
    ),
    (
        "a wildcard allow does not cover cluster-scoped kinds",
        {
            "tenants/payments.yaml": tenant_with(kinds={"allow": ["*"]}),
            "resources/payments/cr.yaml": CLUSTER_ROLE,
        },
        "resources/payments/cr.yaml",
        "kind",
        "cluster-scoped kinds are denied unless spec.kinds.allow names them",
    ),
    (
        "a Namespace the tenant does not own",
        {"resources/payments/other.yaml": NAMESPACE.format(name="billing")},
        "resources/payments/other.yaml",
        "kind",
        "may not place the cluster-scoped kind Namespace",
    ),
    (
        "a denied kind (deny wins over allow)",
        {"tenants/payments.yaml": tenant_with(kinds={"allow": ["*"], "deny": ["/ConfigMap"]})},
        "resources/payments/cm.yaml",
        "kind",
        "tenant payments denies kind ConfigMap (spec.kinds.deny: /ConfigMap)",
    ),
    (
        "a kind missing from the allow list",
        {"tenants/payments.yaml": tenant_with(kinds={"allow": ["apps/Deployment"]})},
        "resources/payments/cm.yaml",
        "kind",
        "tenant payments does not allow kind ConfigMap (spec.kinds.allow)",
    ),
    (
        "a placement selecting another team's objects",
        {"tenants/payments/pay.yaml": CRP.format(name="pay", ns="shop", affinity=AFFINITY)},
        "tenants/payments/pay.yaml",
        "spec.resourceSelectors",
        "selects Namespace shop: tenant payments may not place the cluster-scoped kind Namespace",
    ),
    (
        "a ResourcePlacement in a foreign namespace",
        {"tenants/payments/rp.yaml": RP.format(ns="shop")},
        "tenants/payments/rp.yaml",
        "metadata.namespace",
        "tenant payments may not place into namespace 'shop'",
    ),
    (
        "an override without spec.placement",
        {"tenants/payments/cro.yaml": own_cro(None)},
        "tenants/payments/cro.yaml",
        "spec.placement",
        "an override must name one of the tenant's placements",
    ),
    (
        "an override of another team's placement",
        {"tenants/payments/cro.yaml": own_cro("shop")},
        "tenants/payments/cro.yaml",
        "spec.placement",
        "tenant payments may not patch placement shop",
    ),
    (
        "an override target outside spec.overrideTargets",
        {
            "tenants/payments.yaml": tenant_with(overrideTargets=["web-*"]),
            "tenants/payments/cro.yaml": own_cro("shop"),
        },
        "tenants/payments/cro.yaml",
        "spec.placement",
        "may not patch placement shop (spec.overrideTargets: ['web-*'])",
    ),
    (
        "an eviction of another team's placement",
        {"tenants/payments/evict.yaml": EVICTION.format(placement="shop")},
        "tenants/payments/evict.yaml",
        "spec",
        "tenant payments may not act on placement shop: it is not the tenant's",
    ),
    (
        "a disruption budget of another team's placement",
        {"tenants/payments/budget.yaml": BUDGET.format(placement="shop")},
        "tenants/payments/budget.yaml",
        "spec",
        "tenant payments may not act on placement shop",
    ),
    (
        "an approval request (the platform's)",
        {"tenants/payments/approve.yaml": APPROVAL},
        "tenants/payments/approve.yaml",
        "kind",
        "tenant payments's paths may not declare a ClusterApprovalRequest",
    ),
    (
        "a MemberCluster declared under a tenant's paths",
        {"tenants/payments/c2.yaml": CLUSTER.format(name="c-pay2", team="payments")},
        "tenants/payments/c2.yaml",
        "kind",
        "tenant payments's paths may not declare clusters (MemberCluster c-pay2)",
    ),
    (
        "a Tenant declared under its own paths (still applies)",
        {"tenants/payments.yaml": None, "tenants/payments/tenant.yaml": TENANT},
        "tenants/payments/tenant.yaml",
        "kind",
        "Tenant payments is declared under tenant payments's paths",
    ),
]


@pytest.mark.parametrize(
    ("files", "file", "field", "message"),
    [r[1:] for r in REFUSED],
    ids=[r[0] for r in REFUSED],
)
def test_refused(files: dict[str, str | None], file: str, field: str, message: str) -> None:
    result = run({**base(), **files})
    found = [e for e in result.errors if e.file == file and message in e.message]
    assert found, [str(e) for e in result.errors]
    assert found[0].field == field and found[0].line is not None
    # The rest of the fleet goes on: the platform's `shop` placement renders.
    assert "clusters/c-shop/shop/namespace_shop.yaml" in result.files


def test_a_file_owned_by_two_tenants_is_an_error_and_its_objects_are_left_out() -> None:
    second = tenant_with(paths=["tenants/**"]).replace("name: payments", "name: everyone")
    result = run({**base(), "tenants/everyone.yaml": second})
    messages = [e for e in result.errors if e.file == "tenants/payments/pay.yaml"]
    assert messages and "owned by more than one tenant (everyone, payments)" in messages[0].message
    assert not [p for p in result.files if p.startswith("clusters/c-pay/pay/")]
    assert "clusters/c-shop/shop/namespace_shop.yaml" in result.files


def test_without_tenants_nothing_is_restricted() -> None:
    files = {**base(), "tenants/payments.yaml": None}
    files["tenants/payments/pay.yaml"] = CRP.format(name="pay", ns="payments", affinity="")
    result = run(files)
    assert result.errors == ()
    assert "clusters/c-shop/pay/namespace_payments.yaml" in result.files


def test_a_refused_placement_keeps_its_previous_output() -> None:
    first = run(base())
    prior, _ = read_state(first.files)
    changed = {
        **base(),
        "tenants/payments/pay.yaml": CRP.format(name="pay", ns="payments", affinity=""),
    }
    docs = []
    for path, text in sorted(changed.items()):
        docs += [
            SourceDoc(path, i, 1, b, text=text) for i, b in enumerate(yaml.safe_load_all(text))
        ]
    again = reconcile(build_snapshot(docs, []), State(prior.placements, first.files), None, NOW)
    path = "clusters/c-pay/pay/namespace_payments.yaml"
    assert again.files[path] == first.files[path]
    assert not [p for p in again.files if p.startswith("clusters/c-shop/pay/")]
    assert any("outside tenant payments" in e.message for e in again.errors)


INVALID = [
    ({"paths": ["../x/**"]}, "spec.paths[0]", "without '.' or '..' segments"),
    ({"paths": ["/abs/**"]}, "spec.paths[0]", "relative to the repository root"),
    ({"paths": ["a b"]}, "spec.paths[0]", "must be a repository path glob"),
    ({"paths": []}, "spec.paths", ""),
    ({"namespaces": ["Pay_ments"]}, "spec.namespaces[0]", "namespace name or a glob"),
    ({"kinds": {"allow": ["apps/"]}}, "spec.kinds.allow[0]", "Kind, group/Kind or *"),
    ({"kinds": {"deny": ["no such"]}}, "spec.kinds.deny[0]", "Kind, group/Kind or *"),
    (
        {"clusterSelector": {"matchLabels": {"bad key!": "x"}}},
        "spec.clusterSelector.matchLabels",
        "",
    ),
    ({"clusterSelector": None}, "spec.clusterSelector", ""),
]


@pytest.mark.parametrize(("spec", "field", "message"), INVALID)
def test_tenant_validation(spec: dict[str, Any], field: str, message: str) -> None:
    doc = yaml.safe_load(TENANT)
    doc["spec"].update(spec)
    if spec.get("clusterSelector", 0) is None:
        del doc["spec"]["clusterSelector"]
    model, issues = parse_object(doc)
    assert model is None
    assert any(i.field.startswith(field) and message in i.message for i in issues), issues


GLOBS = [
    ("tenants/payments/**", "tenants/payments/a.yaml", True),
    ("tenants/payments/**", "tenants/payments/x/y.yaml", True),
    ("tenants/payments/**", "tenants/payments-old/a.yaml", False),
    ("tenants/payments/", "tenants/payments/x/y.yaml", True),
    ("placements/pay-*.yaml", "placements/pay-web.yaml", True),
    ("placements/pay-*.yaml", "placements/sub/pay-web.yaml", False),
    ("**/pay.yaml", "pay.yaml", True),
    ("**/pay.yaml", "a/b/pay.yaml", True),
    ("resources/pay?/cm.yaml", "resources/pay1/cm.yaml", True),
    ("resources/pay[!0-9]/cm.yaml", "resources/pay1/cm.yaml", False),
    ("resources/pay.yaml", "resources/payXyaml", False),
]


@pytest.mark.parametrize(("pattern", "path", "owned"), GLOBS)
def test_path_globs(pattern: str, path: str, owned: bool) -> None:
    assert bool(path_glob_regex(pattern).fullmatch(path)) is owned


def test_kind_rules_table() -> None:
    doc = yaml.safe_load(TENANT)
    doc["spec"]["kinds"] = {"allow": ["*", "Namespace"], "deny": ["apps/DaemonSet"]}
    tenant = Tenant.model_validate(doc)
    assert tenant.kind_problem("apps", "Deployment", False, "x") is None
    assert tenant.kind_problem("apps", "DaemonSet", False, "x") is not None
    assert tenant.kind_problem("", "Namespace", True, "anything") is None  # explicitly allowed
    assert tenant.kind_problem("", "Node", True, "n") is not None


def test_validate_warns_about_a_tenant_path_that_owns_no_file() -> None:
    tenant = tenant_with(paths=["tenants/payments/**", "tenant/payments/**"])
    files = {**base(), "tenants/payments.yaml": tenant}
    docs = []
    for path, text in sorted(files.items()):
        docs += [
            SourceDoc(path, i, 1, b, text=text) for i, b in enumerate(yaml.safe_load_all(text))
        ]
    warnings = build_snapshot(docs, [], lint=True).warnings
    found = [w for w in warnings if w.file == "tenants/payments.yaml"]
    assert [w.field for w in found] == ["spec.paths[1]"]
    assert '"tenant/payments/**" owns no file' in found[0].message
    lines = files["tenants/payments.yaml"].splitlines()
    assert found[0].line is not None and "tenant/payments" in lines[found[0].line - 1]

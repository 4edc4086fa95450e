"""A Tenant that fails to load fails closed: a table through the loader and the pure pass.

Two tenants (`payments`, `shop`) and a platform placement render once; then one change per row.
A row names the placements that must keep their previous output (held, with the rule in their
errors and status) and those that must go on (they pick up a change made in the same revision).
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from gitfleet.api.errors import FleetError
from gitfleet.api.limits import DEFAULT_LIMITS
from gitfleet.load.model import FleetSnapshot, SourceDoc
from gitfleet.load.snapshot import build_snapshot
from gitfleet.load.unloaded import TENANT_NOT_LOADED, tenant_lines
from gitfleet.load.yamlio import parse_documents
from reconciler.pass_ import PassResult, reconcile
from reconciler.state import State, read_state
from tests.unit.govern.test_tenancy import BUDGET, CLUSTER, CRO, EVICTION, NAMESPACE, NOW, TENANT

SHOP_TENANT = TENANT.replace("payments", "shop")
CRP = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {{name: {name}}}
spec:
  resourceSelectors:
{selectors}  policy:
    placementType: PickAll
    affinity:
      clusterAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          clusterSelectorTerms: [{{labelSelector: {{matchLabels: {{team: {team}}}}}}}]
"""
NS_SELECTOR = '    - {{group: "", version: v1, kind: Namespace, name: {ns}}}\n'
PLATFORM_CRP = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {{name: platform}}
spec:
  resourceSelectors:
{selectors}  policy: {{placementType: PickAll}}
"""
BROKEN = "kind: Tenant\nspec: [\n"
"""A Tenant file that does not parse (its `kind` on line 1)."""
HOLD = "placements not owned by a loaded Tenant keep their previous output until it loads"


def crp(name: str, team: str, *namespaces: str) -> str:
    return CRP.format(
        name=name, team=team, selectors="".join(NS_SELECTOR.format(ns=n) for n in namespaces)
    )


def platform(*namespaces: str) -> str:
    return PLATFORM_CRP.format(selectors="".join(NS_SELECTOR.format(ns=n) for n in namespaces))


def base() -> dict[str, str | None]:
    return {
        "tenants/payments.yaml": TENANT,
        "tenants/shop.yaml": SHOP_TENANT,
        "clusters/c-pay.yaml": CLUSTER.format(name="c-pay", team="payments"),
        "clusters/c-shop.yaml": CLUSTER.format(name="c-shop", team="shop"),
        "resources/payments/ns.yaml": NAMESPACE.format(name="payments"),
        "resources/payments/ns2.yaml": NAMESPACE.format(name="payments-eu"),
        "resources/shop/ns.yaml": NAMESPACE.format(name="shop"),
        "resources/shop/ns2.yaml": NAMESPACE.format(name="shop-eu"),
        "resources/platform/ns.yaml": NAMESPACE.format(name="monitoring"),
        "resources/platform/ns2.yaml": NAMESPACE.format(name="logging"),
        "tenants/payments/pay.yaml": crp("pay", "payments", "payments"),
        "tenants/shop/shop.yaml": crp("shop", "shop", "shop"),
        "placements/platform.yaml": platform("monitoring"),
    }


# Every row also widens each placement by one namespace: a placement that goes on shows it.
WIDEN: dict[str, str | None] = {
    "tenants/payments/pay.yaml": crp("pay", "payments", "payments", "payments-eu"),
    "tenants/shop/shop.yaml": crp("shop", "shop", "shop", "shop-eu"),
    "placements/platform.yaml": platform("monitoring", "logging"),
}
GONE_ON = {
    "pay": "clusters/c-pay/pay/namespace_payments-eu.yaml",
    "shop": "clusters/c-shop/shop/namespace_shop-eu.yaml",
    "platform": "clusters/c-pay/platform/namespace_logging.yaml",
}


def snapshot(files: Mapping[str, str | None], extra: tuple[FleetError, ...] = ()) -> FleetSnapshot:
    docs: list[SourceDoc] = []
    errors = list(extra)
    for path, text in sorted(files.items()):
        if text is not None:
            found, problems = parse_documents(path, text, DEFAULT_LIMITS)
            docs += found
            errors += problems
    return build_snapshot(docs, errors)


def first_pass() -> PassResult:
    result = reconcile(snapshot(base()), State(), None, NOW)
    assert result.errors == ()
    return result


def second_pass(
    first: PassResult, change: Mapping[str, str | None], extra: tuple[FleetError, ...] = ()
) -> PassResult:
    prior, problems = read_state(first.files)
    assert not problems
    fleet = snapshot({**base(), **WIDEN, **change}, extra)
    return reconcile(fleet, State(prior.placements, first.files), None, NOW)


RUN = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata: {name: run-1}
spec: {placementName: shop, stagedRolloutStrategyName: strat, state: Run}
"""
APPROVAL = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterApprovalRequest
metadata: {name: run-1-stage-a}
spec: {parentStageRollout: run-1, targetStage: stage-a}
"""
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
"""
DISTRIBUTION = """apiVersion: gitfleet.io/v1alpha1
kind: ReplicaDistribution
metadata: {name: web, namespace: shop}
spec:
  workload: {apiVersion: apps/v1, kind: Deployment, name: web}
  replicas: 4
"""
SHOP_CRO = CRO.format(name="patch-shop", placement="  placement: {name: shop}\n", ns="shop")
LOOSE_CRO = CRO.format(name="patch-any", placement="", ns="shop")

ROWS: list[tuple[str, dict[str, str | None], tuple[FleetError, ...], set[str], str]] = [
    # (name, change, extra loader errors, held placements, broken Tenant file:line)
    (
        "a Tenant file with a YAML syntax error",
        {"tenants/payments.yaml": TENANT.replace("spec:\n", "spec: [\n")},
        (),
        {"pay", "platform"},
        "tenants/payments.yaml:2",
    ),
    (
        "a Tenant that fails its schema (a field it does not have)",
        {"tenants/payments.yaml": TENANT + "  colour: red\n"},
        (),
        {"pay", "platform"},
        "tenants/payments.yaml:2",
    ),
    (
        "a Tenant with an invalid path glob",
        {"tenants/payments.yaml": TENANT.replace('"tenants/payments/**"', '"../x/**"')},
        (),
        {"pay", "platform"},
        "tenants/payments.yaml:2",
    ),
    (
        "a Tenant of an apiVersion gitfleet does not serve",
        {"tenants/payments.yaml": TENANT.replace("v1alpha1", "v9")},
        (),
        {"pay", "platform"},
        "tenants/payments.yaml:2",
    ),
    (
        "a second Tenant of the same name (the later one is left out)",
        {"tenants/zz.yaml": TENANT},
        (),
        {"platform"},
        "tenants/zz.yaml:2",
    ),
    (
        "a file under tenants/ that could not be read at all",
        {"tenants/payments.yaml": None},
        (FleetError("tenants/payments.yaml", None, "", "file larger than the limit"),),
        {"pay", "platform"},
        "tenants/payments.yaml",
    ),
    (
        "a broken Tenant plus a platform override of a good tenant's placement",
        {"tenants/payments.yaml": BROKEN, "overrides/shop.yaml": SHOP_CRO},
        (),
        {"pay", "platform", "shop"},
        "tenants/payments.yaml:1",
    ),
    (
        "a broken Tenant plus an override of any placement that patches its objects",
        {"tenants/payments.yaml": BROKEN, "overrides/any.yaml": LOOSE_CRO},
        (),
        {"pay", "platform", "shop"},
        "tenants/payments.yaml:1",
    ),
    (
        "a broken Tenant plus an eviction of a good tenant's placement",
        {
            "tenants/payments.yaml": BROKEN,
            "evictions/e.yaml": EVICTION.format(placement="shop"),
        },
        (),
        {"pay", "platform", "shop"},
        "tenants/payments.yaml:1",
    ),
    (
        "a broken Tenant plus an update run of a good tenant's placement",
        {"tenants/payments.yaml": BROKEN, "rollouts/run.yaml": RUN},
        (),
        {"pay", "platform", "shop"},
        "tenants/payments.yaml:1",
    ),
    (
        "a broken Tenant plus an approval of a good tenant's update run",
        {
            "tenants/payments.yaml": BROKEN,
            "tenants/shop/run.yaml": RUN,
            "approvals/a.yaml": APPROVAL,
        },
        (),
        {"pay", "platform", "shop"},
        "tenants/payments.yaml:1",
    ),
    (
        "a broken Tenant plus a ReplicaDistribution of a good tenant's workload",
        {
            "tenants/payments.yaml": BROKEN,
            "resources/shop/web.yaml": DEPLOYMENT,
            "distributions/web.yaml": DISTRIBUTION,
        },
        (),
        {"pay", "platform", "shop"},
        "tenants/payments.yaml:1",
    ),
    (
        "a broken Tenant plus a disruption budget of a good tenant's placement (it only restricts)",
        {
            "tenants/payments.yaml": BROKEN,
            "placements/budget.yaml": BUDGET.format(placement="shop"),
        },
        (),
        {"pay", "platform"},
        "tenants/payments.yaml:1",
    ),
]


@pytest.mark.parametrize(
    ("change", "extra", "held", "where"),
    [r[1:] for r in ROWS],
    ids=[r[0] for r in ROWS],
)
def test_a_broken_tenant_holds_what_no_loaded_tenant_owns(
    change: dict[str, str | None], extra: tuple[FleetError, ...], held: set[str], where: str
) -> None:
    first = first_pass()
    again = second_pass(first, change, extra)
    for name, path in GONE_ON.items():
        if name in held:
            assert path not in again.files, name
            kept = [p for p in first.files if p.startswith("clusters/") and f"/{name}/" in p]
            assert kept and all(again.files.get(p) == first.files[p] for p in kept), name
            errors = [e for e in again.errors if f"Tenant file {where}" in e.message]
            assert errors, [str(e) for e in again.errors]
            status = again.files[f"status/placements/{name}.yaml"].decode()
            assert "The rollout is held" in status and where in status
        else:
            assert path in again.files, name
    if where.count(":"):
        file, line = where.split(":")
        found = [e for e in again.errors if e.file == file and e.message == TENANT_NOT_LOADED]
        assert found and found[0].line == int(line), [str(e) for e in again.errors]


def test_the_rule_is_in_the_error_of_an_untenanted_placement() -> None:
    again = second_pass(first_pass(), {"tenants/payments.yaml": BROKEN})
    mine = [e for e in again.errors if e.file == "placements/platform.yaml"]
    assert mine and HOLD in mine[0].message and "tenants/payments.yaml:1" in mine[0].message


def test_a_new_placement_no_loaded_tenant_owns_renders_nothing_while_a_tenant_is_broken() -> None:
    change = {
        "tenants/payments.yaml": BROKEN,
        "placements/new.yaml": crp("new", "shop", "monitoring"),
    }
    again = second_pass(first_pass(), change)
    assert not [p for p in again.files if "/new/" in p and p.startswith("clusters/")]


UNCHANGED: list[tuple[str, dict[str, str | None]]] = [
    ("every Tenant loads", {}),
    ("no Tenant at all", {"tenants/payments.yaml": None, "tenants/shop.yaml": None}),
    (
        "a broken file that declares no Tenant, outside tenants/",
        {"placements/other.yaml": "kind: ClusterResourcePlacement\n: :\n"},
    ),
    (
        "a broken file of a loaded tenant under its own paths",
        {"tenants/shop/other.yaml": "kind: ClusterResourcePlacement\n: :\n"},
    ),
]


@pytest.mark.parametrize("change", [c for _, c in UNCHANGED], ids=[n for n, _ in UNCHANGED])
def test_without_a_broken_tenant_every_placement_goes_on(change: dict[str, str | None]) -> None:
    again = second_pass(first_pass(), change)
    for name, path in GONE_ON.items():
        assert path in again.files, (name, [str(e) for e in again.errors])
    assert not [e for e in again.errors if "Tenant file" in e.message]


TEXTS = [
    ("kind: Tenant\n", [1]),
    ("a: 1\n  kind:   'Tenant'  # team\n", [2]),
    ('{apiVersion: gitfleet.io/v1alpha1, kind: "Tenant", metadata: {name: x}}\n', [1]),
    ("kind: TenantX\nkind: Tenants\n", []),
    ("data: {x: 'kind: Tenant'}\n", []),
]


@pytest.mark.parametrize(("text", "lines"), TEXTS)
def test_tenant_lines_are_found_in_text_that_may_not_parse(text: str, lines: list[int]) -> None:
    assert tenant_lines(text) == lines


LIST = "apiVersion: v1\nkind: List\nitems:\n" + "".join(
    ("  - " if i == 0 else "    ") + line + "\n" for i, line in enumerate(TENANT.splitlines())
)


@pytest.mark.parametrize("text", [TENANT, LIST], ids=["a document", "an item of a List"])
def test_a_loaded_tenant_in_a_file_with_another_broken_document_is_not_reported(text: str) -> None:
    text += "---\nkind: ConfigMap\n: :\n"
    docs, errors = parse_documents("tenants/payments.yaml", text, DEFAULT_LIMITS)
    assert len(docs) == 1
    assert errors and not [e for e in errors if e.message == TENANT_NOT_LOADED]
    fleet = build_snapshot(docs, errors)
    assert fleet.unloaded_tenants == {} and "payments" in fleet.tenants

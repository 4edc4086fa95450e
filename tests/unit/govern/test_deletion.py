"""The mass-deletion guard: budget arithmetic (int, percentages, boundaries, rounding), the hold
decision, and the guard in the pure pass (objects, clusters, a deleted placement, approvals)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
import yaml

from gitfleet.api.registry import parse_object
from gitfleet.load.model import FleetSnapshot, SourceDoc
from gitfleet.load.snapshot import build_snapshot
from reconciler.govern.deletion import allowed_removals, deletion_hold
from reconciler.pass_ import PassResult, reconcile
from reconciler.state import State, read_state

NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)

ALLOWED = [
    # (budget, total, removals allowed)
    ("20%", 0, 0),
    ("20%", 1, 0),  # ceil(0.2) = 1, but a percentage below 100% never removes everything
    ("20%", 2, 1),  # ceil(0.4): one object is never a mass deletion
    ("20%", 5, 1),  # exactly 20%
    ("20%", 6, 2),  # ceil(1.2)
    ("20%", 10, 2),
    ("20%", 11, 3),
    ("0%", 10, 0),
    ("99%", 10, 9),
    ("100%", 10, 10),
    ("100%", 1, 1),
    ("50%", 3, 2),
    (0, 10, 0),
    (3, 10, 3),
    (3, 2, 3),  # an integer is taken as is: it may cover everything
]


@pytest.mark.parametrize(("budget", "total", "allowed"), ALLOWED)
def test_allowed_removals(budget: int | str, total: int, allowed: int) -> None:
    assert allowed_removals(budget, total) == allowed


HOLDS = [
    # (budget, objects before, after, clusters before, after, held?)
    ("20%", "abcde", "abcd", "xy", "xy", False),  # 1 of 5 objects: at the budget
    ("20%", "abcde", "abc", "xy", "xy", True),  # 2 of 5 objects
    ("20%", "abcde", "abcdefgh", "xy", "xy", False),  # only additions
    ("20%", "abcde", "abcde", "vwxyz", "wxyz", False),  # 1 of 5 clusters
    ("20%", "abcde", "abcde", "vwxyz", "xyz", True),  # 2 of 5 clusters: the clusters hit first
    ("20%", "abcde", "", "xy", "", True),  # the placement removed everywhere
    ("20%", "", "", "xy", "", False),  # it placed nothing: nothing to delete
    ("20%", "abc", "", "", "", False),  # it reached no cluster: nothing to delete
    ("100%", "abcde", "", "xy", "", False),
    (2, "abcde", "abc", "xy", "xy", False),
    (2, "abcde", "ab", "xy", "xy", True),
    ("20%", "abcde", "vwxyz", "xy", "xy", True),  # renames remove the old objects
]


@pytest.mark.parametrize(("budget", "before", "after", "cb", "ca", "held"), HOLDS)
def test_hold(budget: int | str, before: str, after: str, cb: str, ca: str, held: bool) -> None:
    hold = deletion_hold("web", budget, (set(before), set(after)), (set(cb), set(ca)))
    assert (hold is not None) is held
    if hold is not None:
        assert hold.removed_objects == len(set(before) - set(after))
        assert hold.total_clusters == len(set(cb))
        assert "Gitfleet-Allow-Deletion: web" in hold.message()


@pytest.mark.parametrize(
    ("budget", "ok"),
    [("20%", True), (0, True), (7, True), ("100%", True), ("101%", False), (-1, False),
     ("x", False), ("5", False), (True, False)],
)  # fmt: skip
def test_fleet_validates_deletion_budget(budget: object, ok: bool) -> None:
    doc = {
        "apiVersion": "gitfleet.io/v1alpha1",
        "kind": "Fleet",
        "metadata": {"name": "f"},
        "spec": {"deletionBudget": budget},
    }
    model, issues = parse_object(doc)
    assert (model is not None) is ok, issues
    if not ok:
        assert issues[0].field == "spec.deletionBudget"


CLUSTER = "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata: {{name: {n}}}\n"
CRP = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: web}
spec:
  resourceSelectors: [{group: "", version: v1, kind: Namespace, name: web}]
  policy: {placementType: PickAll}
"""
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i}, namespace: web}}\n"


def files(
    configmaps: int = 9, placement: bool = True, budget: str | int | None = None
) -> dict[str, str]:
    out = {f"clusters/c{i}.yaml": CLUSTER.format(n=f"c{i}") for i in range(3)}
    out["resources/web/ns.yaml"] = "apiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n"
    out |= {f"resources/web/cm{i}.yaml": CM.format(i=i) for i in range(configmaps)}
    if placement:
        out["placements/web.yaml"] = CRP
    if budget is not None:
        fleet = {"apiVersion": "gitfleet.io/v1alpha1", "kind": "Fleet", "metadata": {"name": "f"}}
        out["fleet.yaml"] = yaml.safe_dump({**fleet, "spec": {"deletionBudget": budget}})
    return out


def snapshot(tree: dict[str, str]) -> FleetSnapshot:
    docs = [SourceDoc(p, 0, 1, yaml.safe_load(t), text=t) for p, t in sorted(tree.items())]
    return build_snapshot(docs, [])


def step(before: PassResult | None, fleet: FleetSnapshot) -> PassResult:
    if before is None:
        return reconcile(fleet, State(), None, NOW)
    prior, _ = read_state(before.files)
    return reconcile(fleet, State(prior.placements, before.files, prior.overrides), None, NOW)


def web_files(result: PassResult) -> set[str]:
    """The object files of placement web on c0 (not its index.yaml)."""
    prefix = "clusters/c0/web/"
    return {p for p in result.files if p.startswith(prefix) and p != prefix + "index.yaml"}


def status_conditions(result: PassResult) -> dict[str, str]:
    doc = yaml.safe_load(result.files["status/placements/web.yaml"])
    return {c["type"]: c["message"] for c in doc["status"]["conditions"]}


def test_removing_objects_within_the_budget_proceeds() -> None:
    first = step(None, snapshot(files()))  # 10 objects: 2 may go
    second = step(first, snapshot(files(configmaps=7)))
    assert len(web_files(second)) == len(web_files(first)) - 2
    assert second.deletion_holds == ()


def test_removing_objects_over_the_budget_is_held_with_counts() -> None:
    first = step(None, snapshot(files()))
    second = step(first, snapshot(files(configmaps=6)))
    assert web_files(second) == web_files(first)
    assert [h.key for h in second.deletion_holds] == ["web"]
    message = status_conditions(second)["DeletionHeld"]
    assert message.startswith("this change would remove 3 of 10 object(s) on a cluster")
    assert ("Gitfleet-Deletion-Held", "web") in second.trailers
    assert second.errors == ()
    # The same change, approved (a trailer or a new DeletionApproval, as the shell reports it).
    approved = step(
        first, replace(snapshot(files(configmaps=6)), allowed_deletions=frozenset({"web"}))
    )
    assert len(web_files(approved)) == 7 and approved.deletion_holds == ()


def test_an_integer_budget() -> None:
    first = step(None, snapshot(files(budget=3)))
    assert step(first, snapshot(files(configmaps=6, budget=3))).deletion_holds == ()
    assert step(first, snapshot(files(configmaps=5, budget=3))).deletion_holds != ()


def test_deleting_the_placement_is_held_and_its_status_says_so() -> None:
    first = step(None, snapshot(files()))
    second = step(first, snapshot(files(placement=False)))
    assert web_files(second) == web_files(first)
    assert "decisions/web-0.yaml" in second.files
    held = status_conditions(second)["DeletionHeld"]
    assert held.startswith("deleting the placement would remove 10 of 10 object(s)")
    assert "3 of 3 cluster(s)" in held
    third = step(second, snapshot(files(placement=False)))
    assert third.files == second.files  # held, byte-identical, condition time kept


def test_a_deletion_approval_in_a_working_tree_counts() -> None:
    first = step(None, snapshot(files()))
    approval = (
        "apiVersion: gitfleet.io/v1alpha1\nkind: DeletionApproval\n"
        "metadata: {name: drop-web}\nspec: {placements: [web]}\n"
    )
    tree = files(placement=False) | {"approvals/drop-web.yaml": approval}
    second = step(first, snapshot(tree))
    assert web_files(second) == set() and second.deletion_holds == ()
    # ...but the shell may say it is not new: then it does not approve.
    stale = replace(snapshot(tree), allowed_deletions=frozenset())
    assert step(first, stale).deletion_holds != ()


def test_every_placement_approved_with_a_star() -> None:
    first = step(None, snapshot(files()))
    gone = replace(snapshot(files(placement=False)), allowed_deletions=frozenset({"*"}))
    assert web_files(step(first, gone)) == set()


EVICTION = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementEviction
metadata: {{name: move-web}}
spec: {{placementName: web, clusterName: {cluster}}}
"""


def test_an_eviction_is_an_explicit_removal_the_guard_does_not_count() -> None:
    pick_one = files() | {
        "placements/web.yaml": CRP.replace(
            "{placementType: PickAll}", "{placementType: PickN, numberOfClusters: 1}"
        )
    }
    first = step(None, snapshot(pick_one))
    (chosen,) = {p.split("/")[1] for p in first.files if p.startswith("clusters/") and "/web/" in p}
    second = step(
        first, snapshot(pick_one | {"evictions/move.yaml": EVICTION.format(cluster=chosen)})
    )
    assert second.deletion_holds == ()
    assert not [p for p in second.files if p.startswith(f"clusters/{chosen}/web/")]

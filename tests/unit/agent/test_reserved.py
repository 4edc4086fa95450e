"""Defence in depth: the agent refuses objects in reserved namespaces and its own objects, never
takes over what it did not create there, and never prunes them."""

from __future__ import annotations

import json

from gitfleet.agent.inventory import INVENTORY_NAME, INVENTORY_NAMESPACE, read_inventory
from gitfleet.agent.memory import InMemoryCluster
from gitfleet.agent.run import run_once
from gitfleet.api import find_condition

from .conftest import COMMIT, COMMIT2, NOW, cm, directory, ns, options


def test_an_object_in_a_reserved_namespace_is_refused_and_not_taken_over() -> None:
    cluster = InMemoryCluster()
    cluster.apply(ns("kube-system"), field_manager="kubeadm", force=False, dry_run=False)
    theirs = cm("coredns", "kube-system", Corefile="the real one")
    cluster.apply(theirs, field_manager="kubeadm", force=False, dry_run=False)
    evil = cm("coredns", "kube-system", Corefile="evil")
    files = directory(
        "c1",
        {"app": [ns("app"), cm("a"), evil]},
        strategy={"type": "ServerSideApply", "whenToTakeOver": "Always"},
    )
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    live = cluster.get("v1", "ConfigMap", "kube-system", "coredns")
    assert live is not None and live["data"] == {"Corefile": "the real one"}
    assert "gitfleet.io/placement" not in (live["metadata"].get("labels") or {})
    assert cluster.get("v1", "ConfigMap", "app", "a") is not None  # the rest applies
    applied = find_condition(report.placements[0].conditions, "Applied")
    assert applied is not None and applied.status == "False"
    assert "reserved" in json.dumps(report.model_dump(mode="json"))
    assert ("v1", "ConfigMap", "kube-system", "coredns") not in read_inventory(cluster)["app"]


def test_a_placement_cannot_overwrite_the_agents_inventory() -> None:
    cluster = InMemoryCluster()
    run_once(cluster, "c1", directory("c1", {"app": [ns("app")]}), COMMIT, None, NOW, options())
    forged = cm(INVENTORY_NAME, INVENTORY_NAMESPACE, app="[]")
    files = directory("c1", {"app": [ns("app"), forged]})
    run_once(cluster, "c1", files, COMMIT2, None, NOW, options())
    assert read_inventory(cluster) == {"app": frozenset({("v1", "Namespace", "", "app")})}


def test_recorded_reserved_objects_are_never_pruned() -> None:
    cluster = InMemoryCluster()
    labels = {"gitfleet.io/placement": "app", "gitfleet.io/cluster": "c1"}
    old = cm("x", "kube-system")
    old["metadata"]["labels"] = labels
    cluster.apply(ns("kube-system"), field_manager="kubeadm", force=False, dry_run=False)
    cluster.apply(old, field_manager="gitfleet", force=True, dry_run=False)
    row = json.dumps([["v1", "ConfigMap", "kube-system", "x"]])
    inventory = cm(INVENTORY_NAME, INVENTORY_NAMESPACE, app=row)
    cluster.apply(ns(INVENTORY_NAMESPACE), field_manager="gitfleet", force=True, dry_run=False)
    cluster.apply(inventory, field_manager="gitfleet", force=True, dry_run=False)
    run_once(cluster, "c1", directory("c1", {"app": [ns("app")]}), COMMIT, None, NOW, options())
    assert cluster.get("v1", "ConfigMap", "kube-system", "x") is not None

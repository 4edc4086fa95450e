"""An object stuck deleting on a finalizer is reported with its name, its finalizers and since
when, on every pass until it is gone (it stays in the inventory meanwhile)."""

from __future__ import annotations

from gitfleet.agent.inventory import read_inventory
from gitfleet.agent.memory import InMemoryCluster
from gitfleet.agent.run import run_once
from gitfleet.api import AgentReport

from .conftest import COMMIT, COMMIT2, NOW, cm, directory, ns, options


def _message(report: AgentReport) -> str:
    return " ".join(c.message for c in report.conditions)


def test_stuck_deletion_is_reported_until_the_finalizer_goes() -> None:
    cluster = InMemoryCluster()
    held = cm("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    report = run_once(
        cluster, "c1", directory("c1", {"app": [ns("app"), held]}), COMMIT, None, NOW, options()
    )
    without = directory("c1", {"app": [ns("app")]})
    for _ in range(2):
        report = run_once(cluster, "c1", without, COMMIT2, report, NOW, options())
        message = _message(report)
        assert "ConfigMap/app/held" in message and "example.com/hold" in message, message
        assert "finalizers still hold it" in message and "deleted at" in message
        assert ("v1", "ConfigMap", "app", "held") in read_inventory(cluster)["app"]
    live = cluster.get("v1", "ConfigMap", "app", "held")
    assert live is not None
    live["metadata"]["finalizers"] = []
    cluster.apply(live, field_manager="controller", force=True, dry_run=False)
    report = run_once(cluster, "c1", without, COMMIT2, report, NOW, options())
    assert "finalizers still hold it" not in _message(report)
    assert cluster.get("v1", "ConfigMap", "app", "held") is None

"""A ClusterGroupUpgrade through the real pass, stepped with simulated agent reports
(spec/cluster-group-upgrade.md, issue scenario): 10 clusters, an External placement `web`,
a CGU with 2 canaries and maxConcurrency 3. Each step: run `reconcile`, then every agent reports
exactly the content its index names (Applied; Available unless the cluster is broken). One
canary never becomes Available: the canary batch times out, the CGU stops, and no other cluster
ever gets the new snapshot."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from gitfleet.api import AgentReport, format_time, parse_time
from gitfleet.repo.workdir import WorkdirTree
from reconciler.pass_ import PassResult, reconcile
from reconciler.state import State, read_state
from renderers import load_fleet

T0 = parse_time("2026-01-01T00:00:00Z")
CLUSTERS = [f"c{i:02d}" for i in range(10)]
COMMIT = "a" * 40


def write(root: Path, image: str, cgu: dict[str, Any] | None) -> None:
    files: dict[str, Any] = {
        f"clusters/{c}.yaml": {
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": c, "labels": {"env": "prod"}},
            "spec": {},
        }
        for c in CLUSTERS
    }
    files["resources/web.yaml"] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "web"}},
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "web", "namespace": "web"},
            "data": {"image": image},
        },
    ]
    files["placements/web.yaml"] = {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "web"},
        "spec": {
            "resourceSelectors": [
                {"group": "", "version": "v1", "kind": "Namespace", "name": "web"}
            ],
            "policy": {"placementType": "PickAll"},
            "strategy": {"type": "External"},
        },
    }
    if cgu is not None:
        files["rollouts/upgrade.yaml"] = cgu
    for path, doc in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        docs = doc if isinstance(doc, list) else [doc]
        target.write_text(yaml.safe_dump_all(docs))


def reports(files: dict[str, bytes], now: datetime, broken: set[str]) -> dict[str, AgentReport]:
    out = {}
    for c in CLUSTERS:
        index = yaml.safe_load(files[f"clusters/{c}/index.yaml"]) or {}
        placements = []
        for entry in index.get("placements") or []:
            ok = "False" if c in broken else "True"
            placements.append(
                {
                    "key": entry["key"],
                    "name": entry["name"],
                    "resourceSnapshotIndex": entry["resourceSnapshotIndex"],
                    "contentHash": entry.get("contentHash", ""),
                    "conditions": [
                        {
                            "type": "Applied",
                            "status": "True",
                            "reason": "AppliedWorkSuccessfully",
                            "lastTransitionTime": format_time(now),
                        },
                        {
                            "type": "Available",
                            "status": ok,
                            "reason": "AvailableWorkSuccessfully"
                            if ok == "True"
                            else "NotAvailableYet",
                            "lastTransitionTime": format_time(now),
                        },
                    ],
                }
            )
        out[c] = AgentReport.model_validate(
            {
                "apiVersion": "gitfleet.io/v1alpha1",
                "kind": "AgentReport",
                "metadata": {"name": c},
                "heartbeatTime": format_time(now),
                "agentVersion": "test",
                "outputCommit": COMMIT,
                "conditions": [],
                "placements": placements,
            }
        )
    return out


class Hub:
    def __init__(self, root: Path) -> None:
        self.root, self.prior, self.files = root, State(), {}  # type: ignore[var-annotated]
        self.result: PassResult | None = None

    def step(self, now: datetime, broken: set[str] = set()) -> PassResult:  # noqa: B006
        rep = reports(self.files, now, broken) if self.files else None
        fleet = load_fleet(WorkdirTree(self.root.resolve()))
        self.result = reconcile(fleet, self.prior, None, now, reports=rep)
        assert not self.result.errors, self.result.errors
        self.files = dict(self.result.files)
        self.prior, problems = read_state(self.files)
        assert not problems
        return self.result

    def image(self, cluster: str) -> str | None:
        data = self.files.get(f"clusters/{cluster}/web/configmap_web_web.yaml")
        return None if data is None else yaml.safe_load(data)["data"]["image"]

    def cgu(self) -> dict[str, Any]:
        return yaml.safe_load(self.files["status/clustergroupupgrades/default/upgrade.yaml"])[
            "status"
        ]


CGU = {
    "apiVersion": "ran.openshift.io/v1alpha1",
    "kind": "ClusterGroupUpgrade",
    "metadata": {"name": "upgrade"},
    "spec": {
        "clusterLabelSelectors": [{"matchLabels": {"env": "prod"}}],
        "managedPolicies": ["web"],
        "remediationStrategy": {"maxConcurrency": 3, "timeout": 60, "canaries": ["c07", "c03"]},
    },
}


def start(tmp_path: Path) -> Hub:
    """v1 everywhere (an update run of sorts: the placement starts External, so the CGU that
    rolls v1 first is replaced by a fresh one for v2)."""
    hub = Hub(tmp_path)
    write(tmp_path, "v1", {**CGU, "metadata": {"name": "first"}})
    t = T0
    for _ in range(8):
        hub.step(t)
        t += timedelta(minutes=1)
    assert all(hub.image(c) == "v1" for c in CLUSTERS)
    write(tmp_path, "v2", CGU)
    return hub


def test_canaries_then_batches_of_three(tmp_path: Path) -> None:
    hub = start(tmp_path)
    t = T0 + timedelta(minutes=10)
    hub.step(t)
    status = hub.cgu()
    assert status["remediationPlan"] == [
        ["c07"],
        ["c03"],
        ["c00", "c01", "c02"],
        ["c04", "c05", "c06"],
        ["c08", "c09"],
    ]
    assert [c for c in CLUSTERS if hub.image(c) == "v2"] == ["c07"]
    for _ in range(12):
        t += timedelta(minutes=1)
        hub.step(t)
    assert all(hub.image(c) == "v2" for c in CLUSTERS)
    conds = {c["type"]: c for c in hub.cgu()["conditions"]}
    assert (conds["Succeeded"]["status"], conds["Succeeded"]["reason"]) == ("True", "Completed")


def test_canary_never_available_stops_the_upgrade(tmp_path: Path) -> None:
    hub = start(tmp_path)
    t = T0 + timedelta(minutes=10)
    for _ in range(30):
        hub.step(t, broken={"c07"})
        t += timedelta(minutes=1)
    assert [c for c in CLUSTERS if hub.image(c) == "v2"] == ["c07"]
    conds = {c["type"]: c for c in hub.cgu()["conditions"]}
    assert (conds["Succeeded"]["status"], conds["Succeeded"]["message"]) == (
        "False",
        "Policy remediation took too long on canary clusters",
    )
    assert hub.cgu()["clusters"] == [
        {
            "name": "c07",
            "state": "timedout",
            "currentPolicy": {"name": "web", "status": "NonCompliant"},
        }
    ]
    # once finished, nothing moves any more
    before = {c: hub.image(c) for c in CLUSTERS}
    hub.step(t + timedelta(hours=5))
    assert {c: hub.image(c) for c in CLUSTERS} == before

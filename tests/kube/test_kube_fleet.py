"""The whole loop on real API servers: a bare Git remote, the hub and two member agents (the real
`gitfleet reconcile --once` and `gitfleet agent --once --kubeconfig` commands, in subprocesses),
each agent on its own kube-apiserver (two API servers sharing one etcd under different prefixes).

The quickstart (eu-1 and eu-2, agents required for eligibility) converges; with the Deployment's
status set through the status subresource (there is no controller-manager) the placement becomes
Available; a changed ConfigMap is rolled out one cluster per wave (RollingUpdate, maxUnavailable
25% of 2 = 1); a manual scale is corrected by the next agent pass; a ConfigMap removed from the
fleet is pruned from both clusters while the rest stays.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

from gitfleet.agent.kube import KubeClusterClient
from tests.kube.apiserver import ApiServer
from tests.kube.conftest import fresh_inventory
from tests.kube.helpers import other_manager_apply, set_status

ROOT = Path(__file__).resolve().parents[2]
CLUSTERS = ("eu-1", "eu-2")
STATUS_FILE = "status/placements/web.yaml"
FLEET_YAML = """apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: realapi
spec:
  outputBranch: gitfleet/rendered
  heartbeatTimeout: 30m
  values:
    team: web
"""


def run(argv: list[str], timeout: float = 180) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    print(f"$ {' '.join(argv)}\n[exit {proc.returncode}]\n{proc.stdout}{proc.stderr}")
    assert proc.returncode == 0, f"{' '.join(argv)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def git(cwd: Path, *args: str) -> str:
    return run(
        ["git", "-C", str(cwd), "-c", "user.name=T", "-c", "user.email=t@example.invalid", *args]
    )


class Fleet:
    """The hub and the two agents, each command once in a subprocess."""

    def __init__(self, remote: Path, cache: Path, servers: dict[str, ApiServer]) -> None:
        self.remote, self.cache, self.servers = remote, cache, servers
        self.clients = {
            c: KubeClusterClient.from_kubeconfig(str(s.kubeconfig)) for c, s in servers.items()
        }

    def hub(self) -> None:
        argv = ["reconcile", "--repo", str(self.remote), "--once", "--cache-dir", str(self.cache)]
        run([sys.executable, "-m", "gitfleet", *argv])

    def agents(self) -> None:
        for cluster in CLUSTERS:
            self.agent(cluster)

    def agent(self, cluster: str) -> None:
        argv = ["agent", "--repo", str(self.remote), "--cluster", cluster, "--once"]
        argv += ["--kubeconfig", str(self.servers[cluster].kubeconfig)]
        run([sys.executable, "-m", "gitfleet", *argv, "--cache-dir", str(self.cache)])

    def mark_available(self) -> None:
        """Report each cluster's Deployment rolled out, as the controller-manager would."""
        for cluster, client in self.clients.items():
            live = client.get("apps/v1", "Deployment", "web", "frontend")
            assert live is not None
            n = live["spec"]["replicas"]
            status = {"observedGeneration": live["metadata"]["generation"], "replicas": n}
            status |= {"updatedReplicas": n, "readyReplicas": n, "availableReplicas": n}
            set_status(self.servers[cluster], live, status)

    def rounds_until(self, done: Callable[[], bool], what: str, rounds: int = 5) -> None:
        """Hub + agents until `done()` (a rollout moves one wave per round); bounded."""
        for _ in range(rounds):
            if done():
                return
            self.hub()
            self.agents()
        assert done(), f"{what} did not happen within {rounds} hub + agent rounds"

    def conditions(self) -> dict[str, str]:
        text = run(
            ["git", "--git-dir", str(self.remote), "show", f"gitfleet/rendered:{STATUS_FILE}"]
        )
        status = (yaml.safe_load(text) or {}).get("status") or {}
        return {c["type"]: c["status"] for c in status.get("conditions") or []}


def test_hub_and_two_agents_on_two_real_api_servers(
    tmp_path: Path, apiserver: ApiServer, apiserver_b: ApiServer
) -> None:
    remote = tmp_path / "fleet.git"
    run(["git", "init", "-q", "--bare", "-b", "main", str(remote)])
    work = tmp_path / "fleet"
    shutil.copytree(ROOT / "examples/quickstart", work)
    (work / "clusters/us-1.yaml").unlink()
    (work / "fleet.yaml").write_text(FLEET_YAML)
    git(work, "init", "-q", "-b", "main")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "fleet")
    git(work, "push", "-q", str(remote), "main")
    fleet = Fleet(
        remote, tmp_path / "cache", dict(zip(CLUSTERS, (apiserver, apiserver_b), strict=True))
    )
    for client in fleet.clients.values():
        fresh_inventory(client)
        assert client.get("v1", "Namespace", None, "web") is None

    fleet.hub()  # output branch; nobody reported yet, so nothing is placed
    fleet.agents()  # first reports: the clusters become eligible
    fleet.hub()  # places web (and fleet-viewer) on both
    fleet.agents()  # apply
    fleet.hub()
    for client in fleet.clients.values():
        for kind, name in (("Deployment", "frontend"), ("Service", "frontend")):
            assert client.get("apps/v1" if kind == "Deployment" else "v1", kind, "web", name)
        assert client.get("v1", "ConfigMap", "web", "frontend-content") is not None
    assert fleet.conditions().get("ClusterResourcePlacementAvailable") != "True"

    fleet.mark_available()
    fleet.agents()
    fleet.hub()
    assert fleet.conditions().get("ClusterResourcePlacementAvailable") == "True"

    content = work / "resources/web/configmap.yaml"
    doc = yaml.safe_load(content.read_text())
    first_key = sorted(doc["data"])[0]
    doc["data"][first_key] = "rolled out by the real-API test"
    content.write_text(yaml.safe_dump(doc))
    git(work, "commit", "-qam", "change the content")
    git(work, "push", "-q", str(remote), "main")

    def rolled_out(client: KubeClusterClient) -> bool:
        live = client.get("v1", "ConfigMap", "web", "frontend-content")
        return live is not None and live["data"][first_key] == "rolled out by the real-API test"

    fleet.hub()
    fleet.agents()
    # RollingUpdate, maxUnavailable 25% of 2 clusters = 1: one cluster per wave
    assert sum(rolled_out(c) for c in fleet.clients.values()) == 1
    fleet.rounds_until(lambda: all(rolled_out(c) for c in fleet.clients.values()), "the rollout")

    eu1 = fleet.clients["eu-1"]
    scale = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "frontend", "namespace": "web"},
        "spec": {"replicas": 5},
    }
    other_manager_apply(eu1, scale, "kubectl-scale")
    fleet.agent("eu-1")
    live = eu1.get("apps/v1", "Deployment", "web", "frontend")
    assert live is not None and live["spec"]["replicas"] == 2
    fleet.mark_available()  # the corrected spec is a new generation: the controller reports it

    git(work, "rm", "-q", "resources/web/configmap.yaml")
    git(work, "commit", "-qm", "drop the content ConfigMap")
    git(work, "push", "-q", str(remote), "main")

    def pruned() -> bool:
        gone = [c.get("v1", "ConfigMap", "web", "frontend-content") is None for c in clients]
        return all(gone)

    clients = list(fleet.clients.values())
    fleet.rounds_until(pruned, "the ConfigMap to be pruned from both clusters")
    for client in clients:
        assert client.get("apps/v1", "Deployment", "web", "frontend") is not None
        assert client.get("v1", "Service", "web", "frontend") is not None

"""End-to-end on kind: a Git server, the hub and two member agents place the quickstart's `web`.

A temp fleet repository (a copy of `examples/quickstart` with two clusters, eu-1 and eu-2, and
the default `clusterEligibility: RequireAgent`, so eligibility comes from the agents' reports)
is pushed to a bare remote served by `git daemon` on 127.0.0.1. Two kind clusters play eu-1 and
eu-2. `gitfleet reconcile --once` and `gitfleet agent --once` run as subprocesses in the order a
real deployment converges: hub (output branch, nothing placed), agents (first reports), hub
(places on both), agents (apply), hub (reads reports). Then: the objects exist on both clusters,
the placement reaches ClusterResourcePlacementAvailable, a scaled Deployment is forced back by
the next agent pass (ClientSideApply), and a ConfigMap removed from the fleet is pruned.

Needs a Docker engine, `kind`, `kubectl` and `git daemon`; skipped with the reason otherwise (as
on the development machines, which have only the Docker client). Every wait is bounded.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
CLUSTERS = ("eu-1", "eu-2")
STATUS_FILE = "status/placements/web.yaml"
FLEET_YAML = """apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: e2e
spec:
  outputBranch: gitfleet/rendered
  heartbeatTimeout: 30m
  values:
    team: web
"""


def _skip_reason() -> str | None:
    for tool in ("kind", "docker", "kubectl", "git"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    exec_path = subprocess.run(["git", "--exec-path"], capture_output=True, text=True).stdout
    if shutil.which("git-daemon", path=exec_path.strip()) is None:
        return "git daemon is not installed"
    probe = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return "no Docker engine is reachable (docker info failed)"
    return None


SKIP_REASON = _skip_reason()
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(SKIP_REASON is not None, reason=f"e2e on kind: {SKIP_REASON}"),
]


def run(argv: list[str], *, timeout: float = 120, check: bool = True) -> str:
    """Run a command, print what it said (pytest shows it on failure); fail with its output."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    print(f"$ {' '.join(argv)}\n[exit {proc.returncode}]\n{proc.stdout}{proc.stderr}")
    if check and proc.returncode != 0:
        raise AssertionError(
            f"command failed ({proc.returncode}): {' '.join(argv)}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return proc.stdout


def git(cwd: Path, *args: str) -> str:
    identity = ["-c", "user.name=E2E", "-c", "user.email=e2e@example.invalid"]
    return run(["git", "-C", str(cwd), *identity, *args])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture()
def git_server(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A bare `fleet.git` served read-write by `git daemon` on 127.0.0.1: (bare path, URL)."""
    base, port = tmp_path / "daemon", free_port()
    base.mkdir()
    bare = base / "fleet.git"
    run(["git", "init", "-q", "--bare", "-b", "main", str(bare)])
    argv = ["git", "daemon", "--export-all", "--enable=receive-pack", f"--base-path={base}"]
    argv += ["--listen=127.0.0.1", f"--port={port}", "--reuseaddr", "--informative-errors"]
    log = (tmp_path / "daemon.log").open("w")
    proc = subprocess.Popen([*argv, str(base)], stdin=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("git daemon did not start listening") from None
                time.sleep(0.05)
        yield bare, f"git://127.0.0.1:{port}/fleet.git"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


@pytest.fixture()
def kubeconfigs(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """Two kind clusters (eu-1, eu-2), each with its own kubeconfig; always deleted."""
    suffix = uuid.uuid4().hex[:6]
    names = {c: f"gitfleet-e2e-{letter}-{suffix}" for c, letter in zip(CLUSTERS, "ab", strict=True)}
    configs = {
        c: tmp_path / f"{letter}.kubeconfig" for c, letter in zip(CLUSTERS, "ab", strict=True)
    }
    try:
        for cluster, name in names.items():
            kubeconfig = ["--kubeconfig", str(configs[cluster])]
            argv = ["kind", "create", "cluster", "--name", name, *kubeconfig, "--wait", "120s"]
            run(argv, timeout=360)
        yield configs
    finally:
        for name in names.values():
            run(["kind", "delete", "cluster", "--name", name], timeout=180, check=False)


def make_fleet(work: Path, url: str) -> None:
    """The quickstart with eu-1 and eu-2 only and RequireAgent eligibility, pushed to `url`."""
    shutil.copytree(ROOT / "examples/quickstart", work)
    (work / "clusters/us-1.yaml").unlink()
    (work / "fleet.yaml").write_text(FLEET_YAML)
    git(work, "init", "-q", "-b", "main")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "e2e fleet")
    git(work, "push", "-q", url, "main")


class Fleet:
    """The gitfleet commands of the test, each one `--once` in a subprocess."""

    def __init__(self, url: str, cache: Path, kubeconfigs: dict[str, Path]) -> None:
        self.url, self.cache, self.kubeconfigs = url, cache, kubeconfigs

    def hub(self) -> None:
        argv = ["reconcile", "--repo", self.url, "--once", "--cache-dir", str(self.cache)]
        run([sys.executable, "-m", "gitfleet", *argv])

    def agent(self, cluster: str) -> None:
        argv = ["agent", "--repo", self.url, "--cluster", cluster, "--once"]
        argv += ["--kubeconfig", str(self.kubeconfigs[cluster]), "--cache-dir", str(self.cache)]
        run([sys.executable, "-m", "gitfleet", *argv], timeout=300)

    def agents(self) -> None:
        for cluster in CLUSTERS:
            self.agent(cluster)

    def kubectl(self, cluster: str, *args: str, check: bool = True) -> str:
        argv = ["kubectl", "--kubeconfig", str(self.kubeconfigs[cluster]), *args]
        return run(argv, timeout=300, check=check)


def placement_conditions(bare: Path) -> dict[str, str]:
    """type -> status of the `web` placement's conditions on the output branch."""
    text = run(["git", "--git-dir", str(bare), "show", f"gitfleet/rendered:{STATUS_FILE}"])
    status = (yaml.safe_load(text) or {}).get("status") or {}
    return {c["type"]: c["status"] for c in status.get("conditions") or []}


def wait_until(what: str, probe: Callable[[], bool], timeout: float, interval: float = 3) -> None:
    """Call `probe()` until it returns true; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def diagnose(fleet: Fleet, bare: Path) -> None:
    """Print the clusters' web namespace and the Git side, for a failed run."""
    for cluster in CLUSTERS:
        fleet.kubectl(cluster, "get", "all,configmap", "-n", "web", "-o", "wide", check=False)
        fleet.kubectl(cluster, "get", "events", "-n", "web", check=False)
        ref = f"gitfleet/status/{cluster}:report.yaml"
        run(["git", "--git-dir", str(bare), "show", ref], check=False)
    run(["git", "--git-dir", str(bare), "show", f"gitfleet/rendered:{STATUS_FILE}"], check=False)


def test_hub_and_two_agents_place_web_on_kind(
    tmp_path: Path, git_server: tuple[Path, str], kubeconfigs: dict[str, Path]
) -> None:
    bare, url = git_server
    work = tmp_path / "fleet"
    make_fleet(work, url)
    fleet = Fleet(url, tmp_path / "cache", kubeconfigs)
    try:
        converge(fleet, bare)
        check_drift_correction(fleet)
        check_pruning(fleet, work, url)
    except Exception:
        diagnose(fleet, bare)
        raise


def converge(fleet: Fleet, bare: Path) -> None:
    """Hub, agents, hub, agents, hub: the web objects run on both clusters and are Available."""
    fleet.hub()  # output branch; no agent has reported, so nothing is placed
    fleet.agents()  # first reports: the clusters become eligible
    fleet.hub()  # places web on eu-1 and eu-2
    fleet.agents()  # apply
    fleet.hub()  # reads the reports
    for cluster in CLUSTERS:
        fleet.kubectl(cluster, "get", "namespace", "web")
        for obj in ("deployment/frontend", "service/frontend", "configmap/frontend-content"):
            fleet.kubectl(cluster, "-n", "web", "get", obj)
        fleet.kubectl(
            cluster, "-n", "web", "wait", "--for=condition=Available",
            "deployment/frontend", "--timeout=240s",
        )  # fmt: skip

    def available() -> bool:
        fleet.agents()
        fleet.hub()
        return placement_conditions(bare).get("ClusterResourcePlacementAvailable") == "True"

    wait_until("ClusterResourcePlacementAvailable True in " + STATUS_FILE, available, 120, 5)


def replicas(fleet: Fleet, cluster: str) -> str:
    return fleet.kubectl(
        cluster, "-n", "web", "get", "deployment/frontend", "-o", "jsonpath={.spec.replicas}"
    ).strip()


def check_drift_correction(fleet: Fleet) -> None:
    """A manual scale on eu-1 is overwritten by the next agent pass (ClientSideApply forces)."""
    fleet.kubectl("eu-1", "-n", "web", "scale", "deployment/frontend", "--replicas=5")
    assert replicas(fleet, "eu-1") == "5"
    fleet.agent("eu-1")
    assert replicas(fleet, "eu-1") == "2"


def check_pruning(fleet: Fleet, work: Path, url: str) -> None:
    """The ConfigMap removed from the fleet is deleted from both clusters; the rest stays."""
    git(work, "rm", "-q", "resources/web/configmap.yaml")
    git(work, "commit", "-qm", "drop the frontend content ConfigMap")
    git(work, "push", "-q", url, "main")
    fleet.hub()
    fleet.agents()
    for cluster in CLUSTERS:

        def gone(cluster: str = cluster) -> bool:
            out = fleet.kubectl(
                cluster, "-n", "web", "get", "configmap", "frontend-content",
                "--ignore-not-found", "-o", "name",
            )  # fmt: skip
            return out.strip() == ""

        wait_until(f"configmap/frontend-content to be pruned from {cluster}", gone, 60)
        fleet.kubectl(cluster, "-n", "web", "get", "deployment/frontend", "service/frontend")

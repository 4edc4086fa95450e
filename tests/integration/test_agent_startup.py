"""The agent never dies with a traceback: no in-cluster configuration, an unreachable API server
(retried with backoff, said on stderr), the `[agent]` extra missing (one line naming the install
command), and a report push that is raced (fetch, rebase onto the new tip, retry) or refused.

The CLI runs as a real subprocess; the push tests drive `Agent` against real Git repositories
with an in-memory cluster (no Kubernetes API server is available here).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from gitfleet.agent.gitloop import Agent, AgentConfig
from gitfleet.agent.memory import InMemoryCluster
from gitfleet.agent.retry import Backoff
from gitfleet.agent.run import AgentOptions
from gitfleet.agent.sync import CrdWait
from tests.integration.fleet_helpers import QUICKSTART, ROOT, TRACEBACK, commit_fleet, git, run_cli

KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: gone
  cluster: {{server: "https://127.0.0.1:{port}"}}
contexts:
- name: gone
  context: {{cluster: gone, user: u}}
current-context: gone
users:
- name: u
  user: {{token: not-a-real-token}}
"""


def _sigint_default() -> None:
    """Ctrl-C as in a terminal: a test run started in the background (`cmd &` without job
    control) ignores SIGINT, and a child inherits that, so the agent would never see it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture()
def output_repo(tmp_path: Path) -> Path:
    """A bare repository with the quickstart on main and its output branch."""
    work = tmp_path / "work"
    commit_fleet(QUICKSTART, work)
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(origin)], check=True)
    done = run_cli(tmp_path, "reconcile", "--repo", origin, "--once", "--cache-dir", tmp_path / "h")
    assert done.code == 0, done.output
    return origin


def test_unreachable_api_server_is_retried_then_a_clear_error(
    tmp_path: Path, output_repo: Path
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG.format(port=closed_port()))
    args = ["--repo", output_repo, "--cluster", "eu-1", "--kubeconfig", kubeconfig]
    result = run_cli(tmp_path, "agent", *args, "--once", "--cache-dir", tmp_path / "a")
    assert result.code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 3, result.stderr
    assert all("unreachable: Connection refused; retrying in" in line for line in lines[:2])
    assert lines[2].startswith("Error: the API server https://127.0.0.1:")
    assert "gave up after 3 tries" in lines[2]


def test_a_long_running_agent_keeps_retrying_an_unreachable_api_server(
    tmp_path: Path, output_repo: Path
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG.format(port=closed_port()))
    argv = [sys.executable, "-m", "gitfleet", "agent", "--repo", str(output_repo)]
    argv += ["--cluster", "eu-1", "--kubeconfig", str(kubeconfig)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_default
    )
    assert proc.stderr is not None
    try:
        seen = [proc.stderr.readline() for _ in range(3)]
        assert proc.poll() is None  # still alive after three failed tries
    finally:
        proc.send_signal(signal.SIGINT)
        rest = proc.communicate(timeout=30)[1]
    assert all("unreachable" in line and "retrying" in line for line in seen), seen
    assert TRACEBACK not in "".join(seen) + rest


def test_no_in_cluster_configuration_is_one_line(tmp_path: Path, output_repo: Path) -> None:
    env_keys = ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")
    saved = {k: os.environ.pop(k) for k in env_keys if k in os.environ}
    try:
        result = run_cli(tmp_path, "agent", "--repo", output_repo, "--cluster", "eu-1", "--once")
    finally:
        os.environ.update(saved)
    assert result.code == 1
    assert result.stderr.strip().splitlines() == [
        "Error: no in-cluster configuration (Service host/port is not set.); "
        "outside a pod pass --kubeconfig PATH"
    ]


def test_missing_agent_extra_names_the_install_command(tmp_path: Path) -> None:
    code = "import sys; sys.modules['kubernetes'] = None; from gitfleet.cli import main; main()"
    argv = [sys.executable, "-c", code, "agent", "--repo", "x", "--cluster", "eu-1", "--once"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "Error: the agent needs the Kubernetes client, which is not installed: "
        "pip install 'gitfleet-k8s[agent]'"
    )


# --- report pushes -------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        from datetime import UTC, datetime

        self.now = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)

    def __call__(self):  # type: ignore[no-untyped-def]
        return self.now


def make_agent(tmp: Path, remote: Path, clock: Clock, sleeps: list[float]) -> Agent:
    options = AgentOptions(
        version="test",
        backoff=Backoff(sleep=lambda s: None),
        crd_wait=CrdWait(sleep=lambda s: None),
    )
    config = AgentConfig(str(remote), "eu-1", tmp / "agent", heartbeat=timedelta(seconds=60))
    return Agent(config, InMemoryCluster(), clock=clock, options=options, sleep=sleeps.append)


def foreign_commit(tmp: Path, remote: Path, branch: str) -> str:
    """Another writer moves the agent's status branch (a duplicate or restarted agent)."""
    other = tmp / "other"
    subprocess.run(["git", "clone", "-q", "-b", branch, str(remote), str(other)], check=True)
    (other / "note.txt").write_text("moved by someone else\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "someone else")
    git(other, "push", "-q", "origin", branch)
    return git(other, "rev-parse", "HEAD")


def test_a_raced_report_push_is_rebased_and_retried(tmp_path: Path, output_repo: Path) -> None:
    clock, sleeps = Clock(), []
    agent = make_agent(tmp_path, output_repo, clock, sleeps)
    assert agent.run_once().outcome == "pushed"
    moved = foreign_commit(tmp_path, output_repo, "gitfleet/status/eu-1")
    original_fetch = agent.mirror.fetch
    calls = []

    def stale_first_fetch(specs, **kw):  # type: ignore[no-untyped-def]
        calls.append(specs)
        if len(calls) == 1:  # the pass's own fetch misses the foreign commit (a race)
            return original_fetch([s for s in specs if "status" not in s], **kw)
        return original_fetch(specs, **kw)

    agent.mirror.fetch = stale_first_fetch  # type: ignore[method-assign]
    clock.now += timedelta(minutes=2)  # heartbeat due
    result = agent.run_once()
    assert result.outcome == "pushed", result.message
    assert len(sleeps) == 1 and 0 < sleeps[0] <= 5
    parents = git(output_repo, "log", "--format=%P", "-1", "gitfleet/status/eu-1")
    assert parents == moved  # the report went on top of the other writer's commit
    assert "moved by someone else" in git(output_repo, "show", "gitfleet/status/eu-1:note.txt")


def test_a_refused_report_push_is_reported_not_raised(tmp_path: Path, output_repo: Path) -> None:
    hook = output_repo / "hooks/pre-receive"
    hook.write_text("#!/bin/sh\necho 'status pushes are frozen' >&2\nexit 1\n")
    hook.chmod(0o755)
    agent = make_agent(tmp_path, output_repo, Clock(), [])
    result = agent.run_once()
    assert result.outcome == "push-failed"
    assert "refused" in result.message and "gitfleet/status/eu-1" in result.message

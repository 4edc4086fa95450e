"""The hub loop and the agent loop never exit on an unexpected exception: they report it (outcome
`error`, no exception text), back off and retry, and the next pass works normally."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gitfleet.agent import gitloop
from gitfleet.agent.gitloop import Agent, AgentConfig, AgentPass
from gitfleet.agent.memory import InMemoryCluster
from reconciler import loop
from reconciler.loop import Hub, HubConfig, PassReport
from tests.helpers.gitrepo import commit_all, copy_work, init_bare

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)


@pytest.fixture()
def remote(tmp_path: Path) -> Path:
    bare = init_bare(tmp_path / "remote.git")
    work = copy_work(ROOT / "examples/quickstart", tmp_path / "work")
    commit_all(work, "fleet", push_to=bare)
    return bare


class Flaky:
    """Raises on the first `failures` calls, then behaves like `inner`."""

    def __init__(self, inner: Any, failures: int) -> None:
        self.inner, self.failures, self.calls = inner, failures, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls <= self.failures:
            raise KeyError("secret-value-hunter2")
        return self.inner(*args, **kwargs)


def test_hub_loop_reports_backs_off_and_recovers(
    remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loop, "reconcile", Flaky(loop.reconcile, 2))
    hub = Hub(HubConfig(str(remote), tmp_path / "cache"), clock=lambda: NOW)
    waits: list[float] = []
    stop = threading.Event()
    reports: list[PassReport] = []

    class Recording(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            waits.append(timeout or 0.0)
            return False

    def on_report(report: PassReport) -> None:
        reports.append(report)
        if report.outcome == "committed":
            stop.set()

    hub.run(1.0, Recording(), stop, on_report)
    assert [r.outcome for r in reports] == ["error", "error", "committed"]
    assert "KeyError" in reports[0].message and "hunter2" not in reports[0].message
    assert waits[:2] == [2.0, 4.0]  # backing off, not spinning


def test_agent_loop_reports_backs_off_and_recovers(
    remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Hub(HubConfig(str(remote), tmp_path / "hub"), clock=lambda: NOW).run_once()
    monkeypatch.setattr(gitloop, "run_once", Flaky(gitloop.run_once, 2))
    agent = Agent(
        AgentConfig(str(remote), "eu-1", tmp_path / "agent"), InMemoryCluster(), clock=lambda: NOW
    )
    passes: list[AgentPass] = []
    agent.run(0.0, lambda: any(p.outcome == "pushed" for p in passes), passes.append)
    assert [p.outcome for p in passes] == ["error", "error", "pushed"]
    assert "KeyError" in passes[0].message and "hunter2" not in passes[0].message

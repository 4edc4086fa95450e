"""An agent for an in-memory cluster that never really sleeps (API retries and CRD waits
return at once), pulling from and reporting to a bare remote.

Called by the hub + agent integration tests (test_hub_agent, test_staged_e2e,
test_apply_strategies, test_secrets_roundtrip).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from gitfleet.agent.gitloop import Agent, AgentConfig
from gitfleet.agent.memory import InMemoryCluster
from gitfleet.agent.retry import Backoff
from gitfleet.agent.run import AgentOptions
from gitfleet.agent.sync import CrdWait
from gitfleet.load.agecrypt import AgeKey
from tests.helpers.hubs import Clock, skip_sleep


def make_agent(
    remote: Path,
    name: str,
    cache: Path,
    clock: Clock,
    cluster: InMemoryCluster,
    *,
    heartbeat: timedelta = timedelta(seconds=60),
    age_key: AgeKey | None = None,
) -> Agent:
    """The agent of cluster `name` on `remote`, its cache in `cache`, applying to `cluster`."""
    options = AgentOptions(
        version="test",
        backoff=Backoff(sleep=skip_sleep),
        crd_wait=CrdWait(sleep=skip_sleep),
        age_key=age_key,
    )
    config = AgentConfig(str(remote), name, cache, heartbeat=heartbeat)
    return Agent(config, cluster, clock=clock, options=options)

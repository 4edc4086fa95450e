"""The member agent: apply `clusters/<me>/` of the output branch to one cluster and report.

`run_once` (in `run`) is the pass: validate the directory (`desired`), record, apply in waves and
prune (`sync`, `apply`, `inventory`), compute availability (`health`), drift and diffs (`drift`)
and properties (`properties`), and build the `AgentReport` (`report`). The cluster is reached
only through the `ClusterClient` protocol (`client`): `memory.InMemoryCluster` for tests,
`kube.KubeClusterClient` (the only importer of `kubernetes`) for real clusters. Git fetch and
push around the pass are the caller's (the `gitfleet agent` command).
"""

from gitfleet.agent.client import (
    FIELD_MANAGER,
    ClusterClient,
    ClusterError,
    Conflict,
    Invalid,
    NotFound,
    ResourceInfo,
    Retryable,
    ServerError,
    Throttled,
)
from gitfleet.agent.memory import InMemoryCluster
from gitfleet.agent.report import report_changed
from gitfleet.agent.retry import Backoff, RetryingClient
from gitfleet.agent.run import AgentOptions, run_once
from gitfleet.agent.sync import CrdWait

__all__ = [
    "FIELD_MANAGER",
    "AgentOptions",
    "Backoff",
    "ClusterClient",
    "ClusterError",
    "Conflict",
    "CrdWait",
    "InMemoryCluster",
    "Invalid",
    "NotFound",
    "ResourceInfo",
    "Retryable",
    "RetryingClient",
    "ServerError",
    "Throttled",
    "report_changed",
    "run_once",
]

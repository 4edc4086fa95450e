"""`run_once`: one agent pass — read the cluster directory, apply it, prune, report.

Pure apart from the cluster client: the caller (the `gitfleet agent` loop, which owns Git) passes
the files of `clusters/<me>/` as a mapping, the output commit they come from, the previous report
and the time. A missing or invalid directory applies and prunes nothing and keeps the previous
report's output commit and placements (the last applied state), with the error in the
`gitfleet.io/DirectoryValid` condition; an unreachable API server (after retries) does the same
with `gitfleet.io/PassCompleted` False. Push the returned report when `report_changed` says so or
a heartbeat is due.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from gitfleet import __version__
from gitfleet.agent.apply import ObjectResult
from gitfleet.agent.client import ClusterClient, ClusterError
from gitfleet.agent.desired import DirectoryError, load_directory
from gitfleet.agent.inventory import record_applied_commit
from gitfleet.agent.properties import collect_properties
from gitfleet.agent.report import carry_conditions, placement_report
from gitfleet.agent.retry import Backoff, RetryingClient
from gitfleet.agent.sync import CrdWait, SyncResult, sync_directory
from gitfleet.api import (
    AgentReport,
    Condition,
    ObjectMeta,
    PlacementReport,
    PropertyValue,
    ResourceUsage,
    format_time,
)
from gitfleet.api.report import REPORT_API_VERSION
from gitfleet.load.agecrypt import AgeKey

DIRECTORY_VALID = "gitfleet.io/DirectoryValid"
PASS_COMPLETED = "gitfleet.io/PassCompleted"
_COMMIT = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})$")


@dataclass(frozen=True)
class AgentOptions:
    """Agent version, API retry policy and CRD wait (tests inject sleeps here)."""

    version: str = __version__
    backoff: Backoff = field(default_factory=Backoff)
    crd_wait: CrdWait = field(default_factory=CrdWait)
    age_key: AgeKey | None = None
    """This agent's age identity (`--age-key-file`): opens the cluster's encrypted Secrets."""


def run_once(
    client: ClusterClient,
    cluster: str,
    files: Mapping[str, bytes],
    output_commit: str,
    previous_report: AgentReport | None,
    now: datetime,
    options: AgentOptions | None = None,
) -> AgentReport:
    """Apply `clusters/<cluster>/` as of `output_commit` and return the new report."""
    if not _COMMIT.match(output_commit):
        raise ValueError(f'output commit "{output_commit}" is not a hex commit id')
    options = options or AgentOptions()
    api = RetryingClient(client, options.backoff)
    observed = _observe(api, now, previous_report)
    try:
        directory = load_directory(cluster, files, options.age_key)
    except DirectoryError as exc:
        bad = _condition(DIRECTORY_VALID, False, "DirectoryInvalid", f"{output_commit}: {exc}")
        return _keep(cluster, previous_report, now, options, observed, [bad])
    valid = _condition(
        DIRECTORY_VALID, True, "DirectoryLoaded", f"{output_commit}: the cluster directory is valid"
    )
    try:
        sync = sync_directory(api, cluster, directory, options.crd_wait)
        record_applied_commit(api, output_commit)
    except ClusterError as exc:
        down = _condition(PASS_COMPLETED, False, "ClusterUnavailable", exc.message)
        return _keep(cluster, previous_report, now, options, observed, [valid, down])
    previous = {p.key: p for p in previous_report.placements} if previous_report else {}
    placements = [
        placement_report(p, _results_of(sync, p.key), previous.get(p.key), now)
        for p in directory.index.placements
    ]
    conditions = [valid, _pass_condition(sync)]
    return _report(
        cluster, now, options, output_commit, observed, previous_report, conditions, placements
    )


def _results_of(sync: SyncResult, key: str) -> list[ObjectResult]:
    return [r for r in sync.results if r.desired.placement.key == key]


def _pass_condition(sync: SyncResult) -> Condition:
    if not sync.prune_failures:
        return _condition(PASS_COMPLETED, True, "PassCompleted", "applied and pruned")
    shown = ", ".join(
        "/".join(p for p in f.record[1:] if p) + f" ({f.message})" for f in sync.prune_failures[:5]
    )
    message = f"{len(sync.prune_failures)} object(s) could not be pruned: {shown}"
    return _condition(PASS_COMPLETED, False, "PruneFailed", message)


def _condition(type_: str, ok: bool, reason: str, message: str) -> Condition:
    return Condition(type=type_, status="True" if ok else "False", reason=reason, message=message)


Observed = tuple[dict[str, PropertyValue] | None, ResourceUsage | None]


def _observe(api: ClusterClient, now: datetime, previous: AgentReport | None) -> Observed:
    try:
        return collect_properties(api, now)
    except ClusterError:
        return (previous.properties, previous.resource_usage) if previous else (None, None)


def _keep(
    cluster: str,
    previous: AgentReport | None,
    now: datetime,
    options: AgentOptions,
    observed: Observed,
    conditions: list[Condition],
) -> AgentReport:
    commit = previous.output_commit if previous else ""
    placements = list(previous.placements) if previous else []
    return _report(cluster, now, options, commit, observed, previous, conditions, placements)


def _report(
    cluster: str,
    now: datetime,
    options: AgentOptions,
    commit: str,
    observed: Observed,
    previous: AgentReport | None,
    conditions: list[Condition],
    placements: list[PlacementReport],
) -> AgentReport:
    properties, usage = observed
    return AgentReport(
        api_version=REPORT_API_VERSION,
        kind="AgentReport",
        metadata=ObjectMeta(name=cluster),
        heartbeat_time=format_time(now),
        agent_version=options.version,
        output_commit=commit,
        conditions=carry_conditions(previous.conditions if previous else [], conditions, now),
        properties=properties,
        resource_usage=usage,
        placements=sorted(placements, key=lambda p: p.key),
    )


def report_without_output(
    client: ClusterClient,
    cluster: str,
    previous_report: AgentReport | None,
    now: datetime,
    message: str,
    options: AgentOptions | None = None,
    reason: str = "NoOutputYet",
) -> AgentReport:
    """A heartbeat report when there is nothing to apply (no output branch yet, or `reason`
    OutputVerificationFailed: an output commit without a good signature): the cluster's
    properties and the last applied state, nothing applied or pruned. The hub needs this first
    report to consider the cluster joined."""
    options = options or AgentOptions()
    observed = _observe(RetryingClient(client, options.backoff), now, previous_report)
    waiting = _condition(DIRECTORY_VALID, False, reason, message)
    return _keep(cluster, previous_report, now, options, observed, [waiting])

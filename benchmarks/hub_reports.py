"""The agent-report scenarios of the Git benchmark: a member agent's report lands on its status
branch and the hub runs a pass for it (with rollouts, most passes of a running hub are these).

A report is made as a healthy agent would make it from what the hub gave its cluster: every
placement row of `clusters/<cluster>/index.yaml` on the output tip, Applied and Available, with
that row's content hash, the output commit, and a heartbeat. It is written straight into the
bare remote as the agent's push leaves it (one commit on `gitfleet/status/<cluster>`).
The report is written as the agent writes it (the validated `AgentReport`, every field, as JSON
text: `report_text`). Scenarios: the first report of a cluster (a different cluster each trial); a
heartbeat (the first trial's cluster reports again 30 s later, only its heartbeat moved: the hub
records it later, `clusterStatusRecordInterval`, so the pass makes no commit); a heartbeat recorded
(each first-report cluster reports 5 min after its first report: the interval is reached, the status
file is written); and one poll of a running fleet: a tenth of the clusters report for the first time
in one pass (other clusters each trial), then the first trial's clusters' heartbeats arrive together
in one pass (a hub's steady state: most of its passes).
Called by `bench_hub`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from benchmarks.generate import GeneratedFleet
from benchmarks.hub_checks import OUTPUT_REF, git, resolve
from gitfleet.api.report import AgentReport
from gitfleet.load.report import REPORT_FILE, report_text, status_branch

ReportEdit = Callable[[Path, int], None]
"""(bare remote, trial) -> nothing: writes one agent's report into the remote."""


def _condition(kind: str, reason: str, at: str) -> dict[str, str]:
    return {"type": kind, "status": "True", "reason": reason, "lastTransitionTime": at}


def report_of(
    index: dict[str, Any], cluster: str, output: str, at: str, since: str
) -> dict[str, Any]:
    """A healthy agent's report of `index` (the cluster's ClusterIndex document) with its
    heartbeat `at`; its conditions became True at `since` (an agent keeps a condition's
    transition time while its status stays)."""
    applied = _condition("Applied", "AppliedWorkSuccessfully", since)
    available = _condition("Available", "AvailableWorkSuccessfully", since)
    rows = [
        {
            "key": row["key"],
            "name": row["name"],
            **({"namespace": row["namespace"]} if row.get("namespace") else {}),
            "resourceSnapshotIndex": row["resourceSnapshotIndex"],
            "contentHash": row.get("contentHash", ""),
            "conditions": [applied, available],
        }
        for row in index.get("placements") or []
    ]
    return {
        "apiVersion": "gitfleet.io/v1alpha1",
        "kind": "AgentReport",
        "metadata": {"name": cluster},
        "heartbeatTime": at,
        "agentVersion": "bench",
        "outputCommit": output,
        "placements": rows,
    }


def push_report(remote: Path, cluster: str, at: str, since: str) -> None:
    """Commit `cluster`'s report on its status branch in `remote`, as its agent's push would."""
    output = resolve(remote, OUTPUT_REF) or ""
    index = yaml.safe_load(git(remote, "show", f"{output}:clusters/{cluster}/index.yaml"))
    report = AgentReport.model_validate(report_of(index or {}, cluster, output, at, since))
    data = report_text(report)  # the bytes the agent pushes
    blob = git(remote, "hash-object", "-w", "--stdin", stdin=data).strip()
    listing = f"100644 blob {blob}\t{REPORT_FILE}\n".encode()
    tree = git(remote, "mktree", stdin=listing).strip()
    ref = f"refs/heads/{status_branch(cluster)}"
    parent = resolve(remote, ref)
    parents = ["-p", parent] if parent else []
    commit = git(remote, "commit-tree", tree, *parents, stdin=b"report\n").strip()
    git(remote, "update-ref", ref, commit)


def _at(now: str, seconds: int) -> str:
    moment = datetime.fromisoformat(now.replace("Z", "+00:00")) - timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def report_scenarios(fleet: GeneratedFleet, now: str) -> list[tuple[str, ReportEdit]]:
    """(name, edit) of the report scenarios, in run order. Heartbeats come before `now` (the
    hub's clock), later each trial."""
    clusters = [c.name for c in fleet.clusters]
    since = _at(now, 900)

    def first_report(remote: Path, k: int) -> None:
        push_report(remote, clusters[(k + 1) % len(clusters)], _at(now, 600), since)

    def heartbeat(remote: Path, k: int) -> None:  # the cluster of the first trial above
        push_report(remote, clusters[1 % len(clusters)], _at(now, 570 - k), since)

    def recorded(remote: Path, k: int) -> None:  # the cluster of trial k above, 5 min on
        push_report(remote, clusters[(k + 1) % len(clusters)], _at(now, 300), since)

    polled = max(1, len(clusters) // 10)  # from the end: clear of the single-cluster trials

    def first_poll(remote: Path, k: int) -> None:
        for cluster in clusters[len(clusters) - polled * (k + 1) :][:polled]:
            push_report(remote, cluster, _at(now, 600), since)

    def heartbeat_poll(remote: Path, k: int) -> None:  # first_poll's first trial, 2 min on
        for cluster in clusters[len(clusters) - polled :]:
            push_report(remote, cluster, _at(now, 480 - k), since)

    return [
        ("one agent's first report", first_report),
        ("one agent's heartbeat", heartbeat),
        ("one agent's heartbeat, recorded (5 min on)", recorded),
        (f"one poll: {polled} agents' first reports", first_poll),
        (f"one poll: {polled} agents' heartbeats", heartbeat_poll),
    ]

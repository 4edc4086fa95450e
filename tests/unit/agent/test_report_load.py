"""The AgentReport format: round trip through gitfleet.load.report, rejection rules, change test."""

from __future__ import annotations

from datetime import timedelta

import pytest

from gitfleet.agent.memory import InMemoryCluster
from gitfleet.agent.report import report_changed
from gitfleet.agent.run import run_once
from gitfleet.load.report import read_agent_report, status_branch
from gitfleet.load.yamlio import dump_yaml

from .conftest import COMMIT, NOW, cm, deployment, directory, ns, options


def a_report(cluster_name: str = "c1"):  # type: ignore[no-untyped-def]
    cluster = InMemoryCluster()
    strategy = {"comparisonOption": "FullComparison"}
    files = directory(
        cluster_name, {"app": [ns("app"), cm("a"), deployment("web")]}, strategy=strategy
    )
    return run_once(cluster, cluster_name, files, COMMIT, None, NOW, options())


def test_round_trip_through_hub_parser() -> None:
    report = a_report()
    data = dump_yaml(report.dump()).encode()
    parsed, errors = read_agent_report(data, "c1", branch=status_branch("c1"))
    assert errors == [] and parsed == report
    assert dump_yaml(parsed.dump()).encode() == data


@pytest.mark.parametrize(
    ("cluster", "branch", "text", "message"),
    [
        ("c2", None, None, 'is a report of cluster "c1", expected "c2"'),
        ("c1", "gitfleet/status/c2", None, "must come from branch gitfleet/status/c1"),
        (
            "c1",
            None,
            "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata: {name: c1}\n",
            "must be an AgentReport",
        ),
        (
            "c1",
            None,
            "apiVersion: gitfleet.io/v1alpha1\nkind: AgentReport\nmetadata: {name: c1}\nagentVersion: x\n",
            "required field is missing",
        ),
        (
            "c1",
            None,
            "apiVersion: gitfleet.io/v1alpha1\nkind: AgentReport\nmetadata: {name: c1}\nagentVersion: x\nheartbeatTime: '2026-01-01T00:00:00Z'\noutputCommit: nothex\n",
            "hex",
        ),
        ("c1", None, "a: 1\n---\nb: 2\n", "exactly one document"),
        ("c1", None, "x: !!python/object:os.system x\n", "tag"),
    ],
)
def test_bad_reports_rejected(
    cluster: str, branch: str | None, text: str | None, message: str
) -> None:
    data = text.encode() if text is not None else dump_yaml(a_report().dump()).encode()
    parsed, errors = read_agent_report(data, cluster, branch=branch)
    assert parsed is None and errors and message in str(errors[0])


def test_report_changed_ignores_heartbeat_and_observation_times() -> None:
    cluster = InMemoryCluster()
    files = directory(
        "c1", {"app": [ns("app"), cm("a")]}, strategy={"comparisonOption": "FullComparison"}
    )
    first = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    later = run_once(cluster, "c1", files, COMMIT, first, NOW + timedelta(minutes=1), options())
    assert later.heartbeat_time != first.heartbeat_time
    assert not report_changed(first, later)
    assert report_changed(None, later)
    cluster.patch(
        "v1", "ConfigMap", "app", "a", {"data": {"k": "edited"}}, field_manager="kubectl-edit"
    )
    cluster.apply(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}},
        field_manager="t",
        force=False,
        dry_run=False,
    )
    changed = run_once(cluster, "c1", files, COMMIT, later, NOW + timedelta(minutes=2), options())
    assert report_changed(later, changed)


def test_message_fields_are_capped_in_size() -> None:
    from gitfleet.load.report import MAX_MESSAGE_CHARS

    body = a_report().dump()
    body["conditions"][0]["message"] = "x" * 100_000
    data = dump_yaml(body).encode()
    parsed, errors = read_agent_report(data, "c1", branch=status_branch("c1"))
    assert errors == [] and parsed is not None
    message = parsed.conditions[0].message
    assert len(message) < MAX_MESSAGE_CHARS + 100 and message.endswith("characters)")

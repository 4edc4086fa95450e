"""Agents write `report.yaml` as JSON text (`report_text`); the hub reads it with `json.loads`
and gets what the YAML reader gets (the reports of older agents are YAML and read as before).
A JSON report the fast read does not take, or that is not a valid report of the cluster, is
read as YAML, so every error still names its line. A heartbeat moves one line of the JSON text,
which the hub reads alone, as it does for YAML reports."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.load import report as report_module
from gitfleet.load.jsontext import json_text
from gitfleet.load.report import read_agent_report, report_text, reread_agent_report, status_branch
from gitfleet.load.yamlio import dump_yaml, parse_documents

from .test_report_heartbeat import _read
from .test_report_load import a_report

BRANCH = status_branch("c1")
OLD = ' "heartbeatTime": "2026-01-01T00:00:00Z",'
NEW = ' "heartbeatTime": "2026-01-01T00:00:30Z",'


def _json() -> str:
    report = a_report()
    assert report is not None
    text = report_text(report).decode()
    line = next(line for line in text.split("\n") if line.startswith(' "heartbeatTime": '))
    return text.replace(line, OLD)


def _yaml_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts `read_agent_report` hands to the YAML reader from now on."""
    seen: list[str] = []

    def counted(file: str, text: str, *args: Any) -> Any:
        seen.append(text)
        return parse_documents(file, text, *args)

    monkeypatch.setattr(report_module, "parse_documents", counted)
    return seen


def test_the_agents_json_reads_as_its_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    report = a_report()
    assert report is not None
    data = report_text(report)
    assert data.startswith(b'{\n "agentVersion": ') and data.endswith(b"}\n")
    yaml_reads = _yaml_reads(monkeypatch)
    parsed, errors = read_agent_report(data, "c1", branch=BRANCH)
    assert yaml_reads == []  # the fast read took it
    assert errors == [] and parsed == report
    as_yaml, _ = read_agent_report(dump_yaml(report.dump()).encode(), "c1", branch=BRANCH)
    assert yaml_reads and as_yaml == parsed
    assert report_text(parsed) == data


@pytest.mark.parametrize(
    ("cluster", "edit", "message", "line"),
    [
        ("c2", None, 'is a report of cluster "c1", expected "c2"', 1),
        ("c1", ("outputCommit", "nothex"), "hex", "outputCommit"),
        ("c1", ("agentVersion", 1.5), "must be a string, got a number", "agentVersion"),
        ("c1", ("kind", "Fleet"), 'unknown field "agentVersion"', "agentVersion"),
    ],
)
def test_a_bad_json_report_is_read_as_yaml(
    cluster: str, edit: tuple[str, Any] | None, message: str, line: int | str
) -> None:
    """Errors come from the YAML reader: they name the line of the field."""
    body = a_report().dump()
    if edit is not None:
        body[edit[0]] = edit[1]
    text = json_text(body)
    parsed, errors = read_agent_report(text.encode(), cluster, branch=status_branch(cluster))
    assert parsed is None and errors and message in str(errors[0])
    lines = text.split("\n")
    want = (
        line
        if isinstance(line, int)
        else 1 + next(i for i, row in enumerate(lines) if row.startswith(f' "{line}": '))
    )
    assert errors[0].line == want


def test_long_messages_are_cut_on_the_fast_read_too(monkeypatch: pytest.MonkeyPatch) -> None:
    body = a_report().dump()
    body["conditions"][0]["message"] = "x" * 100_000
    yaml_reads = _yaml_reads(monkeypatch)
    parsed, errors = read_agent_report(json_text(body).encode(), "c1")
    assert yaml_reads == [] and errors == [] and parsed is not None
    as_yaml, _ = read_agent_report(dump_yaml(body).encode(), "c1")
    assert parsed == as_yaml and len(parsed.conditions[0].message) < 2200


@pytest.mark.parametrize(
    ("case", "whole"),
    [
        ("heartbeat", False),
        ("heartbeat and another line", True),
        ("bad time", True),
        ("no comma", True),
    ],
)
def test_a_json_heartbeat_reads_one_line(
    case: str, whole: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _json()
    last = reread_agent_report(text.encode(), "c1", BRANCH, None)
    assert last.report is not None and last.problems == ()
    edits = {
        "heartbeat": text.replace(OLD, NEW),
        "heartbeat and another line": text.replace(OLD, NEW).replace(
            '"agentVersion": "', '"agentVersion": "x', 1
        ),
        "bad time": text.replace(OLD, OLD.replace("01-01T", "13-01T")),
        "no comma": text.replace(OLD, NEW.rstrip(",")),
    }
    data = edits[case].encode()
    got, read_whole = _read(data, last, monkeypatch)
    assert read_whole is whole
    report, problems = read_agent_report(data, "c1", branch=BRANCH)
    assert (got.report, got.problems) == (report, tuple(problems))
    if not whole:
        assert got.beat_line == text.split("\n").index(OLD)
        assert got.report is not None and got.report.heartbeat_time == "2026-01-01T00:00:30Z"

"""`reread_agent_report`: a report that differs from the cluster's last one only in the value
of its `heartbeatTime` line is the last report with the new heartbeat, without reading it
whole; anything else (another line, a heartbeat written another way, a bad time, a line that
only looks like the heartbeat) is read whole. Either way the result equals a whole read."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.load import report as report_module
from gitfleet.load.report import ReadReport, read_agent_report, reread_agent_report, status_branch
from gitfleet.load.yamlio import dump_yaml
from reconciler.rollview import report_entries

from .test_report_load import a_report

OLD = "heartbeatTime: '2026-01-01T00:00:00Z'"
NEW = "heartbeatTime: '2026-01-01T00:00:30Z'"


def _text() -> str:
    text = dump_yaml(a_report().dump())
    assert OLD.split(":")[0] + ":" in text
    return text.replace(text[text.index("heartbeatTime:") :].split("\n")[0], OLD)


def _read(data: bytes, last: ReadReport | None, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    whole: list[bytes] = []
    real = report_module.read_agent_report

    def counted(data: bytes, cluster: str, **kwargs: Any) -> Any:
        whole.append(data)
        return real(data, cluster, **kwargs)

    monkeypatch.setattr(report_module, "read_agent_report", counted)
    got = reread_agent_report(data, "c1", status_branch("c1"), last)
    monkeypatch.undo()
    return got, bool(whole)


def _changed(text: str, case: str) -> str:
    edits = {
        "heartbeat": text.replace(OLD, NEW),
        "heartbeat and another line": text.replace(OLD, NEW).replace(
            "agentVersion:", "agentVersion: x", 1
        ),
        "plain heartbeat": text.replace(OLD, NEW.replace("'", "")),
        "bad time": text.replace(OLD, "heartbeatTime: '2026-13-01T00:00:30Z'"),
        "anchored heartbeat": text.replace(OLD, "heartbeatTime: &a '2026-01-01T00:00:30Z'"),
        "comment after it": text.replace(OLD, NEW + " # x"),
        "same bytes": text,
    }
    return edits[case]


@pytest.mark.parametrize(
    ("case", "whole", "line_known"),
    [
        ("heartbeat", False, True),
        ("same bytes", False, False),
        ("heartbeat and another line", True, False),
        ("plain heartbeat", True, False),
        ("bad time", True, False),
        ("anchored heartbeat", True, False),
        ("comment after it", True, False),
    ],
)
def test_only_a_heartbeat_skips_the_whole_read(
    case: str, whole: bool, line_known: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _text()
    last = reread_agent_report(text.encode(), "c1", status_branch("c1"), None)
    assert last.report is not None and last.beat_line is None  # located lazily
    data = _changed(text, case).encode()
    got, read_whole = _read(data, last, monkeypatch)
    assert read_whole is whole
    report, problems = read_agent_report(data, "c1", branch=status_branch("c1"))
    assert (got.report, got.problems) == (report, tuple(problems))
    assert got.beat_line == (text.split("\n").index(OLD) if line_known else None)


def test_a_line_that_only_looks_like_the_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    """The heartbeat's line comes from the YAML structure: a look-alike line inside a quoted
    message (at column 0) is not it, so changing it reads the report whole."""
    text = _text().replace("agentVersion: test", f'agentVersion: "v1\n{OLD}\n  x"', 1)
    last = reread_agent_report(text.encode(), "c1", status_branch("c1"), None)
    real_at = report_module._beat_line(text.encode())
    assert last.report is not None and real_at is not None
    assert text.split("\n")[real_at] == OLD and text.count(OLD) == 2
    lines = text.split("\n")
    fake_at = next(i for i, line in enumerate(lines) if line == OLD and i != real_at)
    lines[fake_at] = NEW
    data = "\n".join(lines).encode()
    got, read_whole = _read(data, last, monkeypatch)
    assert read_whole and got.report is not None
    assert got.report.heartbeat_time == last.report.heartbeat_time
    assert got.report.agent_version != last.report.agent_version


def test_a_heartbeat_keeps_the_rollouts_report_entries() -> None:
    """The report with a new heartbeat shares its placements with the last one, so the
    rollout's per-cluster report entries are the very same (the rollout of placements bound
    to that cluster is not looked at again); another report gets its own."""
    text = _text()
    last = reread_agent_report(text.encode(), "c1", status_branch("c1"), None)
    beat = reread_agent_report(text.replace(OLD, NEW).encode(), "c1", status_branch("c1"), last)
    other = reread_agent_report(text.encode(), "c1", status_branch("c1"), None)
    assert last.report is not None and beat.report is not None and other.report is not None
    before = report_entries({"c1": last.report})["c1"]
    assert report_entries({"c1": beat.report})["c1"] is before
    again = report_entries({"c1": other.report})["c1"]
    assert again == before and again is not before


def test_later_heartbeats_use_the_located_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once located, the line is kept: the next heartbeat reads it alone again, and any other
    change after it (here the agent's version) reads the report whole."""
    text = _text()
    last = reread_agent_report(text.encode(), "c1", status_branch("c1"), None)
    first, _ = _read(text.replace(OLD, NEW).encode(), last, monkeypatch)
    assert first.beat_line == text.split("\n").index(OLD)
    later = text.replace(OLD, "heartbeatTime: '2026-01-01T00:01:00Z'")
    second, whole = _read(later.encode(), first, monkeypatch)
    assert not whole and second.beat_line == first.beat_line
    assert second.report is not None and second.report.heartbeat_time == "2026-01-01T00:01:00Z"
    other = later.replace("agentVersion: test", "agentVersion: v2")
    third, whole = _read(other.encode(), second, monkeypatch)
    assert whole and third.report is not None and third.report.agent_version == "v2"

"""Hub side of agent reports: parse and validate one report file for an expected cluster.

Each agent pushes `report.yaml` (one `AgentReport` document) to its own branch
`gitfleet/status/<cluster>`, written as JSON text (`report_text`; JSON is YAML).
`read_agent_report` reads such a text with `json.loads` (`jsontext.json_body`: only when that
gives what the YAML reader would) and any other with the safe YAML reader, validates the kind,
and refuses a report whose `metadata.name` is another cluster, or that came from a branch
other than the cluster's own; `message` fields are cut to MAX_MESSAGE_CHARS; every problem is a
`FleetError` naming the file, line, field and rule. `read_status_report` reads one status
commit's report (a symbolic link is an error, never followed) and reuses the last one on a
heartbeat. Called by the hub loop when it gathers reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from gitfleet.api.conditions import Timestamp
from gitfleet.api.errors import FleetError
from gitfleet.api.limits import Limits
from gitfleet.api.registry import parse_object
from gitfleet.api.report import AgentReport
from gitfleet.load.jsontext import json_body, json_text
from gitfleet.load.yamlio import decode_text, locate, parse_documents, top_level_line
from gitfleet.repo.signatures import CommitFiles, LinkedFile

REPORT_FILE = "report.yaml"
MAX_MESSAGE_CHARS = 2048
"""Longest `message` the hub keeps from a report (status and commits quote them); longer ones
are cut with a note, so one agent cannot bloat every status file."""
_CUT = " ... (cut by the hub: longer than {} characters)"
STATUS_BRANCH_PREFIX = "gitfleet/status/"
_BEAT = re.compile(
    rb"heartbeatTime: '(?P<yaml>[0-9A-Za-z:.+-]{1,40})'"
    rb'| "heartbeatTime": "(?P<json>[0-9A-Za-z:.+-]{1,40})",'
)
"""The line of the report's top-level `heartbeatTime` as agents write it: one quoted scalar
(YAML, older agents) or one key of a JSON object at indent 1, not its last (`report_text`: a
key follows it), so the line is whole JSON only with its comma."""
_STAMP: TypeAdapter[str] = TypeAdapter(Timestamp)
_MAX_BYTES = Limits().max_file_bytes
"""The default file size limit `read_agent_report` applies (made once, not per report)."""


@dataclass(frozen=True)
class ReadReport:
    """A report file as read: its bytes, the report or the problems, and the 0-based line
    that holds its top-level `heartbeatTime: '<time>'` and nothing else (None: not located:
    it is, lazily, by the first report that differs on one line only)."""

    data: bytes
    report: AgentReport | None
    problems: tuple[FleetError, ...]
    beat_line: int | None = None


_LINKED = "is a symbolic link, not a report (never followed): agents commit the file itself"


def status_branch(cluster: str) -> str:
    """The branch the agent of `cluster` pushes its report to."""
    return STATUS_BRANCH_PREFIX + cluster


def report_where(file: str, branch: str | None) -> str:
    """Where a report's errors point: `<branch>:<file>` on a status branch, else the file."""
    return f"{branch}:{file}" if branch else file


def report_text(report: AgentReport) -> bytes:
    """The bytes of `report.yaml` as agents write it: JSON text (`jsontext.json_text`), which
    the hub reads ~5x faster than YAML (parse and validation) and any YAML reader still reads."""
    return json_text(report.dump()).encode("utf-8")


def read_agent_report(
    data: bytes,
    cluster: str,
    *,
    file: str = REPORT_FILE,
    branch: str | None = None,
    limits: Limits | None = None,
) -> tuple[AgentReport | None, list[FleetError]]:
    """The validated report of `cluster`, or None and the errors."""
    limits = limits or Limits()
    where = report_where(file, branch)
    if branch is not None and branch != status_branch(cluster):
        message = f'a report of cluster "{cluster}" must come from branch {status_branch(cluster)}'
        return None, [FleetError(where, None, "", message)]
    if len(data) > limits.max_file_bytes:
        return None, [
            FleetError(
                where,
                None,
                "",
                f"file is larger than {limits.max_file_bytes} bytes (limits.maxFileBytes)",
            )
        ]
    text, error = decode_text(where, data)
    if text is None:
        return None, [error] if error else []
    body = json_body(text, limits)
    fast = _valid(body, cluster) if body is not None else None
    if fast is not None:
        return fast, []
    docs, errors = parse_documents(where, text, limits)
    if errors:
        return None, errors
    if len(docs) != 1:
        return None, [
            FleetError(where, None, "", f"must hold exactly one document, found {len(docs)}")
        ]
    doc = docs[0]
    _cap_messages(doc.body)
    model, issues = parse_object(doc.body)
    if model is None:
        return None, [
            FleetError(
                where, locate(text, doc.doc, i.field) or doc.line, i.field, i.message, doc.doc
            )
            for i in issues
        ]
    if not isinstance(model, AgentReport):
        return None, [FleetError(where, doc.line, "kind", "must be an AgentReport", doc.doc)]
    if model.name != cluster:
        message = f'is a report of cluster "{model.name}", expected "{cluster}"'
        return None, [FleetError(where, doc.line, "metadata.name", message, doc.doc)]
    return model, []


def _valid(body: dict[str, Any], cluster: str) -> AgentReport | None:
    """The report `body` (read as JSON) holds when it is a valid report of `cluster`; None
    otherwise: the text is read again as YAML, whose errors name lines."""
    _cap_messages(body)
    model, _ = parse_object(body)  # None exactly when there are issues
    return model if isinstance(model, AgentReport) and model.name == cluster else None


def reread_agent_report(
    data: bytes, cluster: str, branch: str, last: ReadReport | None
) -> ReadReport:
    """`read_agent_report`, or, when `data` is `last` (the cluster's previous report) but for
    the value on its `heartbeatTime` line, `last`'s report with the new heartbeat: an agent's
    heartbeat rewrites one line of a report of ~20 KB, and reading only that line keeps a poll
    of many agents cheap. The line must be the one the YAML structure of `last` puts the
    top-level `heartbeatTime` on (located once, the first time only that line differs), so no
    other change can pass for a heartbeat."""
    again = _with_heartbeat(data, last) if last is not None else None
    if again is not None:
        return again
    report, problems = read_agent_report(data, cluster, branch=branch)
    return ReadReport(data, report, tuple(problems))


def read_status_report(
    files: CommitFiles, cluster: str, commit: str, last: ReadReport | None
) -> ReadReport | None:
    """The report on `cluster`'s status commit (None when it holds no report file; when the
    file is a symbolic link, no report and an error naming the file: a link is never followed);
    `last`: the cluster's report read before (a heartbeat reads one line)."""
    branch = status_branch(cluster)
    try:
        data = files.read(commit, REPORT_FILE)
    except LinkedFile:
        return ReadReport(
            b"", None, (FleetError(report_where(REPORT_FILE, branch), None, "", _LINKED),)
        )
    return None if data is None else reread_agent_report(data, cluster, branch, last)


def _beat_line(data: bytes) -> int | None:
    """The 0-based line of the top-level `heartbeatTime` key when it holds the key and its
    single-quoted value alone (as agents write it), else None."""
    line = top_level_line(data.decode("utf-8"), "heartbeatTime")
    lines = data.split(b"\n")
    if line is None or line > len(lines) or not _BEAT.fullmatch(lines[line - 1]):
        return None
    return line - 1


def _with_heartbeat(data: bytes, last: ReadReport) -> ReadReport | None:
    """`last` with the heartbeat of `data` when nothing else differs (see above), else None."""
    if last.report is None or len(data) > _MAX_BYTES:
        return None
    if data == last.data:
        return last
    old, new = last.data.split(b"\n"), data.split(b"\n")
    if len(old) != len(new):
        return None
    at = last.beat_line
    if at is None:  # the first heartbeat after a whole read: the one line that differs
        differ = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a is not b and a != b]
        if len(differ) != 1 or _beat_line(last.data) != differ[0]:
            return None
        at = differ[0]
    elif old[:at] != new[:at] or old[at + 1 :] != new[at + 1 :]:
        return None
    found = _BEAT.fullmatch(new[at])
    if found is None:
        return None
    try:
        beat = _STAMP.validate_python((found["yaml"] or found["json"]).decode("ascii"))
    except ValidationError:
        return None  # read whole: the error names the field
    report = last.report.model_copy(update={"heartbeat_time": beat})
    return ReadReport(data, report, (), at)


def _cap_messages(body: dict[str, Any]) -> None:
    """Cut every `message` string of the report to MAX_MESSAGE_CHARS (in place, no recursion)."""
    pending: list[Any] = [body]
    while pending:
        node = pending.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in list(items):
            if isinstance(value, dict | list):
                pending.append(value)
            elif key == "message" and isinstance(value, str) and len(value) > MAX_MESSAGE_CHARS:
                node[key] = value[:MAX_MESSAGE_CHARS] + _CUT.format(MAX_MESSAGE_CHARS)

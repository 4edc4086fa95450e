"""Hub side of agent reports: parse and validate one report file for an expected cluster.

Each agent pushes `report.yaml` (one `AgentReport` document) to its own branch
`gitfleet/status/<cluster>`. `read_agent_report` decodes the bytes with the safe YAML reader,
validates the kind, and refuses a report whose `metadata.name` is another cluster, or that came
from a branch other than the cluster's own; `message` fields are cut to MAX_MESSAGE_CHARS; every
problem is a `FleetError` naming the file,
line, field and rule. Called by the hub loop when it gathers reports.
"""

from __future__ import annotations

from typing import Any

from gitfleet.api.errors import FleetError
from gitfleet.api.limits import Limits
from gitfleet.api.registry import parse_object
from gitfleet.api.report import AgentReport
from gitfleet.load.yamlio import decode_text, locate, parse_documents

REPORT_FILE = "report.yaml"
MAX_MESSAGE_CHARS = 2048
"""Longest `message` the hub keeps from a report (status and commits quote them); longer ones
are cut with a note, so one agent cannot bloat every status file."""
_CUT = " ... (cut by the hub: longer than {} characters)"
STATUS_BRANCH_PREFIX = "gitfleet/status/"


def status_branch(cluster: str) -> str:
    """The branch the agent of `cluster` pushes its report to."""
    return STATUS_BRANCH_PREFIX + cluster


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
    where = f"{branch}:{file}" if branch else file
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

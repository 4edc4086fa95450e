"""`LogEntry`: one commit as `gitfleet history` shows it, parsed from one `git log` format.

`Mirror.log` runs `git log` with `log_args` and turns its output into entries with
`parse_log` (the trailers parsed by `trailers.parse_trailers`). Called by `gitfleet.repo.mirror`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gitfleet.repo.trailers import parse_trailers

_LOG_FIELDS = 7
_FORMAT = "--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%s%x00%B"


@dataclass(frozen=True)
class LogEntry:
    """One commit as `gitfleet history` shows it."""

    commit: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    author_date: str
    """Strict ISO 8601, as recorded."""
    subject: str
    message: str
    trailers: Mapping[str, list[str]] = field(default_factory=dict)


def log_args(max_count: int | None) -> list[str]:
    """`git log` options that print what `parse_log` reads (at most `max_count` commits)."""
    args = ["log", "-z", _FORMAT, "--no-color"]
    return args + ([f"--max-count={int(max_count)}"] if max_count is not None else [])


def parse_log(raw: bytes) -> list[LogEntry]:
    fields = raw.decode("utf-8", "replace").split("\0")
    entries: list[LogEntry] = []
    for start in range(0, len(fields) - _LOG_FIELDS + 1, _LOG_FIELDS):
        commit, parents, name, email, date, subject, body = fields[start : start + _LOG_FIELDS]
        entries.append(
            LogEntry(
                commit=commit.strip(),
                parents=tuple(parents.split()),
                author_name=name,
                author_email=email,
                author_date=date,
                subject=subject,
                message=body,
                trailers=parse_trailers(body),
            )
        )
    return entries

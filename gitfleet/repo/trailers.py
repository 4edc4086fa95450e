"""Git commit-message trailers (`Key: value` lines in the last paragraph) for reconciler commits.

`format_trailers` renders a mapping such as `{"Gitfleet-Source": sha, "Gitfleet-Placement":
[...]}` into trailer lines, `compose_message` builds a whole commit message (subject, optional
body, trailer block) and `parse_trailers` reads them back, following Git's rules: the trailer
block is the last paragraph, never the subject paragraph, every line is `Key: value` (or an
indented continuation line). Called by the reconciler loop (writing) and `gitfleet history`
(reading, through `Mirror.log`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
_TRAILER_LINE = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*:[ \t]*(.*)")

TrailerValues = str | Sequence[str]


def format_trailers(trailers: Mapping[str, TrailerValues]) -> str:
    """Render `trailers` as `Key: value` lines (one per value, in the given order).

    Keys must be token-like (`Gitfleet-Source`); values must be single-line. Empty values are
    skipped. Raises ValueError otherwise. Returns "" for no trailers, else text ending in "\\n".
    """
    lines: list[str] = []
    for key, values in trailers.items():
        if not _KEY.fullmatch(key):
            raise ValueError(f"invalid trailer key {key!r}")
        for value in [values] if isinstance(values, str) else list(values):
            text = value.strip()
            if "\n" in text or "\r" in text:
                raise ValueError(f"trailer {key} has a multi-line value")
            if text:
                lines.append(f"{key}: {text}")
    return "".join(f"{line}\n" for line in lines)


def compose_message(
    subject: str, body: str = "", trailers: Mapping[str, TrailerValues] | None = None
) -> str:
    """A full commit message: subject line, blank line, body, blank line, trailer block."""
    title = " ".join(subject.split())
    if not title:
        raise ValueError("commit subject is empty")
    parts = [title]
    if body.strip():
        parts.append(body.strip("\n"))
    block = format_trailers(trailers or {})
    if block:
        parts.append(block.rstrip("\n"))
    return "\n\n".join(parts) + "\n"


def parse_trailers(message: str) -> dict[str, list[str]]:
    """The trailers of a commit message: key -> values in order of appearance.

    Only the last paragraph counts, and only when it is not the first one (the subject) and
    every non-comment line in it is a trailer or an indented continuation of one.
    """
    paragraphs = _paragraphs(message)
    if len(paragraphs) < 2:
        return {}
    parsed: list[tuple[str, str]] = []
    for line in paragraphs[-1]:
        if line.startswith("#"):
            continue
        if line[:1] in (" ", "\t") and parsed:
            key, value = parsed[-1]
            parsed[-1] = (key, f"{value} {line.strip()}".strip())
            continue
        match = _TRAILER_LINE.fullmatch(line)
        if match is None:
            return {}
        parsed.append((match.group(1), match.group(2).strip()))
    result: dict[str, list[str]] = {}
    for key, value in parsed:
        result.setdefault(key, []).append(value)
    return result


def _paragraphs(message: str) -> list[list[str]]:
    """Non-empty paragraphs (runs of non-blank lines) of `message`, without trailing spaces."""
    paragraphs: list[list[str]] = []
    current: list[str] = []
    for raw in message.splitlines():
        line = raw.rstrip()
        if line:
            current.append(line)
        elif current:
            paragraphs.append(current)
            current = []
    if current:
        paragraphs.append(current)
    return paragraphs

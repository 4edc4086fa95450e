"""YAML event stream with recovery: one syntax error costs one document, not the whole file.

`read_events(text)` parses with libyaml's event parser (`yaml.CParser`; the pure-Python parser
when libyaml is absent) and yields `Item`s: events tagged with their 0-based document index and
the absolute line offset, or `Fault`s. Events are used instead of composed nodes because
libyaml's node composer recurses in C and crashes on very deep nesting; the event parser is a
state machine. After a syntax error the stream resumes at the next `---` line (a document marker
ends any scalar, so this is safe). Characters YAML forbids (control characters) are found up
front, replaced for parsing, and reported as a fault of the document that holds them.
When libyaml refuses a document (a syntax error, or one of its own built-in limits such as its
maximum flow nesting, which it can hit while scanning ahead before emitting a single event of
the document), that document alone is read again with the pure-Python reference parser, so
gitfleet's own rules (depth, node count; see `yamlbuild`) report first with their field path;
parsing then goes back to libyaml at the next document.
Called by `gitfleet.load.yamlbuild` and `gitfleet.load.yamlio.locate`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import yaml
from yaml.events import DocumentEndEvent, DocumentStartEvent, Event

_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_DOC_START = re.compile(r"---(?:[ \t\r\n\x85\u2028\u2029]|$)")
_FORBIDDEN = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class _PyParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    """The pure-Python event parser, used only when PyYAML was built without libyaml."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)


def _cparser() -> Any:
    try:
        from yaml import cyaml
    except ImportError:  # pragma: no cover - libyaml is part of the supported install
        return None
    return getattr(cyaml, "CParser", None)


_Parser: Any = _cparser() or _PyParser


def mark_line(event: Event) -> int:
    """0-based line of an event's start (marks are always set by both parsers)."""
    mark = event.start_mark
    return int(mark.line) if mark is not None else 0


class Item(NamedTuple):
    """One parser event of document `doc`; marks are relative to line `offset` (0-based)."""

    doc: int
    event: Event
    offset: int


@dataclass(frozen=True)
class Fault:
    """A document that could not be read. `fatal` faults end the current document's events."""

    doc: int | None
    line: int | None
    """1-based absolute line, when known."""
    message: str
    fatal: bool


def read_events(text: str) -> Iterator[Item | Fault]:
    """Every event of every document of `text`, with faults in between (see module doc)."""
    starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
    bad = {_line_of(starts, m.start()): ord(m.group()) for m in _FORBIDDEN.finditer(text)}
    clean = _FORBIDDEN.sub(" ", text) if bad else text
    reported: set[int] = set()
    doc, first_line, parser, refused = -1, 0, _Parser, None
    while True:
        state = _Chunk(doc, doc_start=first_line, next_start=first_line, refused=refused)
        chunk = clean[starts[first_line] :]
        yield from _parse_chunk(chunk, first_line, state, bad, reported, parser)
        doc, parser, refused = state.doc, _Parser, None
        if state.retry_line is not None:
            first_line, parser, refused = state.retry_line, _PyParser, state.refused
            continue
        if state.next_line is not None:
            first_line = max(state.next_line, first_line + 1)
            if first_line >= len(starts):
                break
            continue
        if state.fault_line is None:
            break
        resume = _resume_line(clean, starts, state.fault_line, state.fault_column, first_line)
        if resume is None:
            break
        first_line = resume
    for line in sorted(set(bad) - reported):
        yield Fault(None, line + 1, _forbidden_message(bad[line]), False)


@dataclass
class _Chunk:
    doc: int
    in_doc: bool = False
    doc_start: int = 0
    """Absolute 0-based line of the current document's start."""
    next_start: int = 0
    """Absolute 0-based line where the next document's text can begin."""
    fault_line: int | None = None
    fault_column: int = 0
    refused: tuple[int, int, str] | None = None
    """libyaml's own error (absolute line, column, message) for the document being re-read."""
    retry_line: int | None = None
    """Set when libyaml failed: re-read from this line with the reference parser."""
    next_line: int | None = None
    """Set when the reference parser finished its one document: libyaml resumes here."""


def _parse_chunk(
    text: str,
    offset: int,
    state: _Chunk,
    bad: dict[int, int],
    reported: set[int],
    parser_class: Any,
) -> Iterator[Item | Fault]:
    parser = parser_class(text)
    fallback = parser_class is _PyParser and _Parser is not _PyParser
    try:
        while (event := parser.get_event()) is not None:
            kind = type(event)
            if kind is DocumentStartEvent:
                state.doc, state.in_doc = state.doc + 1, True
                state.doc_start = mark_line(event) + offset
            elif kind is DocumentEndEvent:
                state.in_doc = False
                state.next_start = _next_start(event) + offset
                end = (event.end_mark.line if event.end_mark else 0) + offset
                hits = sorted(ln for ln in bad if state.doc_start <= ln <= end)
                if hits:
                    reported.update(hits)
                    yield Fault(state.doc, hits[0] + 1, _forbidden_message(bad[hits[0]]), False)
            yield Item(state.doc, event, offset)
            if fallback and kind is DocumentEndEvent:
                state.next_line = state.next_start
                return
    except yaml.YAMLError as exc:
        line, column = _error_position(exc, text)
        error = (offset + line, column, _syntax_message(exc, offset))
        if parser_class is not _PyParser:
            state.retry_line = state.doc_start if state.in_doc else state.next_start
            state.doc -= 1 if state.in_doc else 0
            state.refused = error
            return
        if state.refused is not None and state.refused[:2] >= error[:2]:
            error = state.refused  # the same syntax error: keep libyaml's wording
        if not state.in_doc:
            state.doc += 1
        state.fault_line, state.fault_column = error[0], error[1]
        yield Fault(state.doc, error[0] + 1, error[2], True)
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()


def _next_start(end: Event) -> int:
    """The line after a document's end where the next document's text can begin (relative)."""
    mark = end.end_mark
    if mark is None:
        return 0
    return int(mark.line) + (1 if mark.column else 0)


def _resume_line(
    text: str, starts: list[int], fault_line: int, column: int, first_line: int
) -> int | None:
    """The next `---` line at or after the fault where parsing can start afresh."""
    begin = fault_line if column == 0 else fault_line + 1
    for line in range(max(begin, first_line + 1), len(starts)):
        if _DOC_START.match(text, starts[line]):
            return line
    return None


def _error_position(exc: yaml.YAMLError, text: str) -> tuple[int, int]:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        return int(mark.line), int(mark.column)
    position = getattr(exc, "position", None)
    if isinstance(position, int):
        prefix = text.encode("utf-8")[:position].decode("utf-8", "ignore")
        return len(_LINE_BREAK.findall(prefix)), 0
    return 0, 0


def _syntax_message(exc: yaml.YAMLError, offset: int) -> str:
    problem = getattr(exc, "problem", None) or "invalid YAML"
    context = getattr(exc, "context", None)
    mark = getattr(exc, "problem_mark", None)
    start = getattr(exc, "context_mark", None)
    where = f" (column {mark.column + 1})" if mark is not None else ""
    if context and start is not None and mark is not None and start.line != mark.line:
        context = f"{context} started at line {start.line + offset + 1}"
    detail = f"{context}: {problem}" if context else str(problem)
    return f"YAML syntax error: {detail}{where}"


def _forbidden_message(codepoint: int) -> str:
    return f"character U+{codepoint:04X} is not allowed in YAML text"


def _line_of(starts: list[int], index: int) -> int:
    return bisect.bisect_right(starts, index) - 1

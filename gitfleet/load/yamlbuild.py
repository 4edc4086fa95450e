"""Build plain Python documents from YAML events, enforcing gitfleet's safe data model.

One pass over the events of `gitfleet.load.yamlevents.read_events`, without recursion: values
are only dict, list, str, int, float, bool and None; other tags are refused; mapping keys must
be strings and appear once (merge keys `<<` are honoured like kubectl does); aliases are
expanded, but only after checking the expanded node count (`limits.max_yaml_nodes`, so alias
bombs are refused in O(document) time) and depth (`limits.max_yaml_depth`); recursive aliases
are refused. The first problem in a document ends that document with one `BuildFault`; the
other documents go on. With `slots` (values a template inserted, see `renderers.jinja`), a
scalar holding slot markers gets the values as data: a plain scalar that is exactly one marker
becomes that value (typed: a string stays a string, a number a number, a mapping a mapping),
any other scalar the text with each marker replaced by the value's text, so inserted data can
never change the YAML structure. A document whose events start again (libyaml refused it and the reference
parser re-reads it, see `yamlevents`) is rebuilt from scratch, its earlier faults dropped. Called by `gitfleet.load.yamlio.parse_documents`.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from gitfleet.api.limits import Limits
from gitfleet.api.meta import key_path
from gitfleet.load.yamlevents import Fault, read_events
from gitfleet.load.yamlscalars import CORE, ScalarError, resolve_plain, resolve_tagged, short_tag

_MERGE = object()
"""Marker for the YAML merge key `<<`."""


@dataclass(frozen=True)
class BuiltDoc:
    """A non-empty document: its index, the 1-based line of its first node, and its value."""

    doc: int
    line: int
    body: Any


@dataclass(frozen=True)
class BuildFault:
    """Why a document (or, with doc None, a stretch of the file) was not loaded."""

    doc: int | None
    line: int | None
    field: str
    message: str


@dataclass(frozen=True)
class _Anchor:
    value: Any
    count: int
    height: int


@dataclass
class _Frame:
    value: Any
    line: int
    anchor: str | None
    start_count: int
    height: int = 1
    key: Any = None
    has_key: bool = False
    key_line: int = 0
    key_lines: dict[str, int] = field(default_factory=dict)


class _Stop(Exception):
    def __init__(self, line: int, path: str, message: str) -> None:
        super().__init__(message)
        self.line, self.path, self.message = line, path, message


SLOT_OPEN, SLOT_CLOSE = "\ue000", "\ue001"
"""Private-use characters around a slot number: `\ue000<n>\ue001` stands for `slots[n]`."""
_SLOT = re.compile("\ue000([0-9]+)\ue001")


def slot_marker(index: int) -> str:
    """The text that stands for `slots[index]` in rendered YAML."""
    return f"{SLOT_OPEN}{index}{SLOT_CLOSE}"


def build_documents(
    text: str, limits: Limits, slots: Sequence[Any] | None = None
) -> tuple[list[BuiltDoc], list[BuildFault]]:
    """All documents of `text` that loaded, and one fault per document that did not."""
    builder = _Builder(limits, slots)
    for item in read_events(text):
        if isinstance(item, Fault):
            builder.fault(item)
        else:
            builder.feed(item.doc, item.event, item.offset)
    return builder.docs, builder.faults


class _Builder:
    def __init__(self, limits: Limits, slots: Sequence[Any] | None = None) -> None:
        self.limits = limits
        self.slots = slots
        self.docs: list[BuiltDoc] = []
        self.faults: list[BuildFault] = []
        self._reset(-1)

    def _reset(self, doc: int) -> None:
        self.doc, self.failed = doc, False
        self.stack: list[_Frame] = []
        self.anchors: dict[str, _Anchor] = {}
        self.count = 0
        self.root: Any = None
        self.root_line: int | None = None

    def fault(self, fault: Fault) -> None:
        if fault.doc is None or fault.doc != self.doc or not self.failed:
            self.faults.append(BuildFault(fault.doc, fault.line, "", fault.message))
        if fault.doc is not None and fault.doc == self.doc:
            self.failed = True
        if fault.fatal:
            self._reset(fault.doc if fault.doc is not None else self.doc)
            self.failed = True

    def feed(self, doc: int, event: Event, offset: int) -> None:
        kind = type(event)
        if kind is DocumentStartEvent:
            if doc == self.doc:  # the document is read again by the reference parser
                self.faults = [fault for fault in self.faults if fault.doc != doc]
            self._reset(doc)
        elif kind is DocumentEndEvent:
            self._finish()
        elif not self.failed:
            line = event.start_mark.line + offset + 1 if event.start_mark else offset + 1
            try:
                try:
                    self._event(kind, event, line)
                except RecursionError:
                    raise _Stop(line, "", "nesting is too deep to load") from None
            except _Stop as stop:
                self.failed = True
                self.faults.append(BuildFault(self.doc, stop.line, stop.path, stop.message))

    def _finish(self) -> None:
        if self.failed or self.root is None:
            return
        if not isinstance(self.root, dict):
            kind = _type_name(self.root)
            self.faults.append(
                BuildFault(self.doc, self.root_line, "", f"document is a {kind}, not a mapping")
            )
            return
        self.docs.append(BuiltDoc(self.doc, self.root_line or 1, self.root))

    def _event(self, kind: type[Event], event: Event, line: int) -> None:
        if kind is ScalarEvent:
            self._scalar(cast(ScalarEvent, event), line)
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            self._end()
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            self._start(cast(CollectionStartEvent, event), line)
        elif kind is AliasEvent:
            self._alias(cast(AliasEvent, event), line)
        else:
            return
        if self.root_line is None:
            self.root_line = line

    def _path(self, depth: int | None = None) -> str:
        """The field path of the node about to be added under `stack[:depth]` (error path only;
        paths are never built for valid input)."""
        path = ""
        for frame in self.stack[:depth]:
            if isinstance(frame.value, list):
                path += f"[{len(frame.value)}]"
            elif frame.has_key and isinstance(frame.key, str):
                path = join_path(path, frame.key)
        return path

    def _count(self, amount: int, line: int) -> None:
        self.count += amount
        if self.count > self.limits.max_yaml_nodes:
            raise _Stop(
                line,
                self._path(),
                f"document has more than {self.limits.max_yaml_nodes} nodes after alias "
                "expansion (limits.maxYamlNodes)",
            )

    def _scalar(self, event: ScalarEvent, line: int) -> None:
        self._count(1, line)
        tag = event.tag
        if self.slots is not None and SLOT_OPEN in event.value:
            self._slotted(event, line)
            return
        try:
            if tag is None:
                value = resolve_plain(event.value) if event.implicit[0] else event.value
            elif tag == "!":
                value = event.value
            else:
                value = resolve_tagged(event.value, tag)
        except ScalarError as exc:
            raise _Stop(line, self._path(), str(exc)) from None
        if plain_merge := (tag is None and event.implicit[0] and event.value == "<<"):
            value = _MERGE
        if event.anchor is not None and not plain_merge:
            self.anchors[event.anchor] = _Anchor(value, 1, 0)
        self._add(value, line, 0)

    def _slotted(self, event: ScalarEvent, line: int) -> None:
        """A scalar with inserted values: data, never YAML text (see module doc)."""
        slots = self.slots or ()
        exact = _SLOT.fullmatch(event.value)
        if exact and event.tag is None and not event.style and int(exact[1]) < len(slots):
            value = copy.deepcopy(slots[int(exact[1])])
            if isinstance(value, dict | list):
                nodes, height = _shape(value)
                self._count(nodes - 1, line)
                self._check_depth(len(self.stack) + height, line)
                self._add(value, line, height)
                return
            self._add(value, line, 0)
            return
        text = _SLOT.sub(lambda m: _slot_text(slots, int(m[1]), m[0]), event.value)
        if event.tag not in (None, "!", CORE + "str"):
            raise _Stop(line, self._path(), "a tagged value cannot hold inserted template values")
        self._add(text, line, 0)

    def _alias(self, event: AliasEvent, line: int) -> None:
        name = event.anchor or ""
        if any(frame.anchor == name for frame in self.stack):
            raise _Stop(line, self._path(), f"recursive alias *{name} (refers to itself)")
        anchor = self.anchors.get(name)
        if anchor is None:
            raise _Stop(line, self._path(), f"undefined alias *{name}")
        self._count(anchor.count, line)
        self._check_depth(len(self.stack) + anchor.height, line)
        self._add(copy.deepcopy(anchor.value), line, anchor.height)

    def _start(self, event: CollectionStartEvent, line: int) -> None:
        is_map = isinstance(event, MappingStartEvent)
        expected = CORE + ("map" if is_map else "seq")
        if event.tag not in (None, "!", expected):
            raise _Stop(
                line,
                self._path(),
                f"tag {short_tag(event.tag)} is not allowed "
                "(only strings, numbers, booleans, null, mappings and sequences)",
            )
        if self.stack and isinstance(self.stack[-1].value, dict) and not self.stack[-1].has_key:
            raise _Stop(line, self._path(-1), "mapping keys must be strings, not collections")
        self._check_depth(len(self.stack) + 1, line)
        self._count(1, line)
        value: Any = {} if is_map else []
        self.stack.append(_Frame(value, line, event.anchor, self.count))

    def _end(self) -> None:
        frame = self.stack.pop()
        if frame.anchor is not None:
            count = self.count - frame.start_count + 1
            self.anchors[frame.anchor] = _Anchor(frame.value, count, frame.height)
        self._add(frame.value, frame.line, frame.height)

    def _check_depth(self, depth: int, line: int) -> None:
        if depth > self.limits.max_yaml_depth:
            raise _Stop(
                line,
                self._path(),
                f"nesting is deeper than {self.limits.max_yaml_depth} levels (limits.maxYamlDepth)",
            )

    def _add(self, value: Any, line: int, height: int) -> None:
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        top.height = max(top.height, height + 1)
        if isinstance(top.value, list):
            top.value.append(value)
        elif not top.has_key:
            self._set_key(top, value, line)
        else:
            self._set_value(top, value, line)

    def _set_key(self, top: _Frame, key: Any, line: int) -> None:
        if key is not _MERGE and not isinstance(key, str):
            shown = "" if isinstance(key, dict | list) else f" {json.dumps(key)}"
            raise _Stop(
                line,
                self._path(-1),
                f"mapping keys must be strings: quote the {_type_name(key)} key{shown}",
            )
        if isinstance(key, str) and key in top.key_lines:
            raise _Stop(
                line,
                join_path(self._path(-1), key),
                f'duplicate key "{key}" (first at line {top.key_lines[key]})',
            )
        top.key, top.has_key, top.key_line = key, True, line

    def _set_value(self, top: _Frame, value: Any, line: int) -> None:
        key, top.has_key = top.key, False
        if key is _MERGE:
            self._merge(top, value, line)
            return
        top.key_lines[key] = top.key_line
        top.value[key] = value

    def _merge(self, top: _Frame, value: Any, line: int) -> None:
        sources = value if isinstance(value, list) else [value]
        if not all(isinstance(source, dict) for source in sources):
            raise _Stop(line, self._path(-1), "merge key << needs a mapping or a list of mappings")
        for source in sources:
            for key, item in source.items():
                if key not in top.value:
                    top.value[key] = item


def join_path(path: str, key: str) -> str:
    """The field path of `key` inside `path`, spelled like the api's FieldIssue paths."""
    return (path + key_path(key)).removeprefix(".")


def _type_name(value: Any) -> str:
    names = {
        list: "sequence",
        dict: "mapping",
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
    }
    if value is None:
        return "null"
    return names.get(type(value), type(value).__name__)


def _slot_text(slots: Sequence[Any], index: int, marker: str) -> str:
    return str(slots[index]) if index < len(slots) else marker


def _shape(value: Any) -> tuple[int, int]:
    """(node count, height) of an inserted value, without recursion."""
    nodes, height = 0, 0
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        nodes += 1
        if isinstance(item, dict | list):
            height = max(height, depth)
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
    return nodes, height

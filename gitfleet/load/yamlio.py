"""Safe YAML in and canonical YAML out: the only YAML entry points of gitfleet.

`decode_text` turns file bytes into text (strict UTF-8, a BOM is dropped, the error names the
byte offset). `parse_documents` turns text into `SourceDoc`s with the safe, limited reader of
`gitfleet.load.yamlbuild` (libyaml events; core types only; no custom tags, timestamps or
base-60; duplicate keys, alias bombs and deep nesting refused) and reports every bad document as
a `FleetError` with file, line, document index and field, while the other documents load.
`locate` finds the line of a field path on the error path, and `error_at` turns a document's
field issue into a `FleetError` on that line. `dump_yaml` writes canonical YAML:
block style, sorted keys, LF, UTF-8, no aliases, and strings quoted whenever a plain scalar would
read back as something else in any YAML dialect. Called by the renderers, the snapshot builder
and everything that writes output files.
"""

from __future__ import annotations

import codecs
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    DocumentEndEvent,
    Event,
    MappingStartEvent,
    ScalarEvent,
)

from gitfleet.api.errors import FieldIssue, FleetError
from gitfleet.api.limits import Limits
from gitfleet.load.model import SourceDoc
from gitfleet.load.unloaded import TENANT_NOT_LOADED, tenant_lines
from gitfleet.load.yamlbuild import build_documents, join_path
from gitfleet.load.yamlemit import Emitter, Pieces
from gitfleet.load.yamlevents import Item, mark_line, read_events
from gitfleet.load.yamlscalars import needs_quotes

_LAST_SEGMENT = re.compile(r'(\[\d+\]|\["(?:[^"\\]|\\.)*"\]|\.?[^.\[]*)$')


def decode_text(file: str, data: bytes) -> tuple[str | None, FleetError | None]:
    """Strict UTF-8 decoding; a leading BOM is dropped. On failure: (None, error with offset)."""
    skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[skip:].decode("utf-8"), None
    except UnicodeDecodeError as exc:
        offset = exc.start + skip
        line = data.count(b"\n", 0, offset) + 1
        message = f"not valid UTF-8 text (invalid byte at offset {offset})"
        return None, FleetError(file, line, "", message)


def parse_documents(
    file: str,
    text: str,
    limits: Limits,
    renderer: str = "plain",
    slots: Sequence[Any] | None = None,
) -> tuple[list[SourceDoc], list[FleetError]]:
    """Every loadable document of `text` (empty ones skipped) and an error per bad document.
    `slots`: values a template inserted as data (`yamlbuild.slot_marker`)."""
    built, faults = build_documents(text, limits, slots)
    errors = [FleetError(file, f.line, f.field, f.message, f.doc) for f in faults]
    cap = limits.max_documents_per_file
    if any(d.doc >= cap for d in built) or any(f.doc is not None and f.doc >= cap for f in faults):
        message = f"more than {cap} documents in one file (limits.maxDocumentsPerFile)"
        errors = [e for e in errors if e.doc is None or e.doc < cap]
        errors.append(FleetError(file, None, "", message, cap))
    docs = [SourceDoc(file, d.doc, d.line, d.body, renderer, text) for d in built if d.doc < cap]
    if errors:  # a Tenant that did not parse must not lift its rules (`gitfleet.load.unloaded`)
        errors += _unparsed_tenants(file, text, docs)
    return docs, errors


def _unparsed_tenants(file: str, text: str, docs: Sequence[SourceDoc]) -> list[FleetError]:
    """An error at each `kind: Tenant` line of `text` that no loaded document accounts for."""
    loaded = set()
    for d in docs:
        items = d.body.get("items") if d.body.get("kind") == "List" else None
        fields = [f"items[{i}].kind" for i, item in enumerate(items or []) if _tenant(item)]
        loaded |= {locate(text, d.doc, f) for f in (["kind"] if _tenant(d.body) else fields)}
    return [
        FleetError(file, line, "kind", TENANT_NOT_LOADED)
        for line in tenant_lines(text)
        if line not in loaded
    ]


def _tenant(body: Any) -> bool:
    return isinstance(body, dict) and body.get("kind") == "Tenant"


def locate(text: str, doc: int, field: str) -> int | None:
    """1-based line of `field` (dotted path, `[i]` indexes) in document `doc` of `text`.

    Falls back to the nearest ancestor that exists, then to the document's first line; None when
    the document itself is not found. Only used on the error path (it re-reads the text).
    """
    lines = _field_lines(text, doc)
    if not lines:
        return None
    path = field
    while path and path not in lines:
        shorter = _LAST_SEGMENT.sub("", path, count=1)
        path = shorter if shorter != path else ""
    return lines.get(path, lines.get(""))


def top_level_line(text: str, key: str) -> int | None:
    """1-based line of `key` in the top-level mapping of the first document of `text` (where
    `locate(text, 0, key)` finds it); None when that mapping has no such key or the text cannot
    be read up to it. Reads events only up to the key: a key near the top of a large document
    costs a few events, not the whole document."""
    depth, expect_key = 0, True
    for item in read_events(text):
        if not isinstance(item, Item) or item.doc > 0:
            return None
        event = item.event
        if depth == 0:
            if isinstance(event, MappingStartEvent):
                depth = 1
            elif isinstance(event, CollectionStartEvent | ScalarEvent | AliasEvent):
                return None  # the document is not a mapping
            continue
        if isinstance(event, CollectionEndEvent):
            depth -= 1
            if depth == 0:
                return None  # the top-level mapping ended without the key
            expect_key ^= depth == 1  # a collection in the top-level mapping is complete
            continue
        if depth == 1 and expect_key and isinstance(event, ScalarEvent) and event.value == key:
            return mark_line(event) + item.offset + 1
        if isinstance(event, CollectionStartEvent):
            depth += 1
        else:
            expect_key ^= depth == 1  # a scalar or alias in the top-level mapping
    return None


def error_at(doc: SourceDoc, issue: FieldIssue) -> FleetError:
    """A FleetError for an issue of `doc`, on the line of the issue's field when found."""
    field = issue.field
    if doc.path:
        field = f"{doc.path}.{field}" if field and not field.startswith("[") else doc.path + field
    line = locate(doc.text, doc.doc, field) if doc.text else None
    return FleetError(doc.file, line or doc.line, field, issue.message, doc.doc)


def dump_yaml(obj: Any, pieces: Pieces | None = None) -> str:
    """Canonical block-style YAML of plain data (sorted keys, LF, UTF-8, no aliases).
    `pieces`: list items whose lines the caller keeps (`yamlemit.PieceEmitter`)."""
    fast = _EMITTER.emit(obj, pieces)
    return fast if fast is not None else pyyaml_dump(obj)


def pyyaml_dump(obj: Any) -> str:
    """`dump_yaml` through PyYAML alone (the reference the fast emitter must equal)."""
    width: Any = -1 if _Dumper.__name__ == "_CDumper" else float("inf")
    return yaml.dump(
        obj,
        Dumper=_Dumper,
        default_flow_style=False,
        sort_keys=True,
        allow_unicode=True,
        width=width,
        line_break="\n",
    )


def _field_lines(text: str, target: int) -> dict[str, int]:
    """path -> 1-based line of every node of document `target` (keys give their value's line)."""
    return _all_field_lines(text).get(target, {})


@functools.lru_cache(maxsize=8)
def _all_field_lines(text: str) -> dict[int, dict[str, int]]:
    """`_field_lines` for every document at once; cached so N errors in a file cost one read."""
    walkers: dict[int, _PathWalker] = {}
    for item in read_events(text):
        if isinstance(item, Item) and not isinstance(item.event, DocumentEndEvent):
            walker = walkers.setdefault(item.doc, _PathWalker())
            walker.feed(item.event, mark_line(item.event) + item.offset + 1)
    return {doc: walker.lines for doc, walker in walkers.items()}


@dataclass
class _Frame:
    path: str | None
    """None inside a node that no field path can address (a non-scalar mapping key)."""
    is_map: bool
    index: int = 0
    key: str | None = None
    at_key: bool = True


class _PathWalker:
    """Tracks the field path of each event of one document and records its first line."""

    def __init__(self) -> None:
        self.lines: dict[str, int] = {}
        self.stack: list[_Frame] = []

    def feed(self, event: Event, line: int) -> None:
        if isinstance(event, CollectionEndEvent):
            self.stack.pop()
            self._complete()
            return
        if not isinstance(event, ScalarEvent | AliasEvent | CollectionStartEvent):
            return
        top = self.stack[-1] if self.stack else None
        path = self._path(top)
        if top is not None and top.is_map and top.at_key:
            top.key = event.value if isinstance(event, ScalarEvent) else None
            if top.path is not None and top.key is not None:
                self.lines.setdefault(join_path(top.path, top.key), line)
        elif path is not None:
            self.lines.setdefault(path, line)
        if isinstance(event, CollectionStartEvent):
            self.stack.append(_Frame(path, isinstance(event, MappingStartEvent)))
        else:
            self._complete()

    def _path(self, top: _Frame | None) -> str | None:
        if top is None:
            return ""
        if top.path is None:
            return None
        if not top.is_map:
            return f"{top.path}[{top.index}]"
        if top.at_key or top.key is None:
            return None
        return join_path(top.path, top.key)

    def _complete(self) -> None:
        if not self.stack:
            return
        top = self.stack[-1]
        if top.is_map:
            top.at_key = not top.at_key
        else:
            top.index += 1


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "'" if needs_quotes(data) else ("|" if "\n" in data else None)
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


def _represent_tuple(dumper: yaml.SafeDumper, data: tuple[Any, ...]) -> yaml.SequenceNode:
    return dumper.represent_list(list(data))


_Base: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_Base):  # type: ignore[misc]
    def ignore_aliases(self, data: Any) -> bool:
        return True


if _Base is not yaml.SafeDumper:
    _Dumper.__name__ = "_CDumper"
_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(tuple, _represent_tuple)


_PLAIN = re.compile(r"[A-Za-z0-9_/](?:[A-Za-z0-9_./-]|:(?=[A-Za-z0-9_./-]))*(?: [A-Za-z0-9_./-]+)*")
"""Strings of these characters, with single inner spaces and `:` only before another of the
characters, are written plain by PyYAML unless they would read back as another value."""


def plain_as_is(text: str) -> bool:
    """True when PyYAML writes `text` as it is, a plain scalar (`_PLAIN`, no quotes needed)."""
    return _PLAIN.fullmatch(text) is not None and not needs_quotes(text)


_EMITTER = Emitter(pyyaml_dump, plain_as_is)

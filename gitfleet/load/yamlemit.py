"""Fast canonical YAML: the same bytes as `yamlio.dump_yaml`'s PyYAML path, an order faster.

PyYAML spends most of its time representing and emitting structure node by node in Python. Here
the block structure (sorted mappings, indentless sequences, `{}`/`[]` for empties; a document is a
mapping or a list) is written directly, and each distinct scalar is formatted once by PyYAML
itself (cached), so quoting rules stay exactly PyYAML's. Anything outside that shape (non-string
keys, keys over 128 characters, unknown types) returns None and the caller uses PyYAML. Called by
`yamlio.dump_yaml`; the golden tests and `tests/unit/load/test_yaml_emit.py` check it byte for
byte against PyYAML.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

SCALARS = (str, int, float, bool, type(None))
MAX_SIMPLE_KEY = 128
"""PyYAML writes longer keys in the `? key` form; such documents go to PyYAML."""
_CACHE_LIMIT = 200_000
"""Distinct scalars kept (cleared when exceeded)."""
_SUBTREE_LIMIT = 8192
"""Distinct memoised subtrees kept (cleared when exceeded): bounds a long-running hub's memory."""
_BREAKS = frozenset("\n\r\x85\u2028\u2029")
Pieces = dict[int, list[Any]]
"""id of a list item a caller keeps from pass to pass -> the slot its emitted text is kept in
(`PieceEmitter`)."""


class _Unsupported(Exception):
    """The document needs PyYAML."""


class Emitter:
    """Emits documents; `scalar_dump` is PyYAML dumping one scalar as a document."""

    def __init__(self, scalar_dump: Callable[[Any], str], memo: bool = True) -> None:
        self._dump = scalar_dump
        self._memo = memo
        """Memoise subtrees near the top (off for documents whose entries are all distinct,
        e.g. one per cluster: encoding each to find it costs more than emitting it)."""
        self._cache: dict[tuple[type, Any], tuple[str, list[str]]] = {}
        self._subtrees: dict[tuple[str, int, str], list[str]] = {}
        """(lead, indent, canonical JSON) -> emitted lines of a collection value near the top."""

    def _scalar(self, value: Any) -> tuple[str, list[str]]:
        """(first line, continuation lines at indent 0) of a scalar as PyYAML writes it."""
        key = (type(value), value)
        hit = self._cache.get(key)
        if hit is None:
            text = self._dump(value)
            # A plain or kept-ends scalar ends with the document end marker, anything else with
            # one line break; a block scalar's own line breaks stay (`"\n"` is `|2+` + a line).
            end = "\n...\n" if text.endswith("\n...\n") else "\n"
            first, *rest = text.removesuffix(end).split("\n")
            if rest:
                raise _Unsupported("multi-line scalar")  # block scalars: chomping, `...` markers
            hit = (first, [])
            if len(self._cache) > _CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def _value(self, lead: str, value: Any, indent: int, out: list[str]) -> None:
        """`lead` is `key:` or `-`; writes the value after it, nested at `indent`."""
        if isinstance(value, dict):
            if not value:
                out.append(f"{lead} {{}}")
                return
            if lead.endswith(":"):
                out.append(lead)
                self._map(value, indent + 2, out)
            else:
                self._first_inline(lead, indent, lambda o: self._map(value, indent + 2, o), out)
        elif isinstance(value, list):
            if not value:
                out.append(f"{lead} []")
            elif lead.endswith(":"):
                out.append(lead)
                self._seq(value, indent, out)  # sequences in mappings are not indented
            else:
                self._first_inline(lead, indent, lambda o: self._seq(value, indent + 2, o), out)
        elif isinstance(value, SCALARS):
            first, rest = self._scalar(value)
            out.append(f"{lead} {first}")
            pad = " " * (indent + 2)
            out += [pad + line if line else line for line in rest]
        else:
            raise _Unsupported(type(value).__name__)

    @staticmethod
    def _first_inline(
        lead: str, indent: int, write: Callable[[list[str]], None], out: list[str]
    ) -> None:
        """A sequence item holding a collection: its first line goes after the `- `."""
        inner: list[str] = []
        write(inner)
        out.append(f"{lead} {inner[0].lstrip(' ')}")
        out += inner[1:]

    def _memo_value(self, lead: str, value: Any, indent: int, out: list[str]) -> None:
        """`_value` for a collection near the top of a document, memoised by content: manifests
        of many clusters share most subtrees (`spec`, list entries), so each is emitted once."""
        try:
            content = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError):
            self._value(lead, value, indent, out)
            return
        key = (lead, indent, content)
        lines = self._subtrees.get(key)
        if lines is None:
            lines = []
            self._value(lead, value, indent, lines)
            if len(self._subtrees) > _SUBTREE_LIMIT:
                self._subtrees.clear()
            self._subtrees[key] = lines
        out += lines

    def _map(self, value: dict[Any, Any], indent: int, out: list[str]) -> None:
        pad = " " * indent
        memo = self._memo and indent <= 2
        for key in sorted(value):
            if not isinstance(key, str) or len(key) > MAX_SIMPLE_KEY or _BREAKS.intersection(key):
                raise _Unsupported("not a simple key")  # PyYAML writes these as `? key`
            first, rest = self._scalar(key)
            if rest:
                raise _Unsupported("multi-line key")
            start = len(out)
            item = value[key]
            if memo and isinstance(item, (dict, list)) and item:
                self._memo_value(f"{first}:", item, indent, out)
            else:
                self._value(f"{first}:", item, indent, out)
            out[start] = pad + out[start]

    def _seq(self, value: list[Any], indent: int, out: list[str]) -> None:
        pad = " " * indent
        memo = self._memo and indent <= 2
        for item in value:
            self._item(item, indent, pad, memo, out)

    def _item(self, item: Any, indent: int, pad: str, memo: bool, out: list[str]) -> None:
        """One sequence item, its first line padded to `indent`."""
        start = len(out)
        if memo and isinstance(item, dict) and item:
            self._memo_value("-", item, indent, out)
        else:
            self._value("-", item, indent, out)
        out[start] = pad + out[start]

    def emit(self, doc: Any, pieces: Pieces | None = None) -> str | None:
        """The document's YAML, or None when PyYAML must write it. `pieces`: id of a list item
        -> its text slot (`PieceEmitter`)."""
        if not isinstance(doc, dict | list) or not doc:
            return None
        emitter = self if pieces is None else PieceEmitter(self, pieces)
        out: list[str] = []
        try:
            if isinstance(doc, dict):
                emitter._map(doc, 0, out)
            else:
                emitter._seq(doc, 0, out)  # a top-level block sequence is not indented either
        except (_Unsupported, TypeError):
            return None
        return "\n".join(out) + "\n"


class PieceEmitter(Emitter):
    """An emitter for one document whose list items the caller keeps from pass to pass (e.g.
    one status entry or binding per cluster): `pieces` maps such an item's id to a slot (a
    list) where its emitted lines are kept, so an unchanged item is written once and its
    lines reused (kept as one string: `out` then holds multi-line elements, which every caller
    of `_seq` only prefixes or joins). The caller owns the slots, keeps each with its item, and
    never changes an item once it has a slot (a changed item comes with a new, empty slot)."""

    def __init__(self, base: Emitter, pieces: Pieces) -> None:
        super().__init__(base._dump, memo=False)
        self._cache = base._cache  # the scalars formatted so far are shared
        self._pieces = pieces

    def _item(self, item: Any, indent: int, pad: str, memo: bool, out: list[str]) -> None:
        slot = self._pieces.get(id(item)) if isinstance(item, dict) else None
        if slot is None:
            super()._item(item, indent, pad, memo, out)
            return
        if not slot or slot[0] != indent:
            lines: list[str] = []
            super()._item(item, indent, pad, memo, lines)
            slot[:] = [indent, "\n".join(lines)]  # one string: a slot per entry is kept
        out.append(slot[1])

"""Fast canonical YAML: the same bytes as `yamlio.dump_yaml`'s PyYAML path, an order faster.

PyYAML spends most of its time representing and emitting structure node by node in Python. Here
the block structure (sorted mappings, indentless sequences, `{}`/`[]` for empties; a document is a
mapping or a list) is written directly, and each distinct scalar is formatted once by PyYAML
itself (cached), so quoting rules stay exactly PyYAML's. Anything outside that shape (non-string
keys, keys over 128 characters, multi-line scalars, unknown types) returns None and the caller
uses PyYAML. Called by `yamlio.dump_yaml`; the golden tests and `tests/unit/load/test_yaml_emit.py`
check it byte for byte against PyYAML.

Each line is written whole, its indentation included: a mapping or sequence is written with
`pad` (the indentation of its own lines) and `first` (what stands before its first line: `pad`,
or the `- ` of the sequence item it opens, which has the same length). Plain `str` keys and
values (nearly all of them) are looked up in caches of their finished text (`key:` and the
scalar); any other value takes the general path (`_entry`, `_item`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SCALARS = (str, int, float, bool, type(None))
MAX_SIMPLE_KEY = 128
"""PyYAML writes longer keys in the `? key` form; such documents go to PyYAML."""
_CACHE_LIMIT = 200_000
"""Distinct scalars (and keys) kept (cleared when exceeded)."""
_BREAKS = frozenset("\n\r\x85\u2028\u2029")
Pieces = dict[int, list[Any]]
"""id of a list item a caller keeps from pass to pass -> the slot its emitted text is kept in
(`PieceEmitter`): `[indent, text]`, the item's lines at `indent` without the last line break."""


class _Unsupported(Exception):
    """The document needs PyYAML."""


class Emitter:
    """Emits documents; `scalar_dump` is PyYAML dumping one scalar as a document. `share`: an
    emitter whose formatted scalars and keys this one uses too."""

    def __init__(
        self,
        scalar_dump: Callable[[Any], str],
        plain: Callable[[str], bool] | None = None,
        share: Emitter | None = None,
    ) -> None:
        self._dump = scalar_dump
        self._plain = plain
        """True for a string PyYAML writes as it is (a plain scalar): not formatted by it."""
        self._cache: dict[tuple[type, Any], str] = {} if share is None else share._cache
        """(type, value) -> the text of a scalar that is not a plain `str`."""
        self._strs: dict[str, str] = {} if share is None else share._strs
        """A `str` value -> its text."""
        self._keys: dict[str, str] = {} if share is None else share._keys
        """A `str` key -> `key:`."""

    def _scalar(self, value: Any) -> str:
        """A scalar as PyYAML writes it on one line (`_Unsupported` when it needs more)."""
        key = (type(value), value)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._format(value)
            if len(self._cache) > _CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def _format(self, value: Any) -> str:
        """PyYAML's text of one scalar; `_Unsupported` for a multi-line one."""
        text = self._dump(value)
        # A plain or kept-ends scalar ends with the document end marker, anything else with
        # one line break; a block scalar's own line breaks stay (`"\n"` is `|2+` + a line).
        end = "\n...\n" if text.endswith("\n...\n") else "\n"
        first = text.removesuffix(end)
        if not _BREAKS.isdisjoint(first):  # PyYAML breaks lines at \u2028 etc. too
            raise _Unsupported("multi-line scalar")  # block scalars: chomping, `...` markers
        return first

    def _str(self, value: str) -> str:
        """`_scalar` of a `str` (the `_strs` cache missed)."""
        text = value if self._plain is not None and self._plain(value) else self._format(value)
        if len(self._strs) > _CACHE_LIMIT:
            self._strs.clear()
        self._strs[value] = text
        return text

    def _key(self, key: Any) -> str:
        """`key:` of a mapping key (the `_keys` cache missed); `_Unsupported` unless a simple
        key (PyYAML writes the others in the `? key` form)."""
        if not isinstance(key, str) or len(key) > MAX_SIMPLE_KEY or _BREAKS.intersection(key):
            raise _Unsupported("not a simple key")
        head = self._scalar(key) + ":"
        if type(key) is str:
            if len(self._keys) > _CACHE_LIMIT:
                self._keys.clear()
            self._keys[key] = head
        return head

    def _map(self, value: dict[Any, Any], pad: str, first: str, out: list[str]) -> None:
        """The block mapping `value`, its keys at `pad`, its first line starting with `first`."""
        keys, strs = self._keys, self._strs
        inner = pad + "  "
        lead = first
        for key in sorted(value):
            head = keys.get(key) if type(key) is str else None
            if head is None:
                head = self._key(key)
            item = value[key]
            if type(item) is str:
                text = strs.get(item)
                out.append(f"{lead}{head} {self._str(item) if text is None else text}")
            else:
                self._entry(lead + head, item, pad, inner, out)
            lead = pad

    def _entry(self, line: str, item: Any, pad: str, inner: str, out: list[str]) -> None:
        """The value `item` of a mapping entry whose line so far is `line` (`key:`)."""
        if isinstance(item, dict):
            if item:
                out.append(line)
                self._map(item, inner, inner, out)
            else:
                out.append(line + " {}")
        elif isinstance(item, list):
            if item:
                out.append(line)
                self._seq(item, pad, pad, out)  # sequences in mappings are not indented
            else:
                out.append(line + " []")
        elif isinstance(item, SCALARS):
            out.append(f"{line} {self._scalar(item)}")
        else:
            raise _Unsupported(type(item).__name__)

    def _seq(self, value: list[Any], pad: str, first: str, out: list[str]) -> None:
        """The block sequence `value`, its `- ` at `pad`, its first line starting with `first`."""
        strs = self._strs
        lead = first + "- "
        rest = pad + "- "
        for item in value:
            if type(item) is str:
                text = strs.get(item)
                out.append(lead + (self._str(item) if text is None else text))
            else:
                self._item(lead, item, pad, out)
            lead = rest

    def _item(self, lead: str, item: Any, pad: str, out: list[str]) -> None:
        """One sequence item after `lead` (`- `); a collection starts on the same line."""
        if isinstance(item, dict):
            if item:
                self._map(item, pad + "  ", lead, out)
            else:
                out.append(lead + "{}")
        elif isinstance(item, list):
            if item:
                self._seq(item, pad + "  ", lead, out)
            else:
                out.append(lead + "[]")
        elif isinstance(item, SCALARS):
            out.append(lead + self._scalar(item))
        else:
            raise _Unsupported(type(item).__name__)

    def emit(self, doc: Any, pieces: Pieces | None = None) -> str | None:
        """The document's YAML, or None when PyYAML must write it. `pieces`: id of a list item
        -> its text slot (`PieceEmitter`)."""
        if not isinstance(doc, dict | list) or not doc:
            return None
        emitter = self if pieces is None else PieceEmitter(self, pieces)
        out: list[str] = []
        try:
            if isinstance(doc, dict):
                emitter._map(doc, "", "", out)
            else:
                emitter._seq(doc, "", "", out)  # a top-level block sequence is not indented either
        except (_Unsupported, TypeError):
            return None
        return "\n".join(out) + "\n"


class PieceEmitter(Emitter):
    """An emitter for one document whose list items the caller keeps from pass to pass (e.g.
    one status entry or binding per cluster): `pieces` maps such an item's id to a slot (a
    list) where its emitted lines are kept, so an unchanged item is written once and its
    lines reused (kept as one string: `out` then holds multi-line elements, which every caller
    of `_seq` only joins). The caller owns the slots, keeps each with its item, and never
    changes an item once it has a slot (a changed item comes with a new, empty slot)."""

    def __init__(self, base: Emitter, pieces: Pieces) -> None:
        super().__init__(base._dump, base._plain, share=base)  # formatted scalars are shared
        self._pieces = pieces

    def _item(self, lead: str, item: Any, pad: str, out: list[str]) -> None:
        slot = self._pieces.get(id(item)) if isinstance(item, dict) else None
        if slot is None:
            super()._item(lead, item, pad, out)
            return
        indent = len(pad)
        if not slot or slot[0] != indent:  # kept with its `- ` at `pad`, as `yamlparts` does
            lines: list[str] = []
            super()._item(pad + "- ", item, pad, lines)
            slot[:] = [indent, "\n".join(lines)]  # one string: a slot per entry is kept
        text, first = slot[1], lead[:indent]
        out.append(text if first == pad else first + text[indent:])  # after another item's `- `

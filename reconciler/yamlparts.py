"""YAML documents assembled from kept fragments: the same bytes as `dump_yaml` of the whole.

The emitter writes a block mapping as its keys' blocks one after the other (sorted), and a
block sequence as its items one after the other, each item's lines padded to the sequence's
indent. So a document holding one list item per cluster is the concatenation of its parts, and
an item's text at indent 0 (`dump_yaml([item])`) is its text at any indent once every line is
padded. `ItemTexts` keeps that text per distinct item (a `RoundMemo`: for the current pass and
the one before only, so a long-running hub holds the items of two passes at most); `Blocks`
writes lists of plain strings (cluster names) from kept texts the same way. `Spliced` emits a
document whose long lists stand as one placeholder item each and puts each list's text in its
place: the caller writes a list from kept item texts (`piece_text`: the slots `dump_yaml`'s `pieces` use) instead
of emitting it again. An item whose text cannot be padded line by line (an empty or unindented
line: a multi-line scalar) makes the text None, and the document is emitted whole.
Called by `publish` (PlacementDecision slices), `statusdocs`, `state` and `priorstate`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from functools import lru_cache, partial
from itertools import compress, repeat
from operator import is_
from typing import Any

from gitfleet.load.yamlemit import Pieces
from gitfleet.load.yamlio import dump_yaml
from reconciler.stagememo import RoundMemo

TOKEN = "gitfleet.spliced.4f1c9e.part-"
"""Placeholder items are this and a number (a plain scalar no document holds)."""


class ItemTexts:
    """key -> the text of one list item at indent 0 (None: it cannot be padded)."""

    def __init__(self) -> None:
        self._memo: RoundMemo[str | None] = RoundMemo()

    def next_round(self) -> None:
        """Start a round (once per pass): items not used in the last two rounds are dropped."""
        self._memo.next_round()

    def text(self, key: Hashable, make: Callable[[], Any]) -> str | None:
        """The text of the item `make()`, made only when the last two rounds did not see `key`
        (so `key` must determine the item)."""
        return self._memo.get(key, lambda: item_text(make()))


def item_text(item: Any) -> str | None:
    """`dump_yaml([item])`, or None when a line of it is empty or not indented (it cannot be
    padded). A name's (a string's) is kept: the same cluster names are listed by every
    placement."""
    if type(item) is str:
        return _name_text(item)
    return _item_text(item)


def _item_text(item: Any) -> str | None:
    text = dump_yaml([item])
    body = text[:-1]  # without its last line break
    if body.count("\n") != body.count("\n "):  # a line after the first empty or not indented
        return None
    return text


_name_text = lru_cache(maxsize=100_000)(_item_text)


def padded(text: str, indent: int) -> str:
    """An item's text (`item_text`) at `indent`."""
    if not indent:
        return text
    pad = " " * indent
    return pad + text[:-1].replace("\n", "\n" + pad) + "\n"


def piece_text(item: Any, indent: int, pieces: Pieces) -> str | None:
    """The text of a list item at `indent`, kept in its `pieces` slot when it has one (the
    slot holds `[indent, text without its last line break]`, as `dump_yaml` keeps it)."""
    slot = pieces.get(id(item))
    if slot is not None and slot and slot[0] == indent:
        return str(slot[1]) + "\n"
    text = item_text(item)
    if text is None:
        return None
    text = padded(text, indent)
    if slot is not None:
        slot[:] = [indent, text[:-1]]
    return text


def items_block(items: list[Any], pieces: Pieces) -> Callable[[int], str | None]:
    """The text of a list of items at an indent (`piece_text`), for `Spliced.part`."""

    def block(indent: int) -> str | None:
        out = []
        for item in items:
            text = piece_text(item, indent, pieces)
            if text is None:
                return None
            out.append(text)
        return "".join(out)

    return block


class Spliced:
    """One document with lists written by the caller (`part`), emitted by `dump`."""

    def __init__(self) -> None:
        self._parts: dict[str, tuple[list[Any], Callable[[int], str | None]]] = {}

    def part(self, items: list[Any], block: Callable[[int], str | None]) -> list[Any]:
        """What stands in the document for the non-empty list `items`: `block(indent)` gives
        their text at the list's indent (None: emit them)."""
        if not items:
            return items
        token = f"{TOKEN}{len(self._parts)}"
        self._parts[token] = (items, block)
        return [token]

    def dump(self, doc: Any) -> str:
        """`dump_yaml` of `doc` with every part's items in place of its placeholder."""
        text = dump_yaml(doc)
        for token, (_, block) in self._parts.items():
            marker = f"- {token}\n"
            at = text.find(marker)
            start = text.rfind("\n", 0, at) + 1
            lines = block(at - start) if at >= 0 and text.count(marker) == 1 else None
            if lines is None or text[start:at].strip(" "):
                return dump_yaml(self._restored(doc))
            text = text[:start] + lines + text[at + len(marker) :]
        return text

    def _restored(self, value: Any) -> Any:
        """`value` with every placeholder list replaced by its items."""
        if isinstance(value, list):
            if len(value) == 1 and isinstance(value[0], str) and value[0] in self._parts:
                return self._parts[value[0]][0]
            return [self._restored(v) for v in value]
        if isinstance(value, Mapping):
            return {k: self._restored(v) for k, v in value.items()}
        return value


class Blocks:
    """One stage's kept texts: each name's item at an indent (a pure function of the two, kept
    until `MAX_LINES` names at an indent), and each whole list of names at an indent (a list of
    names unchanged since the last pass is one lookup); `next_round` once a pass. A list that
    changed (a cluster joined a group of 1,000) looks its names' lines up in C."""

    def __init__(self) -> None:
        self._lines: dict[int, dict[str, str | None]] = {}
        self._blocks: RoundMemo[str | None] = RoundMemo()

    def next_round(self) -> None:
        self._blocks.next_round()

    def names(self, names: list[str]) -> Callable[[int], str | None]:
        """The text of the list `names` at an indent, for `Spliced.part`."""
        key = tuple(names)

        def block(indent: int) -> str | None:
            return self._blocks.get((key, indent), partial(self._names_text, key, indent))

        return block

    def _names_text(self, names: tuple[str, ...], indent: int) -> str | None:
        known = self._lines.setdefault(indent, {})
        if len(known) > MAX_LINES:  # more names than any fleet has: start afresh
            known.clear()
        lines: list[Any] = list(map(known.get, names, repeat(_UNKNOWN)))
        for i in list(compress(range(len(lines)), map(is_, lines, repeat(_UNKNOWN)))):
            lines[i] = known[names[i]] = _name_line(names[i], indent)
        return None if None in lines else "".join(lines)


MAX_LINES = 100_000
"""Names whose line `Blocks` keeps at one indent."""
_UNKNOWN = object()


def _name_line(name: str, indent: int) -> str | None:
    text = item_text(name)
    return padded(text, indent) if text is not None else None


def grouped_parts(
    groups: list[Any], names_field: str, spliced: Spliced, blocks: Blocks
) -> list[Any]:
    """`groups` (mappings) with each one's list of names under `names_field` as a part."""
    out: list[Any] = []
    for group in groups:
        names = group.get(names_field) if isinstance(group, Mapping) else None
        if isinstance(names, list) and names:
            group = {**group, names_field: spliced.part(names, blocks.names(names))}
        out.append(group)
    return out


def keyed_dump(
    doc: Mapping[str, Any],
    spliced_keys: Mapping[str, Any],
    spliced: Spliced,
    block: Callable[[str, Any], str],
) -> str:
    """`spliced.dump(doc)`, made of its keys' blocks: a top-level block mapping is its keys'
    blocks one after the other (sorted), so each key's block is `block(key, value)` (a caller
    keeps them), but from the first to the last key of `spliced_keys` (the ones holding
    `spliced`'s parts), emitted together with their parts."""
    keys = sorted(doc)
    at = [i for i, key in enumerate(keys) if key in spliced_keys]
    if not at:
        return spliced.dump(doc)
    out = []
    for key in [*keys[: at[0]], None, *keys[at[-1] + 1 :]]:
        if key is None:
            out.append(spliced.dump({k: doc[k] for k in keys[at[0] : at[-1] + 1]}))
        else:
            out.append(block(key, doc[key]))
    return "".join(out)

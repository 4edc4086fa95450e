"""YAML documents assembled from kept fragments: the same bytes as `dump_yaml` of the whole.

The emitter writes a block mapping as its keys' blocks one after the other (sorted), and a
block sequence as its items one after the other, each item's lines padded to the sequence's
indent. So a document holding one list item per cluster is the concatenation of its parts, and
an item's text at indent 0 (`dump_yaml([item])`) is its text at any indent once every line is
padded. `ItemTexts` keeps that text per distinct item (a `RoundMemo`: for the current pass and
the one before only, so a long-running hub holds the items of two passes at most); `names_block`
writes a list of plain strings. An item whose text has an empty line (a multi-line scalar)
cannot be padded line by line: its text is None and the caller emits the document whole.
Called by `publish` (PlacementDecision slices), `statusdocs`, `state` and `priorstate`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

from gitfleet.load.yamlio import dump_yaml
from reconciler.stagememo import RoundMemo


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
    """`dump_yaml([item])`, or None when a line of it is empty (it cannot be padded)."""
    text = dump_yaml([item], memo=False)
    return None if "\n\n" in text or text.startswith("\n") else text


def padded(text: str, indent: int) -> str:
    """An item's text (`item_text`) at `indent`."""
    if not indent:
        return text
    pad = " " * indent
    return pad + text[:-1].replace("\n", "\n" + pad) + "\n"


def names_block(names: Iterable[str], indent: int, texts: ItemTexts) -> str | None:
    """The items of a list of strings at `indent` (each string's text kept in `texts`); None
    when one cannot be padded."""
    out: list[str] = []
    for name in names:
        text = texts.text(("name", name), lambda: name)  # noqa: B023 (called at once)
        if text is None:
            return None
        out.append(padded(text, indent))
    return "".join(out)

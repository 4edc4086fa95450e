"""The emitter's fast paths give PyYAML's bytes: plain strings written as they are
(`yamlio.plain_as_is`), cached keys and values, lines written whole with their indentation
(sequences in sequences, mappings opening a sequence item), and kept pieces at any position.
Seeded random tables, biased to the shapes and characters that select each path."""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml

from gitfleet.load.yamlemit import Emitter
from gitfleet.load.yamlio import _EMITTER, dump_yaml, plain_as_is, pyyaml_dump

PLAIN = "acdeACDE019_./-: "
"""Characters a plain scalar may hold (a space or `:` only in some places); no `b`, `o`, `x`:
`needs_quotes("0b_")` raises (reported, not this module's to change)."""
OTHER = "#'\",[]{}&*!|>%@`?=<~\t\n\\ü\x85\u2028"
"""Characters that end a plain scalar or need quotes."""
WORDS = ["true", "null", "yes", "on", "1", "0x1F", "1e3", ".inf", "2026-01-01", "12:30", "=", "<<"]


def text(rng: random.Random) -> str:
    """A short string: mostly plain-looking, often with one character that is not."""
    if rng.random() < 0.1:
        return rng.choice(WORDS) + rng.choice(["", " ", ":", "a", "-"])
    chars = [rng.choice(PLAIN) for _ in range(rng.randint(0, 9))]
    if rng.random() < 0.3:
        chars.insert(rng.randint(0, len(chars)), rng.choice(OTHER))
    return "".join(chars)


def reference_text(value: str) -> str:
    """PyYAML's text of one string (None when it takes more than one line)."""
    dumped = pyyaml_dump(value)
    return dumped.removesuffix("\n...\n") if dumped.endswith("\n...\n") else dumped[:-1]


@pytest.mark.parametrize("seed", range(40))
def test_strings_written_as_they_are_are_what_pyyaml_writes(seed: int) -> None:
    rng = random.Random(seed)
    taken = 0
    for _ in range(500):
        value = text(rng)
        if plain_as_is(value):
            taken += 1
            assert reference_text(value) == value, value
            assert pyyaml_dump({value: value}) == f"{value}: {value}\n"
    assert taken > 100  # the table reaches the fast path


@pytest.mark.parametrize(
    "value",
    [
        "a: b",
        "a:",
        "a #b",
        " a",
        "a ",
        "a  b",
        "-a",
        "- a",
        "true",
        "yes",
        "0x1F",
        "1_000",
        "2026-01-01",
        "12:30",
        "a\tb",
        "",
        ".inf",
        "~",
        "a,b",
        "a'b",
        "ü",
        "1e3",
        "=",
        "::a",
    ],
)
def test_strings_pyyaml_writes_otherwise_are_not_taken(value: str) -> None:
    assert not plain_as_is(value) or reference_text(value) == value
    assert dump_yaml({"k": value, "l": [value]}) == pyyaml_dump({"k": value, "l": [value]})


@pytest.mark.parametrize("value", ["a", "a-b.c/d_e", "a:b", "a b c", "Ready", "x-k8s.io/name"])
def test_common_plain_strings_are_taken(value: str) -> None:
    assert plain_as_is(value)
    assert reference_text(value) == value


def node(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.4:
        return rng.choice([text(rng), text(rng), rng.randint(-5, 5), None, True, 1.5, ""])
    if roll < 0.7:
        return {text(rng) or "k": node(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return [node(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def slow_emitter() -> Emitter:
    """The general path only: every string formatted by PyYAML, no shared caches."""
    return Emitter(pyyaml_dump)


@pytest.mark.parametrize("seed", range(300))
def test_fast_paths_equal_the_general_path_and_pyyaml(seed: int) -> None:
    rng = random.Random(seed)
    doc: Any = {text(rng) or "k": node(rng, 0) for _ in range(rng.randint(1, 5))}
    if seed % 3 == 0:
        doc = [doc, [[node(rng, 2), [node(rng, 3)]], {"a": [[1, [2]], {}]}], node(rng, 1)]
    fast, slow = _EMITTER.emit(doc), slow_emitter().emit(doc)
    assert fast == slow
    assert dump_yaml(doc) == pyyaml_dump(doc)
    again = _EMITTER.emit(doc)  # every key and string now cached
    assert again == fast


@pytest.mark.parametrize("seed", range(60))
def test_kept_pieces_after_another_items_dash(seed: int) -> None:
    """A kept item that is the first of a sequence nested in a sequence (`- - key: ...`) and
    the same item elsewhere: its slot keeps it at its own indent, each use has its prefix."""
    rng = random.Random(seed)
    items = [{f"k{j}": node(rng, 2) for j in range(rng.randint(1, 3))} for _ in range(3)]
    slots: dict[int, list[Any]] = {id(item): [] for item in items}
    for _ in range(3):
        doc = [[items[0], items[1]], [items[1], items[0]], items[0], {"x": [[items[2]], items[1]]}]
        assert dump_yaml(doc, pieces=slots) == pyyaml_dump(doc)
        assert yaml.safe_load(dump_yaml(doc, pieces=slots)) == doc

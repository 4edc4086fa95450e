"""`gitfleet.load.blockread.read_block` gives the bounded reader's value or UNREAD, never another
value: a table of shapes it reads and refuses; documents the emitter writes from seeded random
values (tricky scalars, nesting, empties), which it must read; seeded random edits of them (a
character or a line changed, inserted, removed), which it may refuse but never read otherwise;
and every YAML file of the golden outputs."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from gitfleet.api import DEFAULT_LIMITS
from gitfleet.api.limits import Limits
from gitfleet.load.blockread import UNREAD, read_block
from gitfleet.load.yamlbuild import build_documents
from gitfleet.load.yamlio import dump_yaml
from tests.unit.load.test_yaml_emit_fast import text

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
FAULT = object()
"""The bounded reader refused the text."""


def bounded(source: str, limits: Limits = DEFAULT_LIMITS) -> Any:
    docs, faults = build_documents(source, limits)
    if faults or len(docs) != 1:
        return FAULT
    return docs[0].body


def agrees(source: str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """read_block's answer, checked against the bounded reader's."""
    fast = read_block(source, limits)
    if fast is not UNREAD:
        assert fast == bounded(source, limits), source
    return fast


READ = [
    ("a: 1\nb: x\n", {"a": 1, "b": "x"}),
    ("a:\n- x\n- 'y z'\nb: {}\nc: []\n", {"a": ["x", "y z"], "b": {}, "c": []}),
    (
        "l:\n- a: 1\n  b:\n    c: true\n- null\n- - 1\n  - 2\n",
        {"l": [{"a": 1, "b": {"c": True}}, None, [1, 2]]},
    ),
    ("a:\n  b:\n  - c: d\n    e: f\n  g: h\n", {"a": {"b": [{"c": "d", "e": "f"}], "g": "h"}}),
    (
        "k: sha256:0a\nt: '2026-01-01T00:00:00Z'\nm: 'it''s'\n",
        {"k": "sha256:0a", "t": "2026-01-01T00:00:00Z", "m": "it's"},
    ),
    ('q: "a\\"b\\\\c\\nd\\t"\n', {"q": 'a"b\\c\nd\t'}),
    ("'1': x\n\"a: b\": z\n", {"1": "x", "a: b": "z"}),
    (
        "i: 0x1F\nf: 1e3\no: 0o17\nz: ~\ne: ''\ns: -1\n",
        {"i": 31, "f": 1000.0, "o": 15, "z": None, "e": "", "s": -1},
    ),
    ("s:\n- - - a\n    - b\n  - c\n- {}\n- []\n", {"s": [[["a", "b"], "c"], {}, []]}),
    ("a: b, [c] {d}\nx: -y\np: ?q\nr: :s\n", {"a": "b, [c] {d}", "x": "-y", "p": "?q", "r": ":s"}),
]


@pytest.mark.parametrize(("source", "value"), READ)
def test_the_emitters_shapes_are_read(source: str, value: Any) -> None:
    assert agrees(source) == value


REFUSED = [
    "a: 1",  # no final line break
    "a: 1\r\n",
    "a:\t1\n",
    "a: 1 # note\n",
    "# note\na: 1\n",
    "a: 1\n\nb: 2\n",
    "a: é\n",
    "---\na: 1\n",
    "a: 1\n...\n",
    "a: &x 1\nb: *x\n",
    "a: !!str 1\n",
    "a: [1, 2]\n",
    "a: {b: 1}\n",
    "a: |\n  text\n",
    "a: 'two\n  lines'\n",
    "a: plain\n  more\n",
    "a: 1\na: 2\n",
    "1: x\n",
    "true: x\n",
    "<<: {}\n",
    "a: yes\n",
    "a: 09\n",
    "a:\n",
    "a:\nb: 1\n",
    "a:\n  - x\n",  # an indented sequence: not the emitter's
    "a:  x\n",
    "a: x \n",
    "? a\n: b\n",
    "- \n",
    "-\n",
    "x\n",
    "a: 1\n- b\n",
    "- a\nb: 1\n",
    "a: 1\n  b: 2\n",
    'a: "\\x41"\n',
    'a: "\\u0041"\n',
    'a: "\\/"\n',
    "a: 'x' y\n",
    "a: '\n",
    "%YAML 1.1\n---\na: 1\n",
    "- a\n- b\n",  # a sequence at the top: the bounded reader refuses it
    "k" * 1100 + ": 1\n",  # libyaml refuses an implicit key this long
    "'" + "k" * 1100 + "': 1\n",
    "a: \x00\n",
]


@pytest.mark.parametrize("source", REFUSED)
def test_other_shapes_are_left_to_the_bounded_reader(source: str) -> None:
    assert agrees(source) is UNREAD


def test_documents_near_the_limits_are_left_to_the_bounded_reader() -> None:
    deep = "".join(f"{'  ' * n}k{n}:\n" for n in range(70)) + f"{'  ' * 70}x: 1\n"
    assert bounded(deep) is FAULT and read_block(deep, DEFAULT_LIMITS) is UNREAD
    wide = "w:\n" + "".join(f"- {n}\n" for n in range(50))
    assert read_block(wide, Limits(max_yaml_nodes=40)) is UNREAD
    assert read_block(wide, DEFAULT_LIMITS) == {"w": list(range(50))}


def test_what_it_reads_is_a_fresh_value_each_time() -> None:
    first = read_block("a: {}\nb:\n- []\n", DEFAULT_LIMITS)
    first["a"]["x"] = 1
    first["b"][0].append(2)
    assert read_block("a: {}\nb:\n- []\n", DEFAULT_LIMITS) == {"a": {}, "b": [[]]}


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 4 and roll < 0.25:
        return {text(rng) or "k": _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    if depth < 4 and roll < 0.45:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return rng.choice([text(rng), text(rng), rng.randint(-9, 99), None, True, 1.5])


def _documents(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    docs: list[str] = []
    while len(docs) < count:
        value = _value(rng)
        if isinstance(value, dict) and value:
            docs.append(dump_yaml(value))
    return docs


def test_what_the_emitter_writes_reads_back_as_the_bounded_reader_reads_it() -> None:
    docs = _documents(7, 600)
    answers = [agrees(doc) for doc in docs]
    ascii_docs = [a for doc, a in zip(docs, answers, strict=True) if doc.isascii()]
    read = sum(a is not UNREAD for a in ascii_docs)
    assert read >= 0.6 * len(ascii_docs)  # the rest hold comments, multi-line text, ...


def _edited(rng: random.Random, doc: str) -> str:
    at = rng.randrange(len(doc))
    pieces = [" ", "- ", ":", ": ", "'", '"', "\\", "#", "\n", "  ", "{}", "[]", "&a ", "*a", "!"]
    choice = rng.random()
    if choice < 0.4:
        return doc[:at] + rng.choice(pieces) + doc[at:]
    if choice < 0.7:
        return doc[:at] + doc[at + 1 :]
    lines = doc.split("\n")
    n = rng.randrange(len(lines))
    lines[n] = " " * rng.randint(0, 6) + lines[n].lstrip(" ")
    return "\n".join(lines)


def test_edited_documents_are_read_as_the_bounded_reader_reads_them_or_left_to_it() -> None:
    rng = random.Random(11)
    refused = read = 0
    for doc in _documents(3, 300):
        for _ in range(10):
            edited = _edited(rng, doc)
            fast = agrees(edited)  # never a value other than the bounded reader's
            if bounded(edited) is FAULT:
                assert fast is UNREAD, edited
            refused += fast is UNREAD
            read += fast is not UNREAD and edited != doc
    assert refused > 500 and read > 500  # both answers are exercised


def test_every_golden_output_document_reads_as_the_bounded_reader_reads_it() -> None:
    files = sorted(GOLDEN.glob("*/expected/**/*.yaml"))
    assert len(files) > 500
    read = sum(agrees(f.read_text()) is not UNREAD for f in files)
    assert read >= 0.95 * len(files)

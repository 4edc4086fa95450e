"""The fast emitter writes exactly PyYAML's bytes (or declines): seeded random documents full of
scalars that YAML could misread, nested empties, block scalars, and long keys."""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml

from gitfleet.load.yamlio import _EMITTER, dump_yaml, pyyaml_dump

TRICKY = [
    "",
    "yes",
    "No",
    "on",
    "y",
    "null",
    "~",
    "true",
    "False",
    "123",
    "0x1F",
    "0o17",
    "1.0",
    "1e3",
    ".inf",
    "-.nan",
    "2026-11-21",
    "12:30",
    "a: b",
    "#comment",
    "- item",
    "* star",
    "&anchor",
    "!tag",
    "%x",
    "@at",
    "`tick",
    "'single'",
    '"double"',
    "{a}",
    "[b]",
    "x, y",
    " lead",
    "trail ",
    "tab\there",
    "multi\nline",
    "multi\nline\n",
    "\nlead break",
    "a\n\nb",
    "ünïcödé",
    "日本語",
    "emoji 🚀",
    "back\\slash",
    "colon:inside",
    "http://x.y/z?a=b#f",
    "sha256:abc",
    "${MEMBER-CLUSTER-NAME}",
    "0",
    "-1",
    "+1",
    "1_000",
    "0777",
    "09",
    "=",
    "<<",
]


def scalar(rng: random.Random) -> Any:
    kind = rng.randrange(7)
    if kind == 0:
        return rng.choice(TRICKY)
    if kind == 1:
        return rng.randint(-(10**12), 10**12)
    if kind == 2:
        return rng.choice([0.1, -2.5, 1e20, 3.0, float("inf")])
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return "x" * rng.randint(100, 300)
    return "".join(rng.choice("abc-._/ :#'\"\n") for _ in range(rng.randint(0, 12)))


def node(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.45:
        return scalar(rng)
    if roll < 0.75:
        return {
            str(scalar(rng)) if rng.random() < 0.3 else f"k{rng.randrange(50)}": node(
                rng, depth + 1
            )
            for _ in range(rng.randint(0, 5))
        }
    return [node(rng, depth + 1) for _ in range(rng.randint(0, 4))]


@pytest.mark.parametrize("seed", range(300))
def test_fast_emitter_equals_pyyaml(seed: int) -> None:
    rng = random.Random(seed)
    doc = {f"top{i}": node(rng, 0) for i in range(rng.randint(1, 6))}
    fast = _EMITTER.emit(doc)
    reference = pyyaml_dump(doc)
    if fast is not None:
        assert fast == reference
    assert dump_yaml(doc) == reference
    assert yaml.safe_load(reference) is not None


@pytest.mark.parametrize("seed", range(200))
def test_fast_emitter_equals_pyyaml_for_a_list(seed: int) -> None:
    """A top-level block sequence (a cluster index row is emitted as a one-item list)."""
    rng = random.Random(seed)
    doc = [node(rng, 1) for _ in range(rng.randint(1, 4))]
    doc += [{"key": "a", "n": [1, {"x": None}], "m": {}}]
    fast = _EMITTER.emit(doc)
    reference = pyyaml_dump(doc)
    if fast is not None:
        assert fast == reference
    assert dump_yaml(doc) == reference


@pytest.mark.parametrize(
    "doc",
    [
        {"k" * 200: 1},  # PyYAML's `? key` form
        {1: "int key"},
        {"a": ("tuple",)},
        {"a": object()},
    ],
)
def test_unusual_documents_go_to_pyyaml(doc: dict[Any, Any]) -> None:
    assert _EMITTER.emit(doc) is None


@pytest.mark.parametrize("seed", range(100))
def test_kept_pieces_give_the_same_bytes(seed: int) -> None:
    """List items whose lines are kept in slots (`dump_yaml(pieces=...)`) and handed to later
    documents - at the top, nested deeper, twice in one list - give PyYAML's bytes."""
    rng = random.Random(seed)
    items = [{f"k{j}": node(rng, 2) for j in range(rng.randint(1, 4))} for _ in range(6)]
    slots: dict[int, list[Any]] = {id(item): [] for item in items}
    fast = False
    for _ in range(4):
        chosen = [rng.choice(items) for _ in range(rng.randint(1, 5))]
        doc = {
            "entries": chosen,
            "deeper": [{"list": chosen[::-1], "n": 1}, chosen],
            "other": [node(rng, 1) for _ in range(2)],
        }
        assert dump_yaml(doc, pieces=slots) == pyyaml_dump(doc)
        assert dump_yaml(chosen, pieces=slots) == pyyaml_dump(chosen)
        fast = fast or _EMITTER.emit(doc) is not None
    assert any(slot for slot in slots.values()) or not fast  # kept once the fast emitter wrote


def test_pieces_of_a_document_pyyaml_writes() -> None:
    """A document the fast emitter cannot write goes to PyYAML with its pieces ignored."""
    item = {"a": 1}
    doc = {"entries": [item], "k" * 200: 1}
    assert dump_yaml(doc, pieces={id(item): []}) == pyyaml_dump(doc)


@pytest.mark.parametrize("value", ["\n", "\n\n", "a\n", " \n", "\n a", "\t\n", ""])
def test_line_break_values_keep_their_line_breaks(value: str) -> None:
    """A value of line breaks alone is a `|2+` block scalar whose lines are content: it was
    once cut to `|2+` (read back as another value)."""
    for doc in ({"a": value, "b": 1}, {"b": [value]}, [value]):
        text = dump_yaml(doc)
        assert text == pyyaml_dump(doc)
        assert yaml.safe_load(text) == doc

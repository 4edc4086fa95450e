"""Scalar typing, decoding, locating fields and canonical dumping."""

from __future__ import annotations

import math
from typing import Any

import pytest
import yaml

from gitfleet.api.limits import Limits
from gitfleet.load.yamlio import decode_text, dump_yaml, locate, parse_documents, top_level_line


def load_one(text: str) -> Any:
    docs, errors = parse_documents("v.yaml", text, Limits())
    assert errors == []
    return docs[0].body["v"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-01", "2024-01-01"),
        ("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
        ("1:20", "1:20"),
        ("12:30:00", "12:30:00"),
        ("true", True),
        ("False", False),
        ("'yes'", "yes"),
        ('"no"', "no"),
        ("!!bool yes", True),
        ("~", None),
        ("null", None),
        ("", None),
        ("0644", 420),
        ("0o17", 15),
        ("0x1F", 31),
        ("0b101", 5),
        ("0x_", "0x_"),  # a base prefix without a digit is a string (PyYAML fails on it)
        ("-0b__", "-0b__"),
        ("0o_", "0o_"),
        ("0x_1F", 31),
        ("-12", -12),
        ("1_000", 1000),
        ("1.5", 1.5),
        ("1e3", 1000.0),
        ("-.inf", -math.inf),
        ("'0644'", "0644"),
        ("!!str 12", "12"),
        ("! 12", "12"),
        ("!!float 3", 3.0),
        ("!!int '0x10'", 16),
        ("=", "="),
        ("nginx:1.25", "nginx:1.25"),
        ("500m", "500m"),
        ("|\n  line1\n  line2\n", "line1\nline2\n"),
    ],
)
def test_scalar_values(text: str, expected: Any) -> None:
    assert load_one(f"v: {text}\n") == expected


def test_merge_keys_and_aliases() -> None:
    text = "base: &b {x: 1, y2: 2}\nv:\n  <<: *b\n  x: 3\n  list: &l [1, 2]\n  again: *l\n"
    value = load_one(text)
    assert value == {"x": 3, "y2": 2, "list": [1, 2], "again": [1, 2]}
    value["list"].append(9)
    assert value["again"] == [1, 2]


@pytest.mark.parametrize(
    ("data", "text", "error"),
    [
        (b"a: 1\n", "a: 1\n", None),
        (b"\xef\xbb\xbfa: 1\n", "a: 1\n", None),
        (b"a: caf\xc3\xa9\n", "a: caf\u00e9\n", None),
        (b"a: 1\nb: \xff\n", None, "x.yaml:2: not valid UTF-8 text (invalid byte at offset 8)"),
        (b"\xef\xbb\xbf\xc3(", None, "x.yaml:1: not valid UTF-8 text (invalid byte at offset 3)"),
        (b"\xed\xa0\x80", None, "x.yaml:1: not valid UTF-8 text (invalid byte at offset 0)"),
    ],
)
def test_decode_text(data: bytes, text: str | None, error: str | None) -> None:
    decoded, problem = decode_text("x.yaml", data)
    assert decoded == text
    assert (str(problem) if problem else None) == error


LOCATE_TEXT = """first: doc
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: x
  labels:
    app.kubernetes.io/name: foo
spec:
  list:
  - a
  - b: 1
    c:
    - z
"""


@pytest.mark.parametrize(
    ("doc", "field", "line"),
    [
        (1, "", 3),
        (1, "kind", 4),
        (1, "metadata.name", 6),
        (1, 'metadata.labels["app.kubernetes.io/name"]', 8),
        (1, "spec.list[0]", 11),
        (1, "spec.list[1].c[0]", 14),
        (1, "spec.list[1].missing", 12),
        (1, "spec.list[7]", 10),
        (1, "nothing.here", 3),
        (0, "first", 1),
        (2, "first", None),
    ],
)
def test_locate(doc: int, field: str, line: int | None) -> None:
    assert locate(LOCATE_TEXT, doc, field) == line


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("beat: 1\n", 1),
        ("a: 1\nbeat: 2\n", 2),
        ("a:\n  beat: 1\n  b: [beat]\nbeat: 2\n", 4),  # a nested key of the same name
        ("a:\n- beat: 1\n- {beat: 2}\nc: d\nbeat: 3\n", 5),
        ("a: beat\nbeat: 2\n", 2),  # the name as a value is no key
        ("? {beat: 1}\n: x\n? [beat]\n: beat\n'beat': 2\n", 5),  # complex keys first
        ("a: &x {beat: 1}\nb: *x\nbeat:\n  2\n", 3),
        ("{a: 1, beat: 2}\n", 1),
        ("%YAML 1.1\n---\na: 1\nbeat: 2\n", 4),
        ("a:\n  beat: 1\n", None),
        ("- beat: 1\n", None),
        ("beat\n", None),
        ("", None),
        ("a: 1\n---\nbeat: 2\n", None),  # in a later document only
        ("a: [1\nbeat: 2\n", None),  # unreadable before the key
    ],
)
def test_top_level_line_is_where_locate_finds_a_top_level_key(text: str, line: int | None) -> None:
    """The line of a key of the top-level mapping, reading only up to it; where it is there,
    the line `locate` gives."""
    assert top_level_line(text, "beat") == line
    if line is not None:
        assert locate(text, 0, "beat") == line


def test_dump_is_canonical() -> None:
    shared = {"k": "v"}
    obj = {"z": [shared, shared], "a": {"multi": "l1\nl2\n", "n": None, "t": (1, 2)}}
    assert dump_yaml(obj) == (
        "a:\n  multi: |\n    l1\n    l2\n  'n': null\n  t:\n  - 1\n  - 2\nz:\n- k: v\n- k: v\n"
    )


TRICKY = [
    "yes",
    "No",
    "on",
    "y",
    "n",
    "1e3",
    "0644",
    "09",
    "1:20",
    "2024-01-01",
    "",
    "~",
    "null",
    "true",
    "=",
    "<<",
    "0x10",
    "0x_",
    "+0b_",
    ".inf",
    "- a",
    "a: b",
    "#c",
    " lead",
    "trail ",
    "caf\u00e9",
    "line\nbreak",
    "tab\there",
    "'quoted'",
    '"dq"',
    "*alias",
    "&anchor",
    "!tag",
    "%",
    "@",
    "`",
]


@pytest.mark.parametrize("value", TRICKY)
def test_dumped_strings_read_back_as_the_same_string(value: str) -> None:
    text = dump_yaml({"v": value, "list": [value]})
    assert load_one(text) == value
    assert yaml.safe_load(text) == {"v": value, "list": [value]}  # PyYAML (YAML 1.1) too
    docs, _ = parse_documents("v.yaml", text, Limits())
    assert docs[0].body["list"] == [value]

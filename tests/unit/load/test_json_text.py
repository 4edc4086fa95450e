"""`jsontext`: JSON text is read with `json.loads` only when the YAML reader reads it to the very
same value; every other text is left to the YAML reader (None), which names its problems."""

from __future__ import annotations

import pytest
import yaml

from gitfleet.api.limits import Limits
from gitfleet.load.jsontext import json_body, json_text
from gitfleet.load.yamlio import parse_documents

LIMITS = Limits()

READ = {
    "strings, ints, bools, null": '{"a": "x", "b": 1, "c": -20, "d": true, "e": null, "f": false}',
    "nested": '{"a": {"b": [1, {"c": []}, {}]}, "z": [[], [[]]]}',
    "escapes": r'{"a": "line\nbreak \"q\" \\ \/ \t \u00e9 \u0085", "b": "\u0000"}',
    "unicode as it is": '{"a": "日本 ü 😀"}',
    "big int": '{"a": 123456789012345678901234567890}',
    "yaml-looking strings": '{"a": "yes", "b": "1.5", "c": "~", "d": "<<", "<<": "x"}',
    "json_text output": json_text({"k": ["v", 1, None, {"x": "y: z # c"}], "a": "'q'"}).strip(),
    "trailing whitespace": '{"a": 1}\n\n',
    "escaped line breaks": r'{"a": "x\u2028y\u2029z\u0085"}',
}

LEFT_TO_YAML = {
    "a float": '{"a": 1.5}',
    "an exponent": '{"a": 1e5}',
    "NaN": '{"a": NaN}',
    "Infinity": '{"a": -Infinity}',
    "a key twice": '{"a": 1, "a": 2}',
    "a key twice, nested": '{"b": {"a": 1, "a": 2}}',
    "a surrogate escape": r'{"a": "\ud83d\ude00"}',
    "a character YAML refuses": '{"a": "\x7f"}',
    "a character YAML refuses, not ASCII": '{"a": "\x7f", "b": "ü"}',
    "a control character in a string": '{"a": "x\x0by"}',
    "a control character between tokens": '{\x0c"a": 1}',
    "a C1 control character": '{"a": "\x9f"}',
    "a line separator (YAML 1.1 may read a break)": '{"a": "x\u2028y"}',
    "a paragraph separator": '{"a": "x\u2029y"}',
    "NEL": '{"a": "x\x85y"}',
    "not an object": '["a"]',
    "leading space": ' {"a": 1}',
    "YAML": "a: 1\n",
    "YAML flow": "{a: 1}",
    "broken": '{"a": 1',
    "two objects": '{"a": 1}\n{"b": 2}',
    "a comment": '{"a": 1} # c',
    "deep": '{"a": ' + "[" * 40 + "]" * 40 + "}",
    "very deep": '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}",
}


@pytest.mark.parametrize("case", sorted(READ))
def test_read_as_the_yaml_reader_reads_it(case: str) -> None:
    text = READ[case]
    body = json_body(text, LIMITS)
    docs, errors = parse_documents("f.yaml", text, LIMITS)
    assert body is not None and errors == [] and len(docs) == 1
    assert body == docs[0].body
    assert body == yaml.safe_load(text)


@pytest.mark.parametrize("case", sorted(LEFT_TO_YAML))
def test_anything_else_is_left_to_the_yaml_reader(case: str) -> None:
    assert json_body(LEFT_TO_YAML[case], LIMITS) is None


def test_well_within_the_node_limit_only() -> None:
    text = '{"a": [' + ", ".join(["1"] * 60) + "]}"
    assert json_body(text, LIMITS) is not None
    assert json_body(text, Limits(max_yaml_nodes=200)) is not None
    assert json_body(text, Limits(max_yaml_nodes=100)) is None  # 62 nodes: more than half


def test_json_text_is_deterministic_yaml() -> None:
    value = {
        "b": [{"y": 1, "x": "ü"}],
        "a": {"c": None, "d": True},
        "e": "multi\nline \u2028 \u2029 \x85 \\\u2028",
    }
    text = json_text(value)
    assert text == json_text(dict(reversed(list(value.items()))))
    assert text.startswith('{\n "a": {\n  "c": null,') and text.endswith("}\n")
    assert "ü" in text  # UTF-8 as it is
    assert not {"\u2028", "\u2029", "\x85"} & set(text)  # escaped: YAML 1.1 may read breaks
    assert yaml.safe_load(text) == value
    assert json_body(text, LIMITS) == value

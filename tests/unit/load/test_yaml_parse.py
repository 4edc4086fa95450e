"""Safe YAML parsing: every refused input names file, line, document and field, and the other
documents of the same file still load."""

from __future__ import annotations

import time

import pytest

from gitfleet.api.limits import Limits
from gitfleet.load.yamlio import locate, parse_documents

GOOD = "---\ngood: 1\n"

BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9)
)

# (case id, bad document text, error line, field, message fragment)
BAD = [
    ("billion-laughs", BILLION_LAUGHS, 7, "g[0]", "nodes after alias expansion"),
    ("recursive-alias", "a: &a\n  b: *a\n", 2, "a.b", "recursive alias *a"),
    ("undefined-alias", "a: *nope\n", 1, "a", "undefined alias *nope"),
    (
        "deep-flow",
        "x: " + "[" * 10_000 + "]" * 10_000 + "\n",
        1,
        "x" + "[0]" * 63,
        "deeper than 64",
    ),
    ("deep-block", "".join(" " * i + "k:\n" for i in range(80)), 65, "k" + ".k" * 63, "deeper"),
    ("custom-tag", "a: 1\nb: !foo bar\n", 2, "b", "tag !foo is not allowed"),
    ("python-object", "cmd: !!python/object/apply:os.system [ls]\n", 1, "cmd", "!!python/object"),
    ("binary", "a: !!binary aGVsbG8=\n", 1, "a", "tag !!binary is not allowed"),
    ("set", "a: !!set {x, y}\n", 1, "a", "tag !!set is not allowed"),
    ("omap", "a: !!omap [x: 1]\n", 1, "a", "tag !!omap is not allowed"),
    ("timestamp-tag", "a: !!timestamp 2024-01-01\n", 1, "a", "tag !!timestamp is not allowed"),
    ("bad-explicit-int", "a: !!int twelve\n", 1, "a", "not a valid !!int"),
    ("duplicate-key", "a: 1\nb:\n  c: 1\n  c: 2\n", 4, "b.c", 'duplicate key "c" (first at line'),
    ("int-key", "metadata:\n  labels:\n    1: x\n", 3, "metadata.labels", "integer key 1"),
    ("bool-key", "true: x\n", 1, "", "boolean key true"),
    ("null-key", "~: x\n", 1, "", "null key"),
    ("collection-key", "? [a]\n: 1\n", 1, "", "not collections"),
    ("yes", "enabled: yes\n", 1, "enabled", "ambiguous unquoted value"),
    ("Off", "a:\n- Off\n", 2, "a[0]", "ambiguous unquoted value"),
    ("y-key", "y: 1\n", 1, "", "ambiguous unquoted value"),
    ("leading-zero", "port: 09\n", 1, "port", "leading zero"),
    ("scalar-doc", "just text\n", 1, "", "document is a string, not a mapping"),
    ("list-doc", "- a\n- b\n", 1, "", "document is a sequence, not a mapping"),
    ("control-char", "a: bell\x07\n", 1, "", "character U+0007 is not allowed"),
    ("syntax", "a: [1, 2\nb: 3\n", 2, "", "YAML syntax error"),
    ("bad-merge", "a: &a 1\nb:\n  <<: *a\n", 3, "b", "merge key << needs a mapping"),
]


@pytest.mark.parametrize(
    ("text", "line", "field", "fragment"), [c[1:] for c in BAD], ids=[c[0] for c in BAD]
)
def test_bad_document_is_reported_and_others_load(
    text: str, line: int, field: str, fragment: str
) -> None:
    source = "first: 0\n---\n" + text + GOOD
    docs, errors = parse_documents("apps/x.yaml", source, Limits())
    assert len(errors) == 1, errors
    error = errors[0]
    assert (error.file, error.doc, error.field) == ("apps/x.yaml", 1, field)
    assert error.line == line + 2
    assert fragment in error.message
    assert str(error).startswith(f"apps/x.yaml:{line + 2}:")
    assert [d.body for d in docs] == [{"first": 0}, {"good": 1}]
    assert [d.doc for d in docs] == [0, 2]


@pytest.mark.parametrize(
    ("secret_text", "secret"),
    [("password: !!int hunter2\n", "hunter2"), ("token: YES\n", "YES")],
)
def test_errors_never_echo_values(secret_text: str, secret: str) -> None:
    _, errors = parse_documents("resources/s.yaml", secret_text, Limits())
    assert errors and secret not in str(errors[0])


def test_alias_bomb_is_refused_without_expanding_it() -> None:
    """Refused by counting, not by expanding (10**9 nodes would never finish); the generous
    bound only catches a hang, it is not a performance measurement."""
    start = time.perf_counter()
    docs, errors = parse_documents("a.yaml", BILLION_LAUGHS, Limits())
    assert not docs and errors and "maxYamlNodes" in errors[0].message
    assert time.perf_counter() - start < 30.0


@pytest.mark.parametrize(
    ("limits", "text", "fragment"),
    [
        (Limits(max_yaml_nodes=5), "a: [1, 2, 3, 4, 5]\n", "more than 5 nodes"),
        (Limits(max_yaml_depth=2), "a: {b: {c: 1}}\n", "deeper than 2 levels"),
        (Limits(max_yaml_depth=2), "x: &x {k: 1}\na: {b: *x}\n", "deeper than 2 levels"),
    ],
)
def test_limits_are_configurable(limits: Limits, text: str, fragment: str) -> None:
    _, errors = parse_documents("a.yaml", text, limits)
    assert len(errors) == 1 and fragment in errors[0].message


def test_too_many_documents() -> None:
    text = "".join(f"---\ni: {i}\n" for i in range(5))
    docs, errors = parse_documents("many.yaml", text, Limits(max_documents_per_file=3))
    assert [d.body["i"] for d in docs] == [0, 1, 2]
    assert len(errors) == 1 and "more than 3 documents" in errors[0].message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("# only a comment\n", []),
        ("---\n---\n---\na: 1\n", [(2, 4)]),
        ("a: 1\n---\n\n---\nb: 2\n", [(0, 1), (2, 5)]),
        ("---\n~\n---\nb: 2\n", [(1, 4)]),
        ("# header\n\nkind: X\n", [(0, 3)]),
    ],
)
def test_empty_documents_are_skipped(text: str, expected: list[tuple[int, int]]) -> None:
    docs, errors = parse_documents("a.yaml", text, Limits())
    assert errors == []
    assert [(d.doc, d.line) for d in docs] == expected


def test_syntax_error_resumes_at_next_document() -> None:
    text = "a: 1\n---\nb: [1,\n  c: {\n---\nd: 4\n---\ne: 'open\n---\nf: 6\n"
    docs, errors = parse_documents("a.yaml", text, Limits())
    assert [d.body for d in docs] == [{"a": 1}, {"d": 4}, {"f": 6}]
    assert [d.doc for d in docs] == [0, 2, 4]
    assert [(e.doc, e.line) for e in errors] == [(1, 5), (3, 9)]


def test_source_doc_fields() -> None:
    text = "a: 1\n---\n# c\nb: 2\n"
    docs, _ = parse_documents("t.yaml.j2", text, Limits(), renderer="jinja")
    assert [(d.file, d.doc, d.line, d.renderer) for d in docs] == [
        ("t.yaml.j2", 0, 1, "jinja"),
        ("t.yaml.j2", 1, 4, "jinja"),
    ]
    assert docs[1].text == text


def test_crlf_text_lines_and_locate() -> None:
    text = "a: 1\r\n---\r\nkind: X\r\nmetadata:\r\n  name: 1\r\n"
    docs, errors = parse_documents("w.yaml", text, Limits())
    assert [(d.doc, d.line, d.body) for d in docs] == [
        (0, 1, {"a": 1}),
        (1, 3, {"kind": "X", "metadata": {"name": 1}}),
    ]
    assert errors == []
    assert locate(text, 1, "metadata.name") == 5


DEEP = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize(
    ("text", "line", "field", "fragment", "loaded"),
    [
        ("x: " + DEEP + "\n", 1, "x" + "[0]" * 63, "deeper than 64", []),
        ("{x: " + DEEP + "}\n", 1, "x" + "[0]" * 63, "deeper than 64", []),
        ("a: 1\na: 2\nx: " + DEEP + "\n", 2, "a", "duplicate key", []),
        ("x: " + DEEP + "\ny: [1\n", 1, "x" + "[0]" * 63, "deeper than 64", []),
        ("x: " + DEEP + "\n...\nnext: 1\n", 1, "x" + "[0]" * 63, "deeper", [{"next": 1}]),
    ],
)
def test_our_limits_report_before_libyamls_own(
    text: str, line: int, field: str, fragment: str, loaded: list[object]
) -> None:
    """libyaml refuses flow nesting past its own limit while scanning ahead, before it emits
    one event of the document; gitfleet's depth rule must still be the one reported, with its
    field path, and every other document must load."""
    source = "first: 0\n---\n" + text + GOOD
    docs, errors = parse_documents("apps/x.yaml", source, Limits())
    assert [(e.doc, e.line, e.field) for e in errors] == [(1, line + 2, field)], errors
    assert fragment in errors[0].message
    assert [d.body for d in docs] == [{"first": 0}, *loaded, {"good": 1}]


def test_depth_limit_above_libyamls_own_is_honoured() -> None:
    text = "x: " + "[" * 1500 + "]" * 1500 + "\n"
    docs, errors = parse_documents("a.yaml", text, Limits(max_yaml_depth=2000))
    assert not errors and len(docs) == 1

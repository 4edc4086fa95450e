"""Name templates (`reconciler.nametemplate`): a manifest made from the template equals the
manifest of the object applied with the name (and label values) itself, byte for byte and hash
for hash, or the template refuses (the caller then applies the override with the values)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from gitfleet.api.canonical import canonical_json
from reconciler.manifests import manifest_of
from reconciler.nametemplate import TOKEN, _holding, instantiate, label_token, template_of

NAMES = ["eu-1", "a", "prod-west-00042", "no", "on", "off", "yes", "null", "true", "e1", "x" * 63]
NAMES += ["nan", "inf", "y", "n", "o-n", "t-rue", "a1b2c3"]


def _configmap(name: str, **data: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "web", "labels": {"cluster": name}},
        "data": {"cluster": name, **data},
    }


SHAPES: dict[str, Any] = {
    "whole value": lambda n: _configmap(n),
    "inside text": lambda n: _configmap(n, url=f"https://{n}.example.com/x?y=1"),
    "after a prefix": lambda n: _configmap(n, team=f"o{n}", other=f"{n}-edited"),
    "quoted anyway": lambda n: _configmap(n, note=f"{n}: #not a comment", lead=f"- {n}"),
    "multi-line": lambda n: _configmap(n, script=f"echo {n}\nexit 0\n"),
    "in a list": lambda n: {**_configmap(n), "items": [n, {"name": n, "n": 1}]},
    "unicode around": lambda n: _configmap(n, note=f"größe {n} ✓"),
}


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
@pytest.mark.parametrize("name", NAMES)
def test_template_gives_the_manifest_of_the_named_object(shape: str, name: str) -> None:
    make = SHAPES[shape]
    template = template_of(make(TOKEN))
    assert template is not None
    direct = manifest_of(make(name))
    made = instantiate(template, name)
    if made is None:  # refused: only where the name would change how a string is written
        assert (
            name in ("no", "on", "off", "yes", "null", "true", "y", "n")
            or shape == "after a prefix"
        )
        return
    assert made == (direct.file, direct.data, direct.hash)
    assert template.identity == direct.identity


LABEL_VALUES = ["eu", "A.b_c", "1.5", "true", "no", "0x1F", "2001-12-14", "", "a: b", "x" * 64]


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
@pytest.mark.parametrize("value", LABEL_VALUES)
def test_template_gives_the_manifest_of_the_object_with_a_label_value(
    shape: str, value: str
) -> None:
    """The same with a label value (here beside the name: `x-<name>` stands in the list)."""
    make = SHAPES[shape]
    template = template_of({**make(label_token(0)), "extra": [f"x-{TOKEN}"]})
    assert template is not None
    made = instantiate(template, "eu-1", (value,))
    if made is None:  # refused: a value that is written otherwise or is no label value
        assert value in ("1.5", "true", "no", "0x1F", "2001-12-14", "", "a: b", "x" * 64)
        return
    direct = manifest_of({**make(value), "extra": ["x-eu-1"]})
    assert made == (direct.file, direct.data, direct.hash)


@pytest.mark.parametrize("name", ["1abc", "Eu-1", "eu_1", "eu-", "", "a" * 64, "eu.1"])
def test_names_that_are_not_plain_labels_are_refused(name: str) -> None:
    template = template_of(_configmap(TOKEN))
    assert template is not None
    assert instantiate(template, name) is None


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{TOKEN}"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {TOKEN: "x"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": TOKEN}},
    ],
    ids=["in the name", "in a key", "in the namespace"],
)
def test_the_stand_in_in_a_key_or_the_identity_has_no_template(obj: dict[str, Any]) -> None:
    assert template_of(obj) is None


def test_quoting_is_remembered_per_string_not_per_shape() -> None:
    """A name that needs quotes is refused even right after a name of its length that did not
    (the quoting of instantiated strings is remembered by the string itself)."""
    template = template_of(_configmap(TOKEN))
    assert template is not None
    for plain, special in [("eu", "no"), ("abcd", "null"), ("x", "y")]:
        assert instantiate(template, plain) is not None
        assert instantiate(template, special) is None


def _walk(value: Any, keys: bool = False) -> list[tuple[str, bool]]:
    if isinstance(value, str):
        return [(value, keys)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [(k, True), *_walk(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _walk(v)]
    return []


PIECES = [TOKEN, 'say "hi"', "back\\slash", "größe ✓", "\n", "\\u0022", ":", '":', "1.5"]


def _nested(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 2 or roll < 0.3:
        return "".join(rng.sample(PIECES, rng.randrange(1, 3))) if roll < 0.25 else rng.random()
    if roll < 0.65:
        return {"".join(rng.sample(PIECES, 1)) + str(i): _nested(rng, depth + 1) for i in range(3)}
    return [_nested(rng, depth + 1) for _ in range(3)]


def test_strings_holding_the_stand_in_are_found_in_the_json_text() -> None:
    """`_holding` (a scan of the canonical JSON) equals a walk of the object: the strings
    that hold the stand-in, or None when a key does; quotes, backslashes and `":` inside
    strings do not confuse it."""
    rng = random.Random(2)
    for _ in range(500):
        obj = {"data": _nested(rng)}
        walked = [(s, key) for s, key in _walk(obj) if TOKEN in s]
        expected = None if any(key for _, key in walked) else sorted(s for s, _ in walked)
        found = _holding(canonical_json(obj))
        assert (None if found is None else sorted(found)) == expected

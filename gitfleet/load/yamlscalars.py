"""Scalar typing for fleet YAML: what a plain or tagged scalar means, or why it is refused.

Only the core types exist: str, int, float, bool, null. Plain scalars resolve like Kubernetes'
reader (go-yaml v2) where the YAML dialects agree: `true`/`false`, `null`/`~`/empty, decimal,
`0x`, `0o`, `0b` and leading-zero octal integers (`0644` is 420), floats with an exponent
(`1e3`), `.inf`/`.nan`. Implicit timestamps and base-60 numbers are NOT resolved (they stay the
string the user wrote). Plain values that YAML 1.1 readers (kubectl) and YAML 1.2 readers
(kustomize) read differently — `yes`/`no`/`on`/`off`/`y`/`n` and leading-zero numbers like `09`
— are refused rather than silently guessed. Error messages never echo the value (it may be a
secret). `needs_quotes()` tells the dumper which strings must be quoted to read back as strings.
Called by `gitfleet.load.yamlbuild` and `gitfleet.load.yamlio.dump_yaml`.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

import yaml

CORE = "tag:yaml.org,2002:"

_SPECIAL_FIRST = frozenset("~nNtTfFyYoO0123456789+-.")
"""First characters of every non-string plain scalar; anything else is a string at once."""
_NULL = re.compile(r"~|null|Null|NULL|")
_BOOL = re.compile(r"true|True|TRUE|false|False|FALSE")
_BOOL_11 = re.compile(r"y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF")
_INT = re.compile(
    r"[-+]?(?:0b_*[01][01_]*|0o_*[0-7][0-7_]*|0x_*[0-9a-fA-F][0-9a-fA-F_]*|0[0-7_]+|0|[1-9][0-9_]*)"
)
"""A base prefix needs a digit after it: `0x_` is a string (as kubectl's and kustomize's
readers have it; PyYAML's constructor fails on it, so `needs_quotes` quotes it)."""
_LEADING_ZERO = re.compile(r"[-+]?0[0-9_]+")
_FLOAT = re.compile(
    r"[-+]?(?:\.[0-9][0-9_]*|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)

_YAML11: Any = yaml.resolver.Resolver()

AMBIGUOUS_BOOL = (
    "ambiguous unquoted value (yes/no/on/off/y/n): YAML 1.1 readers such as kubectl take it "
    "as a boolean, YAML 1.2 readers as a string; write true or false, or quote it"
)
AMBIGUOUS_NUMBER = (
    "ambiguous unquoted number with a leading zero: YAML readers disagree whether it is "
    "octal, decimal or a string; quote it or drop the leading zero"
)


class ScalarError(ValueError):
    """A scalar that cannot be typed safely; the message names the rule, never the value."""


def short_tag(tag: str) -> str:
    """`tag:yaml.org,2002:binary` -> `!!binary`; other tags unchanged."""
    return "!!" + tag[len(CORE) :] if tag.startswith(CORE) else tag


def resolve_plain(value: str) -> Any:
    """The value of an untagged plain scalar. Raises ScalarError for ambiguous text."""
    if value and value[0] not in _SPECIAL_FIRST:
        return value
    if _NULL.fullmatch(value):
        return None
    if _BOOL.fullmatch(value):
        return value.lower() == "true"
    if _BOOL_11.fullmatch(value):
        raise ScalarError(AMBIGUOUS_BOOL)
    if _INT.fullmatch(value):
        return _to_int(value)
    if _LEADING_ZERO.fullmatch(value):
        raise ScalarError(AMBIGUOUS_NUMBER)
    if _FLOAT.fullmatch(value):
        return _to_float(value)
    return value


def resolve_tagged(value: str, tag: str) -> Any:
    """The value of a scalar with an explicit core tag (`!!str`, `!!int`, ...)."""
    name = tag[len(CORE) :] if tag.startswith(CORE) else ""
    if name == "str":
        return value
    if name == "null" and _NULL.fullmatch(value):
        return None
    if name == "bool" and (_BOOL.fullmatch(value) or _BOOL_11.fullmatch(value)):
        return value.lower() in ("true", "y", "yes", "on")
    if name == "int" and _INT.fullmatch(value):
        return _to_int(value)
    if name == "float" and (_FLOAT.fullmatch(value) or _INT.fullmatch(value)) and value:
        return _to_float(value)
    if name in ("null", "bool", "int", "float"):
        raise ScalarError(f"the value is not a valid {short_tag(tag)}")
    raise ScalarError(
        f"tag {short_tag(tag)} is not allowed (only strings, numbers, booleans, null, "
        "mappings and sequences)"
    )


@functools.lru_cache(maxsize=65536)
def needs_quotes(text: str) -> bool:
    """True when `text` written as a plain scalar would not read back as this string.

    Checks gitfleet's reader and PyYAML's YAML 1.1 resolver (timestamps, base-60, `=`, `<<`),
    so dumped files read back identically in every YAML dialect.
    """
    try:
        if not isinstance(resolve_plain(text), str):
            return True
    except ScalarError:
        return True
    return bool(_YAML11.resolve(yaml.ScalarNode, text, (True, False)) != CORE + "str")


def _to_int(value: str) -> int:
    text = value.replace("_", "")
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    if body[:2] in ("0b", "0o", "0x"):
        return sign * int(body[2:], {"0b": 2, "0o": 8, "0x": 16}[body[:2]])
    if len(body) > 1 and body.startswith("0"):
        return sign * int(body, 8)
    return sign * int(body)


def _to_float(value: str) -> float:
    lowered = value.lower()
    if lowered.endswith(".inf"):
        return -math.inf if lowered.startswith("-") else math.inf
    if lowered.endswith(".nan"):
        return math.nan
    return float(value.replace("_", ""))

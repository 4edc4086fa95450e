"""Manifests that differ between clusters only by the cluster's name and label values,
serialised once.

An override whose patch uses `${MEMBER-CLUSTER-NAME}` or `${MEMBER-CLUSTER-LABEL-KEY-<key>}`
makes one object per cluster name or label value. Applied once with stand-ins (`TOKEN` for the
name, `label_token(i)` for the i-th label the result reads), the object is serialised once as a
`NameTemplate`; each cluster's manifest is then the template's bytes with the stand-ins
replaced by its name and label values, and its content hash the SHA-256 of the template's
canonical JSON with the same replacements (issue 18, item 5).

That gives exactly `manifest_of(<object applied with the values>)` when the replacement cannot
change how either text is written: the name is a DNS label starting with a letter, a label
value a Kubernetes label value (letters, digits, `-`, `_`, `.`, alphanumeric at both ends:
nothing to escape in JSON or YAML, no indicator), no stand-in occurs in a mapping key, file
name or identity (key order, file and index entry stay), and every string holding one needs
quotes after the replacement exactly when it did before
(`gitfleet.load.yamlscalars.needs_quotes`, which decides the style: `no`, `y` or `null` alone
would be quoted). Otherwise `instantiate` returns None and the caller applies the override
with the values themselves. The stand-ins share a stem random per process and absent from the
source object (the caller checks, `holds_stand_in`), so they never meet user text; they never
reach the output. Called by `reconciler.manifests`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from gitfleet.api.canonical import canonical_json
from gitfleet.load.yamlio import dump_yaml
from gitfleet.load.yamlscalars import needs_quotes
from reconciler.once import OnceProperty
from reconciler.output import object_file_name, object_identity

_STEM = "zgitfleet" + secrets.token_hex(10)
"""What every stand-in starts with (`holds_stand_in`)."""
TOKEN = _STEM + "n000"
"""The stand-in cluster name: a DNS label no input contains."""
MAX_LABELS = 1000
"""Label values one template can stand in for (`label_token`: fixed width, so no stand-in is
a prefix of another)."""
_NAME = re.compile(r"[a-z]([a-z0-9-]{0,61}[a-z0-9])?")
_VALUE = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?")


def label_token(i: int) -> str:
    """The stand-in of the i-th label value a result reads (i < MAX_LABELS)."""
    return f"{_STEM}l{i:03d}"


def holds_stand_in(text: str) -> bool:
    """Whether `text` (a source object's JSON) holds anything like a stand-in."""
    return _STEM in text


@dataclass(frozen=True)
class NameTemplate:
    """One serialised object with stand-ins for the cluster's name and label values."""

    file: str
    identity: Mapping[str, str]
    data: str
    json: str
    strings: tuple[tuple[str, bool], ...]
    """Every string value holding a stand-in, and whether it needs quotes (per cluster, that
    must stay so)."""
    named: bool
    """Whether it holds `TOKEN` (the cluster name)."""
    filled: dict[tuple[str, ...], NameTemplate | None] = field(
        default_factory=dict, compare=False, repr=False
    )
    """Label values -> this template with them in place (`instantiate`)."""

    @OnceProperty
    def data_parts(self) -> list[str]:
        """`data` split at `TOKEN` (joining them with a name is a replacement without a
        search)."""
        return self.data.split(TOKEN)

    @OnceProperty
    def json_parts(self) -> list[str]:
        """`json` split at `TOKEN`."""
        return self.json.split(TOKEN)


TemplatePart = tuple[int, tuple[str, ...], tuple[str, ...]]
"""The template a result can be made from: its token, the label keys it stands in for and the
cluster's values of them (`template_part`)."""
MAX_TOKENS = 500_000
"""Keys `key_token` names (all forgotten when exceeded)."""
_tokens: dict[tuple[Any, ...], int] = {}
"""A key -> the number naming it (never reused, so clearing this table only costs reuse)."""
_counter = itertools.count()


def key_token(key: tuple[Any, ...]) -> int:
    """The number naming `key` (the key `PlacementOverrides.result_key` gives, without the
    cluster's name, or a template's key)."""
    token = _tokens.get(key)
    if token is None:
        if len(_tokens) >= MAX_TOKENS:
            _tokens.clear()  # tokens are never reused: old outcomes just go unused
        token = _tokens[key] = next(_counter)
    return token


def template_part(key: tuple[Any, ...]) -> TemplatePart | None:
    """The template a result of key `key` (`PlacementOverrides.result_key`) can be made from (one
    for every cluster on which the same rules apply: the same object, overrides, rules, label
    keys read and op limit); None when the result reads neither the cluster's name nor a
    label, when a label it reads is missing (its error names the cluster) or when the source
    object holds something like a stand-in."""
    labels = key[2]
    if key[3] is None and not labels:
        return None
    if len(labels) > MAX_LABELS or any(v is None for _, v in labels):
        return None
    if holds_stand_in(key[0][-1]):  # the source object's JSON
        return None
    keys = tuple(k for k, _ in labels)
    token = key_token(("template", key[0], key[1], keys, key[4]))
    return token, keys, tuple(v for _, v in labels)


MAX_FILLED = 4096
"""Distinct label values a template keeps filled in (all dropped when exceeded)."""
_MISSING = object()


@lru_cache(maxsize=1 << 16)
def safe_name(name: str) -> bool:
    """Whether `name` can replace `TOKEN` in serialised text without re-serialising (asked
    once per object and cluster: remembered per name)."""
    return _NAME.fullmatch(name) is not None


@lru_cache(maxsize=1 << 16)
def _safe_value(value: str) -> bool:
    """Whether label value `value` can replace its stand-in in serialised text."""
    return _VALUE.fullmatch(value) is not None and _STEM not in value


def template_of(obj: Mapping[str, Any]) -> NameTemplate | None:
    """The template of an object applied with stand-ins for the cluster's name and label
    values (None when a stand-in is in a key, the file name or the identity)."""
    text = canonical_json(obj)
    strings = _holding(text)
    if strings is None:
        return None
    file, identity = object_file_name(obj), object_identity(obj)
    if _STEM in file or any(_STEM in v for v in identity.values()):
        return None
    quoted = tuple((s, needs_quotes(s)) for s in strings)
    return NameTemplate(file, identity, dump_yaml(obj), text, quoted, TOKEN in text)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
"""One JSON string literal."""


def _holding(text: str) -> list[str] | None:
    """The strings of canonical JSON `text` that hold a stand-in, or None when a mapping key
    does.
    Scanned left to right, each match is a whole string literal (the text between literals is
    structure, numbers and literals: no quotes); a key is the literal right before a `:`."""
    strings = []
    for found in _STRING.finditer(text):
        literal = found.group()
        if _STEM in literal:  # the stem is plain ASCII: the same escaped or not
            if text.startswith(":", found.end()):
                return None
            strings.append(json.loads(literal))
    return strings


def instantiate(
    template: NameTemplate, name: str, values: tuple[str, ...] = ()
) -> tuple[str, bytes, str] | None:
    """(file, YAML bytes, content hash) of the template on cluster `name` whose labels read
    have `values` (in the order of their `label_token`s), or None when one would change how a
    string is written. The label values are put in once per distinct `values`."""
    found = with_labels(template, values)
    return None if found is None else with_name(found, name)


def with_labels(template: NameTemplate, values: tuple[str, ...]) -> NameTemplate | None:
    """`template` with the label `values` in place (made once per distinct values; the
    template itself when there are none), or None when one would change how a string is
    written. What is left to put in per cluster is its name (`with_name`)."""
    if not values:
        return template
    found = template.filled.get(values, _MISSING)
    if found is _MISSING:
        if len(template.filled) >= MAX_FILLED:
            template.filled.clear()
        found = template.filled[values] = _with_labels(template, values)
    return found if isinstance(found, NameTemplate) else None


def with_name(template: NameTemplate, name: str) -> tuple[str, bytes, str] | None:
    """(file, YAML bytes, content hash) of a template whose label values are in place
    (`with_labels`) on cluster `name`, or None when the name would change how a string is
    written."""
    data, text = template.data, template.json
    if template.named:
        if not safe_name(name):
            return None
        for held, quoted in template.strings:
            if _quoted(held.replace(TOKEN, name)) != quoted:
                return None
        data, text = name.join(template.data_parts), name.join(template.json_parts)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return template.file, data.encode(), "sha256:" + digest


def _with_labels(template: NameTemplate, values: tuple[str, ...]) -> NameTemplate | None:
    """`template` with `values` in place of their stand-ins (`TOKEN` stays), or None when one
    would change how a string is written."""
    if not all(_safe_value(value) for value in values):
        return None
    pairs = [(label_token(i), value) for i, value in enumerate(values)]
    strings = []
    for held, quoted in template.strings:
        held = _filled(held, pairs)
        if TOKEN in held:
            strings.append((held, quoted))  # checked with the name in it
        elif _quoted(held) != quoted:
            return None
    data, text = _filled(template.data, pairs), _filled(template.json, pairs)
    return NameTemplate(
        template.file, template.identity, data, text, tuple(strings), template.named
    )


def _filled(text: str, pairs: list[tuple[str, str]]) -> str:
    """`text` with each stand-in replaced by its value."""
    for stand_in, value in pairs:
        text = text.replace(stand_in, value)
    return text


_QUOTED: dict[str, bool] = {}
"""String -> `needs_quotes(string)`, for the strings instantiated lately (the objects of one
placement on one cluster mostly hold the same strings: labels naming the cluster)."""
MAX_QUOTED = 100_000


def _quoted(text: str) -> bool:
    """`needs_quotes(text)`, remembered."""
    found = _QUOTED.get(text)
    if found is None:
        if len(_QUOTED) >= MAX_QUOTED:
            _QUOTED.clear()
        found = _QUOTED[text] = needs_quotes(text)
    return found

"""Manifests that differ between clusters only by the cluster's name, serialised once.

An override whose patch uses `${MEMBER-CLUSTER-NAME}` makes one object per cluster. Applied once
with a stand-in name (`TOKEN`), the object is serialised once as a `NameTemplate`; each cluster's
manifest is then the template's bytes with the stand-in replaced by the name, and its content
hash the SHA-256 of the template's canonical JSON with the same replacement (issue 18, item 5).

That gives exactly `manifest_of(<object applied with the name>)` when the replacement cannot
change how either text is written: the name is a DNS label starting with a letter (nothing to
escape in JSON or YAML, no indicator), the stand-in occurs in no mapping key, file name or
identity (key order, file and index entry stay), and every string holding it needs quotes after
the replacement exactly when it did before (`gitfleet.load.yamlscalars.needs_quotes`, which
decides the style: `no`, `y` or `null` alone would be quoted). Otherwise `instantiate` returns None and the caller applies the override with
the name itself. The stand-in is random per process and absent from the source object (the
caller checks), so it never meets user text; it never reaches the output. Called by
`reconciler.manifests`.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from gitfleet.api.canonical import canonical_json
from gitfleet.load.yamlio import dump_yaml
from gitfleet.load.yamlscalars import needs_quotes
from reconciler.output import object_file_name, object_identity

TOKEN = "zgitfleet" + secrets.token_hex(12)
"""The stand-in cluster name: a DNS label no input contains."""
_NAME = re.compile(r"[a-z]([a-z0-9-]{0,61}[a-z0-9])?")


@dataclass(frozen=True)
class NameTemplate:
    """One serialised object with `TOKEN` for the cluster name."""

    file: str
    identity: Mapping[str, str]
    data: str
    json: str
    strings: tuple[tuple[str, bool], ...]
    """Every string value holding `TOKEN`, and whether it needs quotes (per name, that must
    stay so)."""


@lru_cache(maxsize=1 << 16)
def safe_name(name: str) -> bool:
    """Whether `name` can replace `TOKEN` in serialised text without re-serialising (asked
    once per object and cluster: remembered per name)."""
    return _NAME.fullmatch(name) is not None


def template_of(obj: Mapping[str, Any]) -> NameTemplate | None:
    """The template of an object applied with `TOKEN` as the cluster name (None when the
    stand-in is in a key, the file name or the identity)."""
    text = canonical_json(obj)
    strings = _holding(text)
    if strings is None:
        return None
    file, identity = object_file_name(obj), object_identity(obj)
    if TOKEN in file or any(TOKEN in v for v in identity.values()):
        return None
    quoted = tuple((s, needs_quotes(s)) for s in strings)
    return NameTemplate(file, identity, dump_yaml(obj), text, quoted)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
"""One JSON string literal."""


def _holding(text: str) -> list[str] | None:
    """The strings of canonical JSON `text` that hold `TOKEN`, or None when a mapping key does.
    Scanned left to right, each match is a whole string literal (the text between literals is
    structure, numbers and literals: no quotes); a key is the literal right before a `:`."""
    strings = []
    for found in _STRING.finditer(text):
        literal = found.group()
        if TOKEN in literal:  # TOKEN is plain ASCII: the same escaped or not
            if text.startswith(":", found.end()):
                return None
            strings.append(json.loads(literal))
    return strings


def instantiate(template: NameTemplate, name: str) -> tuple[str, bytes, str] | None:
    """(file, YAML bytes, content hash) of the template on cluster `name`, or None when the
    name would change how a string is written."""
    if not safe_name(name):
        return None
    if any(_quoted(s.replace(TOKEN, name)) != quoted for s, quoted in template.strings):
        return None
    data = template.data.replace(TOKEN, name).encode()
    digest = hashlib.sha256(template.json.replace(TOKEN, name).encode()).hexdigest()
    return template.file, data, "sha256:" + digest


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

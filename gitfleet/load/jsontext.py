"""Machine-written documents as JSON text, read back ~20x faster than through the YAML reader.

JSON is YAML: a file gitfleet's programs write for each other (an agent's `report.yaml`) is written
as JSON (`json_text`: sorted keys, one key or item a line, UTF-8), which every YAML reader still
reads, and read back by `json_body`: `json.loads` in C, where the bounded YAML reader (`yamlbuild`)
builds ~3-5 MB/s in Python (a 17 KB report: ~5-7 ms as YAML, ~0.25 ms with the checks below, ~0.1 ms
of which `json.loads`). The fast read is taken only when it gives the very value the YAML reader
would (a report from an older agent, a hand-written one, or any text it is not sure of goes through
the YAML reader, which names the line of every problem): the text is one JSON object without floats,
NaN or Infinity (YAML resolves some of those otherwise), without a key twice (the YAML reader
refuses it), without a surrogate escape or a character YAML refuses, and well within the YAML
reader's node and depth limits. Called by `gitfleet.load.report` (the hub's and the agent's reading
of reports) and the agent's writing.
"""

from __future__ import annotations

import json
import re
from typing import Any

from gitfleet.api.limits import Limits

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A `\\uD800`-`\\uDFFF` escape: `json` makes (pairs of) them characters, YAML refuses them."""
_NOT_YAML = re.compile(
    "[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
"""A character the YAML reader refuses anywhere in a stream (outside YAML's printable set), or
one a YAML 1.1 reader may read as a line break inside a quoted string: NEL (ours folds a raw NEL
to a space), U+2028 and U+2029 (libyaml keeps them; PyYAML's own parser, its fallback, folds)."""
_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}
"""What `json_text` writes for the characters YAML may read as line breaks: JSON's escapes."""


class _NotPlain(Exception):
    """The text holds something the YAML reader may read otherwise (a float, NaN, a key twice)."""


def json_text(value: Any) -> str:
    """`value` (JSON-compatible: str, int, bool, None, lists and string-keyed mappings) as JSON
    text that is also YAML: keys sorted, one key or item a line (indent 1), UTF-8 as it is,
    ending with a line break; NEL, U+2028 and U+2029 escaped (a YAML 1.1 reader may read them as
    line breaks). Deterministic: equal values give equal text."""
    text = json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False)
    return text.translate(_BREAKS) + "\n"


def json_body(text: str, limits: Limits) -> dict[str, Any] | None:
    """The mapping `text` holds when it is a JSON object the YAML reader reads to this very
    value (see the module docstring); None otherwise: the caller reads it as YAML."""
    if not text.startswith("{") or _SURROGATE_ESCAPE.search(text) or _yaml_may_differ(text):
        return None
    try:
        body = json.loads(
            text, parse_float=_refuse, parse_constant=_refuse, object_pairs_hook=_unique
        )
    except (ValueError, RecursionError, _NotPlain):  # JSONDecodeError is a ValueError
        return None
    if not isinstance(body, dict):
        return None
    return body if within_limits(body, limits) else None


def _yaml_may_differ(text: str) -> bool:
    """Whether `text` holds a character of `_NOT_YAML`. ASCII text (most reports) is checked
    for DEL alone, ~400x faster than the search: `json.loads` refuses every other control
    character itself (raw inside a string, or between tokens)."""
    if text.isascii():
        return "\x7f" in text
    return _NOT_YAML.search(text) is not None


def _refuse(_text: str) -> Any:
    raise _NotPlain


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _NotPlain
    return out


def within_limits(body: dict[str, Any], limits: Limits) -> bool:
    """Whether a value a fast reader made (here and `blockread`) is well within the YAML
    reader's limits: at most half its nodes (keys counted too) and half its depth, so the YAML
    reader, which words the error, answers for anything near them."""
    return _within(body, limits.max_yaml_nodes // 2, limits.max_yaml_depth // 2)


def _within(body: dict[str, Any], nodes: int, depth: int) -> bool:
    """Whether `body` has at most `nodes` nodes (keys counted too) and `depth` levels, level
    by level, without recursion."""
    count = 0
    level: list[Any] = [body]
    for _ in range(depth):
        below: list[Any] = []
        for node in level:
            if isinstance(node, dict):
                count += len(node)
                below.extend(node.values())
            elif isinstance(node, list):
                below.extend(node)
        count += len(level)
        if count > nodes:
            return False
        if not below:
            return True
        level = below
    return False

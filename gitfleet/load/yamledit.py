"""Edit one field of one document of a YAML file in place, keeping comments, quoting, key order
and the other documents (ruamel.yaml round trip).

An existing scalar is replaced exactly where ruamel.yaml located it (same quote style), so every
other byte of the file stays as it was; a missing key is added by a round-trip dump.

`set_field(text, doc, path, value)` returns the new text; the caller reads and writes the file.
Used by `gitfleet updaterun stop|run` to change a run's `spec.state` in the user's source file.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError


class EditError(ValueError):
    """The file cannot be edited as asked (unparsable, no such document or field)."""


def _yaml() -> YAML:
    editor = YAML(typ="rt")
    editor.preserve_quotes = True
    editor.width = 4096
    editor.indent(mapping=2, sequence=4, offset=2)
    return editor


def get_field(text: str, doc: int, path: Sequence[str]) -> Any:
    """The value at `path` in document `doc` (None when a part is missing)."""
    node: Any = _documents(text)[doc]
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _documents(text: str) -> list[Any]:
    try:
        docs = list(_yaml().load_all(text))
    except YAMLError as exc:
        raise EditError(f"cannot parse: {exc}") from None
    return docs


def set_field(text: str, doc: int, path: Sequence[str], value: str) -> str:
    """`text` with `path` of document `doc` set to `value`; everything else unchanged."""
    editor = _yaml()
    docs = _documents(text)
    if doc >= len(docs) or not isinstance(docs[doc], dict):
        raise EditError(f"document {doc} is not a mapping")
    node = docs[doc]
    for part in path[:-1]:
        if not isinstance(node.get(part), dict):
            raise EditError(f"{'.'.join(path)}: {part} is not a mapping")
        node = node[part]
    if path[-1] in node and not isinstance(node[path[-1]], dict | list):
        line, col = node.lc.value(path[-1])
        return _replace_scalar(text, line, col, value)
    node[path[-1]] = value
    editor.explicit_start = text.lstrip().startswith("---")
    out = io.StringIO()
    editor.dump_all(docs, out)
    return out.getvalue()


def _replace_scalar(text: str, line: int, col: int, value: str) -> str:
    lines = text.splitlines(keepends=True)
    row = lines[line]
    quote = row[col : col + 1]
    if quote in ("'", '"'):
        end = row.index(quote, col + 1) + 1
        new = f"{quote}{value}{quote}"
    else:
        rest = row[col:].rstrip("\r\n")
        cut = rest.find(" #")
        token = (rest if cut < 0 else rest[:cut]).rstrip()
        end, new = col + len(token), value
    lines[line] = row[:col] + new + row[end:]
    return "".join(lines)

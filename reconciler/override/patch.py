"""One RFC 6902 operation (add, remove, replace) on a private copy of an object, via jsonpatch.

`apply_operation` applies an op in place and, when jsonpatch refuses it, returns a clear reason
computed by walking the JSON pointer ourselves: jsonpatch's own messages can quote the document
(`member 'x' not found in {...}`), and an error must never echo object content or patch values
(Secrets). Reasons name only the path, array lengths and JSON types. Callers work on a copy and
throw it away on the first failure, so a half-patched object never leaves this package.

`MAX_PATCH_OPS_PER_OBJECT` (1,000) caps the ops applied to one object on one cluster across all
of its overrides and rules. Valid overrides reach at most 800 (one CRO on the object or its
namespace plus one RO, 20 rules of 20 ops each), so the cap is a guard, not a user-facing limit.
Called by `reconciler.override.apply`.
"""

from __future__ import annotations

import re
from typing import Any

import jsonpatch
import jsonpointer

MAX_PATCH_OPS_PER_OBJECT = 1000

_INDEX = re.compile(r"0|[1-9][0-9]*")
_BAD_ESCAPE = re.compile(r"~[^01]|~$")


class PointerError(ValueError):
    """A JSON pointer that cannot be parsed."""


def parse_pointer(path: str) -> list[str]:
    """The unescaped segments of a JSON pointer (`~1` is `/`, `~0` is `~`)."""
    if path == "":
        return []
    if not path.startswith("/"):
        raise PointerError("a JSON pointer must start with /")
    raw = path.split("/")[1:]
    for part in raw:
        if _BAD_ESCAPE.search(part):
            raise PointerError(
                f"invalid escape in path segment {part!r} (use ~0 for ~ and ~1 for /)"
            )
    return [part.replace("~1", "/").replace("~0", "~") for part in raw]


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def _type_name(node: Any) -> str:
    if isinstance(node, bool):
        return "boolean"
    if isinstance(node, int | float):
        return "number"
    if isinstance(node, str):
        return "string"
    return "null" if node is None else type(node).__name__


def _step_list(node: list[Any], part: str, where: str, op: str, last: bool) -> str | None:
    """Why `part` cannot index the array at `where` for `op`, or None."""
    if part == "-":
        if last and op == "add":
            return None
        return f"{where}/- (the end of the array) can only be the last segment of an add"
    if not _INDEX.fullmatch(part):
        return f"{part!r} is not a valid array index at {where or '/'}"
    bound = len(node) if last and op == "add" else len(node) - 1
    if int(part) > bound:
        return f"index {part} is out of range at {where or '/'} (array length {len(node)})"
    return None


def describe_failure(doc: Any, op: str, path: str) -> str:
    """The reason `op` at `path` cannot be applied to `doc` (never quotes `doc`)."""
    try:
        parts = parse_pointer(path)
    except PointerError as exc:
        return str(exc)
    node, where = doc, ""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        here = f"{where}/{_escape(part)}"
        if isinstance(node, dict):
            if part not in node:
                if last and op == "add":
                    break
                return f"path {here} does not exist"
            node = node[part]
        elif isinstance(node, list):
            problem = _step_list(node, part, where, op, last)
            if problem:
                return problem
            if last:
                break
            node = node[int(part)]
        else:
            return f"{where or '/'} is a {_type_name(node)}, not an object or array"
        where = here
    return "the operation cannot be applied"


_OPERATIONS: dict[str, Any] = {
    "add": jsonpatch.AddOperation,
    "remove": jsonpatch.RemoveOperation,
    "replace": jsonpatch.ReplaceOperation,
}


def compile_pointer(path: str) -> Any:
    """The parsed jsonpointer.JsonPointer for `path` (reused across clusters), None if invalid."""
    try:
        return jsonpointer.JsonPointer(path)
    except jsonpointer.JsonPointerException:
        return None


def apply_operation(
    doc: Any, op: str, path: str, value: Any, pointer: Any = None
) -> tuple[Any, str | None]:
    """Apply one op to `doc` in place: (the new document, None) or (doc, reason).

    `pointer` is `compile_pointer(path)` when the caller has it (saves re-parsing the path)."""
    operation: dict[str, Any] = {"op": op, "path": pointer if pointer is not None else path}
    if op != "remove":
        operation["value"] = value
    try:
        return _OPERATIONS[op](operation).apply(doc), None
    except (
        jsonpatch.JsonPatchException,
        jsonpointer.JsonPointerException,
        TypeError,
        KeyError,
        IndexError,
        ValueError,
    ):
        return doc, describe_failure(doc, op, path)

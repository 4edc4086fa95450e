"""Read the block YAML gitfleet writes, line by line, or say it cannot: never a different value.

The output branch's documents (state, status, indexes) are written by `yamlemit` in one narrow
shape: a mapping at the top (the bounded reader refuses other documents), one `key: value` or
`key:` a line, sequences not indented inside mappings, `- ` items whose first mapping key
stands on the dash's line, `{}` and `[]` for empty collections, one-line plain, single-quoted
or double-quoted scalars. `read_block` reads that shape ~4x faster than the event-driven
bounded reader (`yamlbuild`), in which a restarted hub spent ~5 s at fleet-1k, each distinct
line parsed once (`_bodies`). It gives the value the bounded reader gives, or `UNREAD`, and the
caller then uses the bounded reader, which also words every error. UNREAD for: text that is
not printable ASCII lines (tabs, carriage returns, control or non-ASCII characters), comments,
empty lines, document markers and directives, anchors, aliases, tags, flow collections other
than `{}` and `[]`, block or multi-line scalars, merge keys, keys that are not strings,
duplicate keys, keys over 128 characters (the emitter writes those as `? key`; libyaml refuses
implicit keys over 1,024), escapes other than backslash, quote, b, f, n, r and t, plain
scalars the bounded reader refuses (`yamlscalars.resolve_plain`), indentation the emitter does
not write, values beyond half the node or depth limits (`jsontext.within_limits`, as for
reports), and any exception. The unit tests check it
against the bounded reader on seeded random documents, random edits of them and every golden
output file. Called by `reconciler.priorparse.load_bounded`.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from gitfleet.api.limits import Limits
from gitfleet.load.jsontext import within_limits
from gitfleet.load.yamlemit import MAX_SIMPLE_KEY
from gitfleet.load.yamlscalars import resolve_plain

UNREAD: Final = object()
"""`read_block`'s answer for text outside its shape: read it with the bounded reader."""

_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")
"""An ASCII control character besides `\\n`."""
_PLAIN_FIRST = frozenset("[]{}#&*!|>'\"%@`,")
"""Characters no plain scalar starts with (`-`, `?`, `:` need a non-space after them)."""
_OTHER_ESCAPE = re.compile(r'\\(?:[^"bfnrt]|$)')
"""In a double-quoted scalar without its `\\\\` pairs: an escape that JSON and YAML may read
differently (all but `\\"`, b, f, n, r, t)."""


def _printable(text: str) -> bool:
    """Printable ASCII lines, each ending with `\\n`."""
    return text.isascii() and text.endswith("\n") and _CONTROL.search(text) is None


class _Unread(Exception):
    """The text is outside the shape."""


def read_block(text: str, limits: Limits) -> Any:
    """The value of the one document `text`, or UNREAD (see the module doc)."""
    if not _printable(text) or text[0] == "#" or " #" in text or "\n#" in text or "\n\n" in text:
        return UNREAD  # or a comment, or an empty line
    try:
        value = _Reader().read(text)
    except Exception:  # `_Unread`, a `ScalarError` or any surprise: the bounded reader answers
        return UNREAD
    return value if within_limits(value, limits) else UNREAD


_ENTRY, _PENDING, _ITEM = 0, 1, 2
"""What a line's body is after its dashes: `key: value`, `key:`, or a sequence item."""
_Line = tuple[int, int, Any, Any]
"""(dashes, kind, key, value) of a line's body (`_parse_body`)."""


class _Reader:
    """Frames `[column, collection, pending key]`: a mapping's keys or a sequence's dashes
    stand at its column; a mapping's pending key is one written as `key:` whose value opens
    on the next line. Line bodies are parsed once per distinct text (`_bodies`: state and
    status files repeat the same cluster names and conditions thousands of times)."""

    def __init__(self) -> None:
        self.stack: list[list[Any]] = []
        self.root: Any = UNREAD

    def read(self, text: str) -> Any:
        lines = text.split("\n")
        lines.pop()  # the text ends with a line break
        bodies = _bodies
        if len(bodies) > _MAX_BODIES:
            bodies.clear()
        stack = self.stack
        for line in lines:
            body = line.lstrip(" ")
            column = len(line) - len(body)
            while stack and stack[-1][0] > column:
                self._close()
            parsed = bodies.get(body)
            if parsed is None:
                parsed = bodies[body] = _parse_body(body)
            dashes, kind, key, value = parsed
            top = stack[-1] if stack else None
            if top is not None and top[0] == column:  # the usual lines, at once
                if dashes == 1 and kind == _ITEM and top[1].__class__ is list:
                    top[1].append(_fresh(value))
                    continue
                if not dashes and kind == _ENTRY and top[2] is None and top[1].__class__ is dict:
                    if key in top[1]:
                        raise _Unread  # a duplicate key
                    top[1][key] = _fresh(value)
                    continue
            for n in range(dashes):
                self._dash(column + 2 * n, nested=n > 0)
            if kind == _ITEM:
                if not dashes:
                    raise _Unread  # a scalar of its own: a continuation line
                stack[-1][1].append(_fresh(value))  # the sequence the last dash found or opened
                continue
            mapping = self._mapping_at(column + 2 * dashes, dashes > 0)
            if key in mapping[1]:
                raise _Unread  # a duplicate key
            if kind == _PENDING:
                mapping[2] = key
                mapping[1][key] = None  # filled when its value opens
            else:
                mapping[1][key] = _fresh(value)
        while stack:
            self._close()
        if self.root is UNREAD:
            raise _Unread
        return self.root

    def _close(self) -> None:
        frame = self.stack.pop()
        if frame[2] is not None:
            raise _Unread  # `key:` and nothing under it

    def _dash(self, column: int, nested: bool) -> None:
        """A `- ` at `column`: a new item of the sequence there (opened when needed); `nested`:
        the line's second or later dash, whose sequence is the item of the one before."""
        top = self.stack[-1] if self.stack else None
        if nested:
            assert top is not None  # the dash before opened or found it
            self._open([], column, into=top)
        elif top is not None and top[0] == column and isinstance(top[1], list):
            return
        elif top is not None and top[0] == column and top[2] is not None:
            self._open([], column, into=top)  # a sequence under `key:`, not indented
        else:
            raise _Unread  # a sequence at the top too: the bounded reader refuses it

    def _mapping_at(self, column: int, after_dash: bool) -> list[Any]:
        """The mapping whose key stands at `column` (opened when needed)."""
        top = self.stack[-1] if self.stack else None
        if after_dash:
            if top is None or top[0] != column - 2 or not isinstance(top[1], list):
                raise _Unread
            return self._open({}, column, into=top)  # `- key: ...`: a mapping item
        if (
            top is not None
            and top[0] == column
            and isinstance(top[1], list)
            and len(self.stack) > 1
        ):
            self._close()  # a sequence under `key:` ends at the next key of its mapping
            top = self.stack[-1]
        if top is not None and top[0] == column and isinstance(top[1], dict):
            if top[2] is not None:
                raise _Unread
            return top
        if top is not None and column > top[0] and isinstance(top[1], dict) and top[2] is not None:
            return self._open({}, column, into=top)  # the value of `key:`
        if top is None and column == 0 and self.root is UNREAD:
            return self._open({}, 0, into=None)
        raise _Unread

    def _open(self, value: Any, column: int, into: list[Any] | None) -> list[Any]:
        if into is None:
            self.root = value
        elif isinstance(into[1], list):
            into[1].append(value)
        else:
            into[1][into[2]] = value
            into[2] = None
        frame = [column, value, None]
        self.stack.append(frame)
        return frame


_bodies: dict[str, _Line] = {}
"""Line body -> its parse (`_parse_body`), shared by every read (process-wide, bounded)."""
_MAX_BODIES = 50_000


def _fresh(value: Any) -> Any:
    """`value` as a new object when it is a collection (`{}`, `[]`: callers may change what
    they read), else itself (scalars are immutable)."""
    if value.__class__ is dict:
        return {}
    if value.__class__ is list:
        return []
    return value


def _parse_body(body: str) -> _Line:
    """What a line holds after its indentation: its dashes, then `key: value`, `key:` or a
    sequence item (`_Unread` outside the shape)."""
    dashes = 0
    while body.startswith("- "):
        dashes += 1
        body = body[2:]
    if not body:
        raise _Unread
    key, rest = _split_key(body)
    if key is None:
        return dashes, _ITEM, None, _value(body)
    if rest is None:
        return dashes, _PENDING, key, None
    return dashes, _ENTRY, key, _value(rest)


def _value(text: str) -> Any:
    if text == "{}":
        return {}
    if text == "[]":
        return []
    return _scalar(text)


def _split_key(body: str) -> tuple[str | None, str | None]:
    """(key, the rest after `: `, or None for `key:` at the end), or (None, None) when `body`
    is a scalar, not a mapping entry."""
    if body[:1] in ("'", '"'):
        end = _quote_end(body)
        if end == len(body):
            return None, None
        if end > MAX_SIMPLE_KEY:
            raise _Unread  # libyaml refuses implicit keys over 1,024 characters
        if body[end] != ":" or body[end + 1 : end + 2] not in ("", " "):
            raise _Unread
        key = _scalar(body[:end])
        rest = body[end + 2 :]
    else:
        split = body.find(": ")
        if split < 0:
            if not body.endswith(":"):
                return None, None
            split = len(body) - 1
        if split > MAX_SIMPLE_KEY:
            raise _Unread
        key = resolve_plain(_plain(body[:split]))
        rest = body[split + 2 :]
    if not isinstance(key, str) or key == "<<":
        raise _Unread
    if body.endswith(":") and rest == "":
        return key, None
    if not rest or rest[0] == " ":
        raise _Unread
    return key, rest


def _quote_end(text: str) -> int:
    """The index just after the closing quote of the quoted scalar `text` starts with."""
    quote = text[0]
    at = 1
    while True:
        found = text.find(quote, at)
        if found < 0:
            raise _Unread
        if quote == "'" and text[found + 1 : found + 2] == "'":
            at = found + 2  # `''` is one quote
            continue
        if quote == '"':
            run = text[at:found]
            if (len(run) - len(run.rstrip("\\"))) % 2:
                at = found + 1  # an escaped quote
                continue
        return found + 1


def _scalar(text: str) -> Any:
    """A one-line scalar: quoted (the whole text) or plain."""
    first = text[0]
    if first == "'":
        if _quote_end(text) != len(text):
            raise _Unread
        return text[1:-1].replace("''", "'")
    if first == '"':
        if _quote_end(text) != len(text):
            raise _Unread
        inner = text[1:-1]
        if "\\" not in inner:
            return inner
        if _OTHER_ESCAPE.search(inner.replace("\\\\", "")):
            raise _Unread
        decoded: str = json.loads(f'"{inner}"')
        return decoded
    return resolve_plain(_plain(text))


def _plain(text: str) -> str:
    """`text` when it is a plain scalar the emitter may write, else `_Unread`."""
    if not text or text[0] in _PLAIN_FIRST or text[-1] == " " or text[0] == " ":
        raise _Unread
    if text[0] in "-?:" and text[1:2] in ("", " "):
        raise _Unread
    if ": " in text or text.endswith(":") or text == "<<":
        raise _Unread
    return text

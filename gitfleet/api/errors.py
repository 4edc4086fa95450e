"""The one error record every layer reports bad input with.

A `FleetError` names the repository file, the line (or document index), the field path and the
rule that was broken. The loader, the renderers and the reconcile pass all produce them; the CLI
prints them as `FILE:LINE: field.path: message`.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from functools import total_ordering
from pathlib import PurePath


@total_ordering
@dataclass(frozen=True)
class FleetError:
    """A user error, located as precisely as the input allows. Errors are totally ordered (by
    file, line, field, message, document; an unknown line or document sorts first), so any mix
    of located and unlocated errors sorts."""

    file: str
    """Repository-relative POSIX path of the source file ('' when not tied to a file)."""
    line: int | None
    """1-based line in `file` (for rendered files: in the rendered text), when known."""
    field: str
    """Dotted field path such as `spec.policy.clusterNames[0]`; '' for the whole document."""
    message: str
    """What rule was broken. Never contains a Secret value."""
    doc: int | None = None
    """0-based document index in a multi-document file, when known."""

    def location(self) -> str:
        """`file:line`, `file[doc N]` or `file`, whichever is most precise."""
        where = self.file or "<fleet>"
        if self.line is not None:
            return f"{where}:{self.line}"
        if self.doc is not None:
            return f"{where}[doc {self.doc}]"
        return where

    def __str__(self) -> str:
        field = f" {self.field}:" if self.field else ""
        return f"{self.location()}:{field} {self.message}"

    def sort_key(self) -> tuple[str, int, str, str, int]:
        """The total order of errors (None line or document before every known one)."""
        line = -1 if self.line is None else self.line
        doc = -1 if self.doc is None else self.doc
        return (self.file, line, self.field, self.message, doc)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, FleetError):
            return NotImplemented
        return self.sort_key() < other.sort_key()


@dataclass(frozen=True, order=True)
class FieldIssue:
    """A rule broken inside one object, before it is tied to a file: the loader adds the place."""

    field: str
    """Dotted field path relative to the object root, e.g. `spec.policy.clusterNames[0]`."""
    message: str


def describe_exception(exc: BaseException) -> str:
    """`Type at module.py:line (function)`: an unexpected exception, described without its text
    (exception text can carry input values, and those may be secret)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return type(exc).__name__
    last = frames[-1]
    return f"{type(exc).__name__} at {PurePath(last.filename).name}:{last.lineno} ({last.name})"

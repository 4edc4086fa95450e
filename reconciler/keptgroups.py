"""A document's per-cluster rows grouped as `gitfleet.api.grouping.group_named` groups them, kept
from pass to pass and patched where a cluster's source changed.

A state or status document lists one row per cluster: rows identical but for the cluster's name
(and a `Member` field, its values kept in a list beside the names, in their order) form a group
(`{<names>: [...], <the row without its name>}`), the others stay single, sorted by name. Made
afresh, that walks every row of the document; `KeptGroups.update` is handed each cluster's
source object (a binding, a status entry) and redoes only the clusters whose source
is another object than last time (`stagememo.changed_keys`), inserting and removing names in
the kept ordered lists (bisect). Every row, group key and text is kept with its cluster, so
`parts` gives the document's lists with each list's text ready for `yamlparts.Spliced`: the
same bytes as grouping and emitting the whole document again. It needs rows named uniquely and
handed over in name order (`group_named` groups in order of first appearance, so groups are
then ordered by their first name); callers check that and otherwise group afresh. An update
copies what it changes: a kept value is never changed, so it may be shared by passes. `Names`
is one such ordered list of names with its lines. Called by `reconciler.state`, `statusdocs` and
`priorsection`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from gitfleet.api.grouping import Member, group_body, group_key, member_part
from reconciler.stagememo import changed_keys
from reconciler.yamlparts import Spliced, item_text, padded

Row = Mapping[str, Any]


@dataclass
class Names:
    """A list of names in order with (an indent, each name's line at it), set whole once
    made, so a list shared by two passes stays consistent; `copy` before changing it. A new
    list (`unlined`) makes its lines when first written, at the indent it is written at: a
    cold pass then makes each name's line once, not once at indent 0 and again there."""

    names: list[str]
    lined: tuple[int, list[str | None]]
    """(indent, lines); UNLINED as the indent: no line made yet (the list is empty)."""

    def insert(self, name: str) -> int:
        """Put `name` in its place (by bisect); its index."""
        at = bisect_left(self.names, name)
        self.names.insert(at, name)
        if self.lined[0] != UNLINED:
            self.lined[1].insert(at, _name_line(name, self.lined[0]))
        return at

    def remove(self, name: str) -> int:
        """Take `name` (present) out; the index it had."""
        at = bisect_left(self.names, name)
        self.drop(at)
        return at

    def copy(self) -> Names:
        """Another list with the same names and lines (this one's own lists left as they are)."""
        return Names(list(self.names), (self.lined[0], list(self.lined[1])))

    def put(self, at: int, value: Any) -> None:
        """Put `value` at index `at` (a list kept beside another one's order)."""
        self.names.insert(at, value)
        if self.lined[0] != UNLINED:
            self.lined[1].insert(at, _name_line(value, self.lined[0]))

    def drop(self, at: int) -> None:
        """Take the value at index `at` out."""
        del self.names[at]
        if self.lined[0] != UNLINED:
            del self.lined[1][at]

    def block(self, indent: int) -> str | None:
        """The list's text at `indent` (for `Spliced.part`; None: a name cannot be padded)."""
        if indent != self.lined[0]:
            self.lined = (indent, [_name_line(name, indent) for name in self.names])
        lines = self.lined[1]
        if None in lines:
            return None
        return "".join(lines)  # type: ignore[arg-type]


UNLINED = -1
"""`Names.lined`'s indent while no line is made (never an indent `block` is asked for)."""


def unlined() -> tuple[int, list[str | None]]:
    """The `lined` of a new list: lines made when it is first written."""
    return (UNLINED, [])


@dataclass
class _Group(Names):
    """Rows sharing a group key: their names, the group's entry without its names (None:
    made again from the first name's row), and its members' values of the `Member` field in
    the names' order (None: the rows have no such field)."""

    body: dict[str, Any] | None = None
    values: Names | None = None

    def copy(self) -> _Group:
        names, values = Names.copy(self), self.values
        return _Group(names.names, names.lined, self.body, values.copy() if values else None)


@dataclass(frozen=True)
class KeptGroups:
    """One document's rows: per name (source, row, group key), the groups by key (one name
    or more), and the single rows' names in order with each one's text at indent 0."""

    name_field: str
    names_field: str
    single: Callable[[Row], bool]
    member: Member | None = None
    sources: Mapping[str, object] = field(default_factory=dict)
    items: dict[str, tuple[Row, str | None]] = field(default_factory=dict)
    groups: dict[str, _Group] = field(default_factory=dict)
    singles: list[str] = field(default_factory=list)
    texts: list[str | None] = field(default_factory=list)

    def update(self, sources: Mapping[str, object], make: Callable[[Any], Row]) -> KeptGroups:
        """The rows of `sources` (name -> the object its row is made from, `make(source)`),
        made from these by redoing only the names whose source is another object."""
        out = _Update(self)
        for name in sorted(changed_keys(self.sources, sources)):
            if name in self.items:
                out.remove(name)
            if name in sources:
                out.add(name, make(sources[name]))
        return replace(out.result(), sources=sources)

    def parts(self, spliced: Spliced) -> tuple[list[Any], list[dict[str, Any]]]:
        """(single rows, groups) as `group_named` gives them, each list standing as a
        `spliced` part whose text is the kept one."""
        rows = [self.items[name][0] for name in self.singles]
        singles = spliced.part(rows, self._singles_block)
        groups = []
        for group in sorted(
            (g for g in self.groups.values() if len(g.names) > 1), key=lambda g: g.names[0]
        ):
            body = group.body if group.body is not None else self._body(group)
            made = {self.names_field: spliced.part(group.names, group.block), **body}
            if group.values is not None and self.member is not None:
                values = group.values
                listed = partial(spliced.part, values.names, values.block)  # a part only if used
                made |= member_part(self.member, values.names, listed)
            groups.append(made)
        return singles, groups

    def _singles_block(self, indent: int) -> str | None:
        if None in self.texts:
            return None
        texts: list[str] = self.texts  # type: ignore[assignment]
        return "".join(texts) if not indent else "".join(padded(t, indent) for t in texts)

    def _body(self, group: _Group) -> dict[str, Any]:
        group.body = group_body(self.items[group.names[0]][0], self.name_field, self.member)
        return group.body


def _name_line(name: str, indent: int) -> str | None:
    text = item_text(name)
    return padded(text, indent) if text is not None else None


class _Update:
    """A KeptGroups being patched: containers copied before the first change."""

    def __init__(self, kept: KeptGroups) -> None:
        self.kept = kept
        self.items = dict(kept.items)
        self.groups = dict(kept.groups)
        self.singles, self.texts = list(kept.singles), list(kept.texts)
        self.copied: set[str] = set()

    def result(self) -> KeptGroups:
        return replace(
            self.kept, items=self.items, groups=self.groups, singles=self.singles, texts=self.texts
        )

    def _group(self, key: str) -> _Group:
        if key not in self.copied:
            self.copied.add(key)
            self.groups[key] = self.groups[key].copy()
        return self.groups[key]

    def remove(self, name: str) -> None:
        _, key = self.items.pop(name)
        if key is None or len(self.groups[key].names) == 1:
            self._unsingle(name)
        if key is None:
            return
        group = self._group(key)
        at = group.remove(name)
        if group.values is not None:
            group.values.drop(at)
        if not group.names:
            del self.groups[key]
            return
        if len(group.names) == 1:
            self._single(group.names[0])
        if at == 0:
            group.body = None

    def add(self, name: str, row: Row) -> None:
        kept = self.kept
        key = group_key(row, kept.name_field, kept.single, member=kept.member)
        self.items[name] = (row, key)
        if key is None:
            self._single(name)
            return
        member = kept.member
        if key not in self.groups:
            valued = member is not None and member[0] in row  # a group's rows all have it or not
            values = Names([], unlined()) if valued else None
            self.groups[key] = _Group([], unlined(), values=values)
            self.copied.add(key)
        group = self._group(key)
        if len(group.names) == 1:
            self._unsingle(group.names[0])
        at = group.insert(name)
        if group.values is not None and member is not None:
            group.values.put(at, row[member[0]])
        if at == 0:
            group.body = None
        if len(group.names) == 1:
            self._single(name)

    def _single(self, name: str) -> None:
        at = bisect_left(self.singles, name)
        self.singles.insert(at, name)
        self.texts.insert(at, item_text(self.items[name][0]))

    def _unsingle(self, name: str) -> None:
        at = bisect_left(self.singles, name)
        del self.singles[at], self.texts[at]

"""Per-cluster entries of an output document grouped by what they share (part of the output
contract, `gitfleet.api.output`).

A placement's status and the hub's binding state list one entry per cluster. Entries identical
once the quoted cluster name inside their strings (`in "<cluster>"`) is written as `NAME_TOKEN`
form one group `{<names>: [...], <the entry without its name>}`; the others stay single, sorted
by name. A `Member` field differs from cluster to cluster and is kept out of the grouping: a
group's members each keep theirs in a list beside the names, in the same order (a binding's
`content` hash, which a cluster-dependent override makes one a cluster: without it those
bindings would be one entry each, ~800 bytes a cluster). `group_named` groups, `expand_named`
is its inverse. Called by `gitfleet.api.output` (placement status), `reconciler.stateshards` and
`reconciler.keptgroups` (the same grouping kept from pass to pass).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gitfleet.api.canonical import canonical_json

NAME_TOKEN = '"${clusterName}"'
"""Stands for the quoted cluster name in the strings of a group's entry."""
Member = tuple[str, str]
"""(an entry's field, the group's list of its members' values of it), e.g. `CONTENTS`."""
CONTENTS: Member = ("content", "contents")
"""A binding's content hash: one a cluster where an override depends on the cluster."""
_ESCAPED_TOKEN = canonical_json(NAME_TOKEN)[1:-1]
"""NAME_TOKEN as it shows inside canonical JSON (its quotes escaped)."""
_MEMBER_MARK = "\x00m"
"""Ends the grouping text of an entry that has the member field (a group's entries all have it
or all lack it, so a group with a member list gives each member a value)."""


def renamed(value: Any, old: str, new: str) -> Any:
    """`value` with `old` replaced by `new` in every string inside it (new dicts and lists
    throughout). The parsed documents it mostly gets hold plain dicts, lists and scalars: those
    are told by their exact type, before the slower checks that take subclasses too."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is str or isinstance(value, str):
        return value.replace(old, new)
    if kind is dict or isinstance(value, Mapping):
        return {k: renamed(v, old, new) for k, v in value.items()}
    if kind is list or isinstance(value, list):
        return [renamed(v, old, new) for v in value]
    return value


_SCALARS = frozenset({int, float, bool, type(None)})


def group_named(
    entries: Sequence[Mapping[str, Any]],
    name_field: str,
    names_field: str,
    single: Callable[[Mapping[str, Any]], bool] = lambda _entry: False,
    texts: Sequence[list[Any]] | None = None,
    member: Member | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(single entries, groups) of per-cluster entries: entries with the same grouping text
    (`group_key`) form one group `{<names_field>: [...], <entry>}` (in order of first
    appearance), with `member`'s list beside the names when its entries have that field. An
    entry `single` picks, one without a name, one that already holds the token and one no other
    cluster shares stay single, sorted by name (stable), unnamed ones last. `texts`: one slot
    per entry that keeps the entry's grouping text once made, for callers that hand over the
    same entries pass after pass (a slot belongs to one entry, one `single` and one `member`)."""
    singles: list[dict[str, Any]] = []
    groups: dict[str, tuple[list[Any], list[Any], Mapping[str, Any]]] = {}
    for i, entry in enumerate(entries):
        slot = texts[i] if texts is not None else []
        key = slot[0] if slot else _group_key(entry, name_field, single, slot, member=member)
        if key is None:
            singles.append(_own(entry))
            continue
        names, values, _ = groups.setdefault(key, ([], [], entry))
        names.append(entry[name_field])
        if member is not None:
            values.append(entry.get(member[0]))
    out: list[dict[str, Any]] = []
    for names, values, first in groups.values():
        if len(names) == 1:
            singles.append(_own(first))
            continue
        out.append(_group(names, values, first, name_field, names_field, member))
    named = sorted((e for e in singles if name_field in e), key=lambda e: str(e[name_field]))
    return named + [e for e in singles if name_field not in e], out


def _group(
    names: list[Any],
    values: list[Any],
    first: Mapping[str, Any],
    name_field: str,
    names_field: str,
    member: Member | None,
) -> dict[str, Any]:
    group = {names_field: names, **group_body(first, name_field, member)}
    if member is not None and member[0] in first:
        group |= member_part(member, values, lambda: values)
    return group


def member_part(member: Member, values: list[Any], listed: Callable[[], Any]) -> dict[str, Any]:
    """A group's member field: once, when its members' `values` (one or more) are all equal
    (as if it were grouped by it: the shape before `Member`s), else `listed()` (the values, or
    a caller's stand-in that writes them, made only then) under the member's list field."""
    if values.count(values[0]) == len(values):
        return {member[0]: values[0]}
    return {member[1]: listed()}


def group_key(
    entry: Mapping[str, Any],
    name_field: str,
    single: Callable[[Mapping[str, Any]], bool] = lambda _entry: False,
    dumps: Callable[[Mapping[str, Any]], str] = canonical_json,
    member: Member | None = None,
) -> str | None:
    """The text `group_named` groups `entry` by (None: it stays single): its canonical JSON
    without its name and `member` field, the quoted name written as the token. `dumps`: how the
    entry is written (`canonical_json`, or a caller's equal and quicker way)."""
    return _group_key(entry, name_field, single, [], dumps, member)


def group_body(
    first: Mapping[str, Any], name_field: str, member: Member | None = None
) -> dict[str, Any]:
    """A group's entry without its names (and `member` field): its first entry (by name), the
    quoted name written as `NAME_TOKEN` (what `group_named` writes)."""
    left = (name_field, member[0]) if member is not None else (name_field,)
    rest = {k: v for k, v in first.items() if k not in left}
    body: dict[str, Any] = renamed(rest, f'"{first[name_field]}"', NAME_TOKEN)
    return body


def _escaped(name: str) -> str:
    """`name` as it shows inside canonical JSON (without its quotes): itself unless it holds a
    quote, a backslash or a character JSON escapes."""
    if '"' in name or "\\" in name or not name.isprintable():
        return canonical_json(name)[1:-1]
    return name


def _own(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A single entry as given when it is a dict (callers that keep entries from pass to pass
    find their very objects in the result), else a dict copy."""
    return entry if type(entry) is dict else dict(entry)


def _group_key(
    entry: Mapping[str, Any],
    name_field: str,
    single: Callable[[Mapping[str, Any]], bool],
    slot: list[str | None],
    dumps: Callable[[Mapping[str, Any]], str] = canonical_json,
    member: Member | None = None,
) -> str | None:
    """The entry's grouping text, None when it stays single; kept in `slot`."""
    name = entry.get(name_field)
    key = None
    if name is not None and not single(entry) and NAME_TOKEN not in str(name):
        field = member[0] if member is not None else None
        text = dumps({k: v for k, v in entry.items() if k != name_field and k != field})
        # JSON escapes character by character, so renaming inside the JSON text is renaming
        # inside every string of the entry (its keys are field names, never a quoted name).
        if _ESCAPED_TOKEN not in text:
            text = text.replace(f'\\"{_escaped(str(name))}\\"', _ESCAPED_TOKEN)
            if field is not None and field in entry:
                text += _MEMBER_MARK
            # Interned: the entries of one group (most of a placement's clusters) keep one text.
            key = sys.intern(text)
    slot.append(key)
    return key


def expand_named(
    singles: Any, groups: Any, name_field: str, names_field: str, member: Member | None = None
) -> list[dict[str, Any]]:
    """The inverse of `group_named`: one entry a cluster, sorted by name (stable), entries
    without a name last. Malformed parts (not mappings) are skipped; a group whose `member`
    list is not one value a name raises ValueError (its members' values would be lost)."""
    named: list[dict[str, Any]] = []
    unnamed: list[dict[str, Any]] = []
    for entry in singles if isinstance(singles, list) else []:
        if isinstance(entry, Mapping):
            (named if entry.get(name_field) is not None else unnamed).append(dict(entry))
    for group in groups if isinstance(groups, list) else []:
        if isinstance(group, Mapping):
            named.extend(_expanded(group, name_field, names_field, member))
    return sorted(named, key=lambda e: str(e[name_field])) + unnamed


def _expanded(
    group: Mapping[str, Any], name_field: str, names_field: str, member: Member | None
) -> list[dict[str, Any]]:
    names = group.get(names_field) or []
    if member is None or member[1] not in group:
        rest = {k: v for k, v in group.items() if k != names_field}
        return [{name_field: name, **renamed(rest, NAME_TOKEN, f'"{name}"')} for name in names]
    field, listed = member
    rest = {k: v for k, v in group.items() if k != names_field and k != listed}
    values = group[listed]
    if not isinstance(values, list) or len(values) != len(names):
        raise ValueError(f"{listed}: must list one value for each of the group's {names_field}")
    return [
        {name_field: name, **renamed(rest, NAME_TOKEN, f'"{name}"'), field: value}
        for name, value in zip(names, values, strict=True)
    ]

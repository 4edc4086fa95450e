"""A placement status's per-cluster entries grouped (`gitfleet.api.output.group_cluster_statuses`)
with the work in C: what a long-running hub hands over is mostly last pass's entries, whose
grouping texts are kept in their slots.

`grouped_statuses` gives exactly `group_cluster_statuses(entries, texts)`: the kept texts are
read in one `map`, only the entries without one get theirs made (in Python, one each), the
groups are counted in C (`Counter`, first appearance first) and each group's cluster names taken
by one `compress` over the entries; a placement with many distinct groups (each a pass over the
entries) is grouped by `group_named` instead. An entry's text is made with the JSON text of its
conditions given (`entry_text`: `reconciler.statusentries` keeps the shared conditions' texts).
Called by `reconciler.statusdocs` and `reconciler.statusentries`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial
from itertools import compress, repeat
from operator import eq, is_, methodcaller
from typing import Any

from gitfleet.api.canonical import canonical_json
from gitfleet.api.grouping import group_body, group_key
from gitfleet.api.output import REPORTED_FIELDS, group_cluster_statuses

NAME = "clusterName"
NAMES = "clusterNames"
CONDITIONS = "conditions"
MAX_GROUPS = 16
"""Above this many groups of two clusters or more, `group_named` groups the entries."""
_MISSING = object()
"""An entry's slot that holds no grouping text yet."""
_NAME_OF = methodcaller("get", NAME)


def _single(entry: Mapping[str, Any]) -> bool:
    """An entry naming failed, drifted or diffed objects is never grouped (as
    `group_cluster_statuses`)."""
    return any(map(entry.get, REPORTED_FIELDS))


def entry_text(entry: Mapping[str, Any], conditions: str) -> str | None:
    """The grouping text of `entry` (`grouping_texts`) with the canonical JSON of its
    conditions given (`conditions`: the caller makes it from texts it keeps)."""
    return group_key(entry, NAME, _single, partial(_spliced_json, conditions))


def _spliced_json(conditions: str, rest: Mapping[str, Any]) -> str:
    """`canonical_json(rest)` with `conditions` as the JSON text of its conditions: the other
    fields written before and after it, in the sorted order canonical JSON writes keys in."""
    before = {k: v for k, v in rest.items() if k < CONDITIONS}
    after = {k: v for k, v in rest.items() if k > CONDITIONS}
    parts = [f'"{CONDITIONS}":{conditions}']
    if before:
        parts.insert(0, canonical_json(before)[1:-1])
    if after:
        parts.append(canonical_json(after)[1:-1])
    return "{" + ",".join(parts) + "}"


def grouping_texts(entries: Sequence[Mapping[str, Any]], texts: Sequence[list[Any]]) -> list[Any]:
    """Each entry's grouping text (None: it stays single): the one kept in its slot, else made
    and kept there."""
    keys = list(map(next, map(iter, texts), repeat(_MISSING)))
    for i in compress(range(len(keys)), map(is_, keys, repeat(_MISSING))):
        keys[i] = group_key(entries[i], NAME, _single)
        texts[i].append(keys[i])
    return keys


def grouped_statuses(
    entries: Sequence[Mapping[str, Any]], texts: Sequence[list[Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`group_cluster_statuses(entries, texts)`, grouped in C (see the module docstring)."""
    keys = grouping_texts(entries, texts)
    counts = Counter(keys)
    counts.pop(None, None)
    shared = [key for key, n in counts.items() if n > 1]
    if len(shared) > MAX_GROUPS:
        return group_cluster_statuses(entries, texts)
    singles = list(compress(entries, map(is_, keys, repeat(None))))
    singles += [entries[keys.index(key)] for key, n in counts.items() if n == 1]
    names = list(map(_NAME_OF, entries))
    groups = []
    for key in shared:
        first = entries[keys.index(key)]
        members = list(compress(names, map(eq, keys, repeat(key))))
        groups.append({NAMES: members, **group_body(first, NAME)})
    owned = [e if type(e) is dict else dict(e) for e in singles]
    named = sorted((e for e in owned if NAME in e), key=lambda e: str(e[NAME]))
    return named + [e for e in owned if NAME not in e], groups

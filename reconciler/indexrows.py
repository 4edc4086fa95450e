"""Each cluster's index rows, joined from the placements' rows in the order they were laid out.

The assembly hands one mapping (cluster -> rows) per placement: held placements first, then the
live ones by key, then the failed ones. A long-running hub hands mostly the very mappings of the
last pass (`reconciler.assemble` reuses an unchanged placement's layout), so `joined_rows`
compares them by identity in C and joins again only the clusters that a changed mapping has
(before or now) whose rows there are other objects, from the mappings that have them only (remembered per cluster: a changed
cluster costs its own rows, not a look at every placement's mapping; mappings are named, so a
placement starting or ending a rollout, whose kept rows come or go, changes one name; when the
same mappings have the cluster, only the changed ones' rows are replaced in its tuple); the
other clusters keep last pass's very rows tuple, which the index files
reuse without looking at it (`reconciler.indexfiles`). Many changed clusters (a changed
mapping's own, compared in C): joined in full, so a cluster joining or leaving, which changes
every mapping that has it, joins that cluster only.
The mappings are never changed once handed over. Called by `assemble`. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import accumulate, chain
from typing import Any

from reconciler.stagememo import StageMemo, changed_keys

Rows = Mapping[str, Sequence[dict[str, Any]]]
"""One placement's rows: cluster -> its index rows there."""
Joined = dict[str, tuple[dict[str, Any], ...]]

MAX_CHANGED = 16
MAX_SHARE = 0.25
"""More changed clusters than `MAX_CHANGED` plus this share of all: joining every cluster is
about as cheap (a cluster joining or leaving changes every mapping that has it, one cluster
each)."""

Where = dict[str, tuple[tuple[str, ...], tuple[int, ...]]]
"""cluster -> the names of the mappings that have it, in order, and how many rows each gives:
of the clusters some join looked up only (`_where_of` finds a cluster's when first asked)."""
_LAST: StageMemo[tuple[Joined, Where]] = StageMemo()
"""The last join and where the rows of clusters it looked up came from, with the mappings it
was made from (by name, in order)."""


def joined_rows(parts: Mapping[str, Rows]) -> Joined:
    """cluster -> the rows of every mapping in `parts` (name -> mapping, in order) that has the
    cluster, in order (a cluster some mapping has with no rows is there, with none)."""
    now = dict(parts)
    last = _LAST.last("rows")
    if last is not None:
        before, (joined, where) = last[0][0], last[1]
        changed = {n for n, rows in now.items() if before.get(n) is not rows}
        changed.update(before.keys() - now.keys())
        if not changed and list(before) == list(now):
            return joined
        limit = MAX_CHANGED + int(MAX_SHARE * len(joined))
        clusters = (
            _changed_clusters(now, before, changed, limit) if _kept_order(before, now) else None
        )
        if clusters is not None:
            made = _rejoined(joined, where, now, before, changed, clusters)
            _LAST.put("rows", (now,), made)
            return made[0]
    full = _joined(now)
    _LAST.put("rows", (now,), (full, {}))  # a join that reuses it finds `where` it looks up
    return full


def _kept_order(before: Mapping[str, Rows], now: Mapping[str, Rows]) -> bool:
    """The mappings listed both times are listed in the same order."""
    return [n for n in before if n in now] == [n for n in now if n in before]


def _joined(parts: Mapping[str, Rows]) -> Joined:
    lists: dict[str, list[dict[str, Any]]] = {}
    for part in parts.values():
        for cluster, rows in part.items():
            found = lists.get(cluster)
            if found is None:
                lists[cluster] = list(rows)
            else:
                found += rows
    return {cluster: tuple(rows) for cluster, rows in lists.items()}


def _where_of(cluster: str, parts: Mapping[str, Rows]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The names of the mappings in `parts` that have `cluster`, in order, and how many rows
    each gives (a look-up in each mapping: a join looks up the clusters it joins again only,
    not every cluster of every mapping)."""
    names = [name for name, part in parts.items() if cluster in part]
    return tuple(names), tuple(len(parts[name][cluster]) for name in names)


def _rejoined(
    joined: Joined,
    where: Where,
    parts: Mapping[str, Rows],
    before: Mapping[str, Rows],
    changed: set[str],
    clusters: set[str],
) -> tuple[Joined, Where]:
    """`joined` with `clusters` (of the changed mappings, old or new) joined again, from the
    mappings that had them or have them now only (in the order `where` lists them, and those
    that have a cluster they did not have put in their place)."""
    came = [n for n in changed if n in parts]
    place: dict[str, int] | None = None
    out, where = dict(joined), dict(where)
    for cluster in clusters:
        had, counts = where[cluster] if cluster in where else _where_of(cluster, before)
        names = [n for n in had if n not in changed or cluster in parts.get(n, ())]
        gained = [n for n in came if cluster in parts[n] and cluster not in before.get(n, ())]
        if gained:
            place = place or dict(zip(parts, range(len(parts)), strict=True))
            names = sorted(names + gained, key=place.__getitem__)
        if had and len(names) == len(had) and not gained:  # the same mappings: rows replaced
            out[cluster], where[cluster] = _spliced(
                out[cluster], cluster, had, counts, parts, changed
            )
        elif names:
            found = [parts[n][cluster] for n in names]
            out[cluster] = tuple(chain.from_iterable(found))
            where[cluster] = (tuple(names), tuple(map(len, found)))
        else:
            out.pop(cluster, None)
            where.pop(cluster, None)
    return out, where


def _changed_clusters(
    parts: Mapping[str, Rows], before: Mapping[str, Rows], changed: set[str], limit: int
) -> set[str] | None:
    """The clusters whose rows in a changed mapping are other objects than before, or that the
    mapping gained or lost (in C, `changed_keys`): a placement patched on a few clusters hands a
    new mapping holding its other clusters' very rows, which keep their joined tuple. None:
    more than `limit` of them."""
    out: set[str] = set()
    for name in changed:
        out |= changed_keys(before.get(name, _NO_ROWS), parts.get(name, _NO_ROWS))
        if len(out) > limit:
            return None
    return out


_NO_ROWS: Rows = {}


def _spliced(
    rows: tuple[dict[str, Any], ...],
    cluster: str,
    names: tuple[str, ...],
    counts: tuple[int, ...],
    parts: Mapping[str, Rows],
    changed: set[str],
) -> tuple[tuple[dict[str, Any], ...], tuple[tuple[str, ...], tuple[int, ...]]]:
    """The cluster's `rows` (`counts` of them from each of `names`, in order) with the rows of
    the changed mappings among `names` replaced by theirs now: the others are not looked up."""
    out, sizes, ends = list(rows), list(counts), list(accumulate(counts))
    for i in reversed([i for i, name in enumerate(names) if name in changed]):
        now = parts[names[i]][cluster]
        out[ends[i] - counts[i] : ends[i]] = now
        sizes[i] = len(now)
    return tuple(out), (names, tuple(sizes))

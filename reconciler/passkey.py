"""The pass-wide part of every placement's key in `reconciler.placememo` (issue 18, item 4).

`make_pass_key` makes a `PassKey`: the inputs every placement's work reads besides the
placement itself (CRD scope table, governance, object limit, broken files), and the token of
what every selection and serving override set is made from (`inputs_token`). Against the last
pass's token it says what a placement's remembered key parts may still be taken for: the
index lookups the changed entries can answer differently (`select.changed_lookups`) and the
placements an override changed since may serve (`served`: each changed override restricted to
one placement; one that may serve any placement, or any other change, takes nothing). Called
by `reconciler.placememo`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.placement import PassInputs
from reconciler.schedule.clusters import ClusterView
from reconciler.select import NO_READS, Reads, ResourceIndex, changed_lookups
from reconciler.stagememo import StageMemo

Ref = tuple[str, str, str]
"""A placement as an override names it: (kind, namespace, name)."""


@dataclass(frozen=True, eq=False)
class PassKey:
    """The pass-wide part of every placement's key. `token`: what every selection and serving
    override set is made from (`inputs_token`); `last`: the last pass's token when this one
    equals it but for index entries and overrides restricted to placements, `touched` the
    lookups those entries can answer differently (`select.changed_lookups`; empty when the
    entries are equal) and `served` the placements those overrides may serve."""

    rest: tuple[Any, ...]
    token: tuple[Any, ...] | None = None
    last: tuple[Any, ...] | None = None
    touched: Reads | None = None
    served: frozenset[Ref] = frozenset()


_TOKENS: StageMemo[tuple[Any, ...]] = StageMemo()
"""The last pass's `inputs_token`."""


def make_pass_key(
    views: Mapping[str, ClusterView], index: ResourceIndex, inputs: PassInputs
) -> PassKey:
    """This pass's `PassKey`, remembered as the last one (see module docstring)."""
    # The whole governance value, repr'd: a field it gains later is part of the key by itself
    # (a repr that differs between equal values only costs reuse, never correctness).
    governance = repr(inputs.governance)
    rest = (
        index.scopes.content,
        hashlib.sha256(repr(governance).encode()).hexdigest(),
        inputs.max_objects,
        tuple(sorted(inputs.broken_files)),
    )
    token = inputs_token(rest, index, inputs)
    last = _TOKENS.last("pass")
    _TOKENS.put("pass", (), token)
    served = served_by_changes(last[1], token) if last is not None else None
    if last is None or served is None:
        return PassKey(rest, token)
    touched = NO_READS if last[1][1] == token[1] else changed_lookups(last[1][1], token[1])
    return PassKey(rest, token, last[1], touched, served)


def served_by_changes(before: tuple[Any, ...], now: tuple[Any, ...]) -> frozenset[Ref] | None:
    """The placements the overrides that differ between tokens `before` and `now` (edited,
    in a new snapshot, moved, added or removed) may serve; None when one of them may serve
    any placement or when another part but the index entries differs."""
    if before[0] != now[0] or before[2] != now[2]:
        return None
    if before[3:] == now[3:]:
        return frozenset()
    changed = set(before[3]).symmetric_difference(now[3])
    keys = {row[0] for row in changed}
    keys |= {key for key, _ in set(before[4]).symmetric_difference(now[4])}
    rows = (*before[3], *now[3])
    refs = {row[4] for row in rows if row[0] in keys}
    if None in refs or keys - {row[0] for row in rows}:
        return None
    return frozenset(ref for ref in refs if ref is not None)


def inputs_token(
    rest: tuple[Any, ...], index: ResourceIndex, inputs: PassInputs
) -> tuple[Any, ...]:
    """What every placement's selection and serving overrides are made from besides the
    placement: the index entries (the very objects: `select.index` keeps an unchanged
    object's entry), the skipped namespaces, each override's key, spec hash, snapshot name,
    origin and the placement it is restricted to, the names of the overrides' latest
    snapshots, and `rest`."""
    overrides = tuple(
        (o.key, o.hash, o.snapshot, o.origin, o.placement) for o in inputs.overrides.overrides
    )
    names = tuple(sorted(inputs.override_names.items()))
    return (rest, index.entries, index.skipped_namespaces, overrides, names)


def same_serving(before: tuple[Any, ...] | None, now: tuple[Any, ...] | None) -> bool:
    """Every part of token `now` but the index entries equals `before`'s (tokens of
    `inputs_token`): the same pass-wide inputs, skipped namespaces and overrides."""
    if before is None or now is None:
        return False
    return before[0] == now[0] and before[2:] == now[2:]

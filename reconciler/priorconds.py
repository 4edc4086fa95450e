"""A placement's prior condition times: read from its status file, or recorded in `state/prior/`.

`placement_conditions_of` derives them from a placement status document (the per-cluster
entries expanded, entries without a cluster name numbered in order). `conditions_section` is
their compact record in `state/prior/<key>.yaml` (`reconciler.priorstate`): `placement` (the
placement's conditions), `perCluster` (clusters whose conditions no other cluster shares,
entries without a name last, in order) and `perClusterGroups` (clusters whose conditions are
identical once the quoted cluster name is written as `gitfleet.api.grouping.NAME_TOKEN`), and
`parse_conditions_section` reads it back to the very values `placement_conditions_of` gives.
Grouping and expanding work on the conditions themselves (one validation per group), not on
documents; a condition named for a cluster is one object across the records one pass reads.
Called by `priorstate` and `statusdocs`, and by `passstages` (`next_pass`, as a pass starts).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import attrgetter
from typing import Any

from gitfleet.api import Condition
from gitfleet.api.grouping import NAME_TOKEN
from gitfleet.api.output import expand_cluster_statuses
from reconciler.priorparse import freeze, shared
from reconciler.stagememo import StageMemo

PriorConditions = tuple[tuple[Condition, ...], dict[str, tuple[Condition, ...]]]
"""A placement's previous conditions and its previous per-cluster conditions by cluster."""
UNNAMED = "#unselected-"
"""Prefix of the keys of per-cluster entries without a cluster name (fixed clusters not found)."""
TEXT_FIELDS = ("type", "reason", "message")
"""The condition fields that may name the cluster."""


def conditions_of(raw: Any) -> tuple[Condition, ...]:
    items = raw or []
    return shared(
        ("conditions", freeze(items)), lambda: tuple(Condition.model_validate(c) for c in items)
    )


def status_of(doc: Any) -> dict[str, Any]:
    status = doc.get("status") if isinstance(doc, dict) else None
    return status if isinstance(status, dict) else {}


def placement_conditions_of(status: dict[str, Any]) -> PriorConditions:
    """The prior conditions in a placement status (entries without a name numbered in order)."""
    per_cluster: dict[str, tuple[Condition, ...]] = {}
    unnamed = 0
    for entry in expand_cluster_statuses(status):
        name = entry.get("clusterName")
        if name is None:
            name, unnamed = f"{UNNAMED}{unnamed}", unnamed + 1
        per_cluster[str(name)] = conditions_of(entry.get("conditions"))
    return conditions_of(status.get("conditions")), per_cluster


def dump_conditions(conds: Iterable[Condition]) -> list[dict[str, Any]]:
    return [c.model_dump(by_alias=True, exclude_none=True, mode="json") for c in conds]


_Keys = dict[str, tuple[tuple[Condition, ...], tuple[Any, ...] | None]]
_GROUP_KEYS: StageMemo[_Keys] = StageMemo()
"""Placement key -> cluster -> (its conditions, their group key) as last written: the status
stage hands over a cluster's very conditions while they are unchanged
(`reconciler.statusentries`), or equal ones (compared then: cheaper than a key), so only changed
clusters' keys are made again."""


_TEXTS = attrgetter(*TEXT_FIELDS)


def _group_key(
    name: str, conds: tuple[Condition, ...], plain: dict[int, tuple[Any, ...]]
) -> tuple[Any, ...] | None:
    """What the conditions are without the cluster's quoted name (None: not groupable).
    `plain`: id of a condition -> its part of a key when its texts hold no quote (so they name
    no cluster), shared by the clusters of one call (they mostly share their conditions:
    `status.timed`)."""
    quoted = f'"{name}"'
    key: list[Any] = []
    for c in conds:
        part = plain.get(id(c))
        if part is None:
            kind, reason, message = _TEXTS(c)
            if NAME_TOKEN in kind or NAME_TOKEN in reason or NAME_TOKEN in message:
                return None
            part = (
                kind.replace(quoted, NAME_TOKEN),
                reason.replace(quoted, NAME_TOKEN),
                message.replace(quoted, NAME_TOKEN),
                c.status,
                c.observed_generation,
                c.last_transition_time,
            )
            if '"' not in kind and '"' not in reason and '"' not in message:
                plain[id(c)] = part
        key.append(part)
    return tuple(key)


def _tokenized(dumped: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    quoted = f'"{name}"'
    return [
        {k: v.replace(quoted, NAME_TOKEN) if k in TEXT_FIELDS else v for k, v in c.items()}
        for c in dumped
    ]


def conditions_section(prior: PriorConditions, placement: str = "") -> dict[str, Any]:
    """The `conditions` part of a PlacementPrior (`placement`: its key, under which the
    clusters' group keys are remembered)."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    singles: list[dict[str, Any]] = []
    unnamed: list[dict[str, Any]] = []
    last = _GROUP_KEYS.last(placement)
    before: _Keys = last[1] if last is not None else {}
    made: _Keys = {}
    plain: dict[int, tuple[Any, ...]] = {}
    for name, conds in sorted(prior[1].items()):
        if name.startswith(UNNAMED):
            key = None
        else:
            found = before.get(name)
            if found is None or (found[0] is not conds and found[0] != conds):
                found = (conds, _group_key(name, conds, plain))
            elif found[0] is not conds:  # equal conditions, other objects: the newest kept
                found = (conds, found[1])
            made[name] = found
            key = found[1]
        if key is not None:
            groups.setdefault(key, []).append(name)
        elif not name.startswith(UNNAMED):
            singles.append({"cluster": name, "conditions": dump_conditions(conds)})
    for name, conds in prior[1].items():  # in their numbered order
        if name.startswith(UNNAMED):
            unnamed.append({"conditions": dump_conditions(conds)})
    grouped = []
    for names in groups.values():
        dumped = dump_conditions(prior[1][names[0]])
        if len(names) == 1:
            singles.append({"cluster": names[0], "conditions": dumped})
        else:
            grouped.append({"clusters": names, "conditions": _tokenized(dumped, names[0])})
    _GROUP_KEYS.put(placement, (), made)
    section: dict[str, Any] = {"placement": dump_conditions(prior[0])}
    if singles or unnamed:
        section["perCluster"] = sorted(singles, key=lambda e: str(e["cluster"])) + unnamed
    if grouped:
        section["perClusterGroups"] = grouped
    return section


def _naming(template: tuple[Condition, ...]) -> list[tuple[int, tuple[str, ...]]]:
    """Where a group's conditions hold the token: (position, its text fields holding it)."""
    out = []
    for i, c in enumerate(template):
        fields = tuple(f for f in TEXT_FIELDS if NAME_TOKEN in getattr(c, f))
        if fields:
            out.append((i, fields))
    return out


def _named(
    template: tuple[Condition, ...], name: str, naming: list[tuple[int, tuple[str, ...]]]
) -> tuple[Condition, ...]:
    """A group's conditions for one of its clusters (the token replaced by its quoted name in
    the fields `naming` lists, `_naming(template)`); a condition without the token is the
    template's own object, and the template itself when none holds it."""
    if not naming:
        return template
    quoted = f'"{name}"'
    out = list(template)
    for i, fields in naming:
        out[i] = _named_condition(template[i], name, quoted, fields)
    return tuple(out)


def _named_condition(c: Condition, name: str, quoted: str, fields: tuple[str, ...]) -> Condition:
    """`c` with the token in `fields` replaced by `quoted`: one object per cluster and equal
    template condition this pass (`_NAMED`)."""
    key = (name, *c.__dict__.values())  # every field's value, in order
    found = _NAMED.get(key)
    if found is None:
        found = c.model_copy(update={f: getattr(c, f).replace(NAME_TOKEN, quoted) for f in fields})
        if len(_NAMED) >= MAX_NAMED:
            _NAMED.clear()
        _NAMED[key] = found
    return found


_NAMED: dict[tuple[Any, ...], Condition] = {}
"""(cluster, a template condition's field values) -> the condition named for that cluster. A
cluster's Scheduled condition is the same in the records of every placement that scheduled it
with the same scores: read back, it is one object for all of them, as a cold pass builds it
(`status.timed`), so its dumped dict and JSON text are made once (`statusrollout`). Cleared
when a pass starts (`next_pass`): the records a pass reads are read together."""
MAX_NAMED = 1 << 18


def next_pass() -> None:
    """Start a pass: the conditions named for the last one's records are not kept."""
    _NAMED.clear()


def parse_conditions_section(section: Mapping[str, Any]) -> PriorConditions:
    """Inverse of `conditions_section`. Raises ValueError/TypeError on malformed parts."""
    named: dict[str, tuple[Condition, ...]] = {}
    unnamed: list[tuple[Condition, ...]] = []
    for entry in section.get("perCluster") or []:
        conds = conditions_of(entry.get("conditions"))
        if entry.get("cluster") is None:
            unnamed.append(conds)
        else:
            named[str(entry["cluster"])] = conds
    for group in section.get("perClusterGroups") or []:
        template = conditions_of(group.get("conditions"))
        naming = _naming(template)
        for name in group.get("clusters") or []:
            named[str(name)] = _named(template, str(name), naming)
    per_cluster = {name: named[name] for name in sorted(named)}
    per_cluster.update({f"{UNNAMED}{i}": conds for i, conds in enumerate(unnamed)})
    return conditions_of(section.get("placement")), per_cluster

"""The reconciler's memory between passes, and its canonical files under `state/`.

A pass reads the `State` the previous pass wrote (policy and resource snapshot history, bindings,
the placement generation) and returns the next one. `state_files` and `read_state` convert to
and from the output tree's `state/placements/<key>.yaml` files; given the new output tree,
`state_files` also writes `state/prior/` (`reconciler.priorstate`: the index rows and condition
times a restarted hub would otherwise parse from every index and status file). A placement's
bindings and their YAML entries are `reconciler.binding`'s (re-exported here); a state file is
written with its binding entries and its groups' cluster names spliced in from kept texts
(`reconciler.yamlparts.Spliced`): a placement whose bindings changed on a few clusters patches
its kept rows, groups and texts there (`reconciler.keptgroups`), and its other keys' blocks are
kept by value. A placement with more bindings than one shard holds writes them to
`state/bindings/<key>/<i>.yaml` instead (`reconciler.stateshards`: one binding changed rewrites
one shard) and its state file says how many; `read_placement_state` puts them back together
(the very state a pass wrote, unparsed), and reads a state file holding its bindings as well.
A pass whose prior output holds the very files the last pass wrote takes that pass's states
from memory (`own_states`, `reconciler.ownprior`: no state file is looked up), and writes
again only the placements whose state is another object than last time (`_all_placement_files`).
Snapshot lists and `state/overrides.yaml` are `reconciler.statesnaps`'s.
Called by `reconciler.pass_` and the CLI.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from contextlib import suppress
from dataclasses import replace
from functools import partial
from operator import attrgetter
from typing import Any

import yaml

from gitfleet.api.output import (
    OUTPUT_API_VERSION,
    PLACEMENT_STATE_PREFIX,
    placement_state_path,
)
from gitfleet.load.yamlemit import Pieces
from gitfleet.load.yamlio import dump_yaml
from reconciler.binding import Binding as Binding
from reconciler.binding import BindingCondition as BindingCondition
from reconciler.binding import BindingDecision as BindingDecision
from reconciler.binding import binding_to_yaml, read_bindings
from reconciler.ownprior import OwnFiles
from reconciler.priorparse import derive_own, freeze, paths_under, remember, remember_at
from reconciler.priorrows import placement_rows
from reconciler.priorstate import prior_files
from reconciler.stagememo import RoundMemo, StageMemo, changed_keys
from reconciler.stateshards import (
    SHARDS_FIELD,
    ShardProblem,
    ShardWriter,
    bindings_to_yaml,
    grouped_parts,
    new_groups,
    one_a_cluster_in_order,
    read_binding_rows,
    read_shards,
    sharded_count,
)
from reconciler.statesnaps import OVERRIDES_FILE as OVERRIDES_FILE
from reconciler.statesnaps import override_file, read_overrides, read_snapshots, snapshots_to_yaml
from reconciler.statetypes import PlacementState as PlacementState
from reconciler.statetypes import Snapshot as Snapshot
from reconciler.statetypes import State as State
from reconciler.yamlparts import Blocks, Spliced, items_block, keyed_dump
from reconciler.yamlparts import grouped_parts as grouped_names

STATE_API_VERSION = OUTPUT_API_VERSION
PLACEMENT_STATE_KIND = "PlacementState"


def placement_state_doc(
    ps: PlacementState, pieces: Pieces | None = None, grouped: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The YAML document for one placement's state (`pieces`: filled with its bindings' line
    slots, for `dump_yaml`; `grouped`: its `bindings` and `bindingGroups` when the caller
    made them)."""
    if grouped is None:
        grouped = bindings_to_yaml(ps.key, ps.bindings, {} if pieces is None else pieces)
    doc = {
        "apiVersion": STATE_API_VERSION,
        "kind": PLACEMENT_STATE_KIND,
        "metadata": {"name": ps.key},
        "generation": ps.generation,
        "specHash": ps.spec_hash,
        "originFile": ps.origin_file,
        "policySnapshots": snapshots_to_yaml(ps.policy_snapshots),
        "resourceSnapshots": snapshots_to_yaml(ps.resource_snapshots),
        **grouped,
        "selected": [{"id": rid, "file": f} for rid, f in ps.selected],
    }
    if ps.deleting:
        doc["deleting"] = [binding_to_yaml(b) for b in ps.deleting]
    return doc


MAX_EMITTED_STATES = 20_000
"""Placement states whose YAML bytes are kept between passes (least recently used dropped)."""
_emitted: OrderedDict[PlacementState, tuple[PlacementState, bytes | None]] = OrderedDict()
"""state -> (the first equal state seen, its YAML once written)."""


def canonical_state(ps: PlacementState) -> PlacementState:
    """The first state equal to `ps` this process kept (else `ps`, kept from now on): an
    unchanged placement's state is the same object pass after pass (`reconciler.stagememo`)."""
    last = _CANONICAL.last(ps.key)  # equal to the placement's last one: not hashed again
    if last is not None and (last[1] is ps or last[1] == ps):
        return last[1]
    found = _emitted.get(ps)
    if found is not None:
        with suppress(KeyError):  # another hub thread may have dropped it meanwhile
            _emitted.move_to_end(ps)
        ps = found[0]
    else:
        _keep(ps, (ps, None))
    _CANONICAL.put(ps.key, (), ps)
    return ps


_CANONICAL: StageMemo[PlacementState] = StageMemo()
"""Placement key -> the state `canonical_state` gave for it last (a state equal to it is
compared field by field, its bindings by identity: hashing it hashes each binding)."""


def _keep(ps: PlacementState, value: tuple[PlacementState, bytes | None]) -> None:
    _emitted[ps] = value
    with suppress(KeyError):  # the oldest go first
        while len(_emitted) > MAX_EMITTED_STATES:
            _emitted.popitem(last=False)


def _state_bytes(ps: PlacementState) -> bytes:
    """The YAML of `ps`, serialised only when this state was not written recently: a
    long-running hub re-emits only the placements a pass changed."""
    found = _emitted.get(ps)
    if found is not None and found[1] is not None:
        with suppress(KeyError):  # another hub thread may have dropped it meanwhile
            _emitted.move_to_end(ps)
        return found[1]
    text = _patched_text(ps)
    if text is None:
        pieces: Pieces = {}
        text = _state_text(placement_state_doc(ps, pieces), pieces)
    data = text.encode()
    _keep(ps, (found[0] if found is not None else ps, data))
    return data


_SHARDS = ShardWriter()
_HEADS: StageMemo[tuple[bytes, tuple[PlacementState, int]]] = StageMemo()
"""Placement key -> its sharded state file's bytes and remembered value, with its fields."""
_PLACED: StageMemo[tuple[tuple[tuple[str, bytes], ...], tuple[Any, ...] | None]] = StageMemo()
"""Placement key -> the files of its state and, when sharded, what reading them gives
(`_WHOLE`'s inputs), with the state they were made of."""


def _placement_files(key: str, ps: PlacementState) -> tuple[tuple[str, bytes], ...]:
    """The state file of `ps` (remembered), and its binding shard files when it has more
    bindings than one shard holds (`reconciler.stateshards`)."""
    path = placement_state_path(key)
    found = _PLACED.get(ps.key, (ps,))
    if found is None:
        shards = sharded_count(_SHARDS, ps.key, ps.bindings)
        if shards == 1:
            data = _state_bytes(ps)
            remember_at(path, data, "placement-state", (ps, 1))
            found = (((path, data),), None)
        else:
            made = _SHARDS.files(ps.key, ps.bindings, shards)
            head, value = _head(ps, shards)
            read = (value[0], *(bindings for _, _, bindings in made))
            found = (((path, head), *((p, data) for p, data, _ in made)), read)
        _PLACED.put(ps.key, (ps,), found)
    if found[1] is not None:
        _WHOLE.put(ps.key, found[1], ps)
    return found[0]


def _head(ps: PlacementState, shards: int) -> tuple[bytes, tuple[PlacementState, int]]:
    """The state file of `ps` without its bindings, saying `bindingShards`, and its value."""
    inputs: tuple[Any, ...] = (ps.generation, ps.spec_hash, ps.origin_file, ps.selected)
    inputs += (ps.policy_snapshots, ps.resource_snapshots, ps.deleting, shards)
    found = _HEADS.get(ps.key, inputs)
    if found is None:
        doc = {**placement_state_doc(ps, grouped={}), SHARDS_FIELD: shards}
        data = dump_yaml(doc).encode()
        found = (data, remember(data, "placement-state", (replace(ps, bindings=()), shards)))
        _HEADS.put(ps.key, inputs, found)
    return found


_GROUPS: StageMemo[Any] = StageMemo()
"""Placement key -> its bindings' rows, groups and texts as last written (`keptgroups`)."""
_CLUSTER = attrgetter("cluster")


def _patched_text(ps: PlacementState) -> str | None:
    """The state file of `ps` with its bindings and groups patched from the last one written
    for the placement where a binding is another object (`keptgroups.KeptGroups`); None when
    its bindings are not one a cluster in cluster order (then `_bindings_to_yaml` groups
    them, in the scheduler's order)."""
    bindings = ps.bindings
    if not one_a_cluster_in_order(bindings):
        _GROUPS.drop(ps.key)
        return None
    by_cluster = dict(zip(map(_CLUSTER, bindings), bindings, strict=True))
    last = _GROUPS.last(ps.key)
    kept = last[1] if last is not None else new_groups()
    kept = kept.update(by_cluster, binding_to_yaml)
    _GROUPS.put(ps.key, (), kept)
    spliced = Spliced()
    grouped = grouped_parts(kept, spliced)
    return _keyed_text(placement_state_doc(ps, grouped=grouped), grouped, spliced)


_KEY_TEXTS: RoundMemo[str] = RoundMemo()
"""(top-level key, its frozen value) -> the key's block in a state file, this pass and last."""


def _keyed_text(doc: dict[str, Any], grouped: dict[str, Any], spliced: Spliced) -> str:
    """`dump_yaml(doc)` with each key's block kept by its value (`_KEY_TEXTS`) but for the
    `grouped` keys, emitted with their kept parts (`yamlparts.keyed_dump`)."""
    return keyed_dump(doc, grouped, spliced, _key_text)


def _key_text(key: str, value: Any) -> str:
    return _KEY_TEXTS.get((key, freeze(value)), partial(dump_yaml, {key: value}))


_BLOCKS = Blocks()
"""The texts of the state files' lists of cluster names, for this pass and the last."""


def _state_text(doc: dict[str, Any], pieces: Pieces) -> str:
    """`dump_yaml(doc, pieces=pieces)` of a placement state: its binding entries written from
    their kept texts, its binding groups' cluster names from kept name texts (`Spliced`)."""
    spliced = Spliced()
    rows = doc["bindings"]
    parts = {**doc, "bindings": spliced.part(rows, items_block(rows, pieces))}
    if doc.get("bindingGroups"):
        parts["bindingGroups"] = grouped_names(doc["bindingGroups"], "clusters", spliced, _BLOCKS)
    return spliced.dump(parts)


def _all_placement_files(
    placements: Mapping[str, PlacementState],
) -> tuple[dict[str, bytes], dict[str, Any]]:
    """Every placement's state files, and state path -> its state. When the placements are
    those of the last call but for a few states (by identity, `changed_keys`), the last
    call's files with those placements' files replaced."""
    last = _ALL.last("")
    ordered = dict(sorted(placements.items()))
    if last is not None and list(last[1][0]) == list(ordered):
        before, files, values, paths = last[1]
        files, values, paths = dict(files), dict(values), dict(paths)
        keys = sorted(changed_keys(before, ordered))
    else:
        files, values, paths, keys = {}, {}, {}, list(ordered)
    for key in keys:
        for path in paths.get(key, ()):
            del files[path]
        made = _placement_files(key, ordered[key])
        files.update(made)
        values[made[0][0]] = ordered[key]
        paths[key] = tuple(path for path, _ in made)
    _ALL.put("", (), (ordered, files, values, paths))
    return dict(files), dict(values)  # the callers add to them


_ALL: StageMemo[Any] = StageMemo()
"""The last placements written (key -> state), their files, state path -> state, and key ->
the paths of its files."""


def state_files(
    state: State, output: Mapping[str, bytes] | None = None, clusters: Iterable[str] | None = None
) -> dict[str, bytes]:
    """`state/placements/<key>.yaml` for every placement, and `state/overrides.yaml`; with
    `output` (the new output tree, its index and status files final) `state/prior/` too
    (`clusters`: those with an index file in `output`, when the caller knows them)."""
    _BLOCKS.next_round()
    _KEY_TEXTS.next_round()
    files, values = _all_placement_files(state.placements)
    if state.overrides:
        files[OVERRIDES_FILE], values[OVERRIDES_FILE] = override_file(state.overrides)
    _OWN.wrote(files, values)
    if output is not None:
        bindings = {key: ps.bindings for key, ps in state.placements.items()}
        files.update(prior_files(bindings, placement_rows(output, clusters), output))
    return files


def parse_placement_state(doc: Mapping[str, Any]) -> PlacementState:
    """Inverse of `placement_state_doc`. Raises KeyError/ValueError on a malformed document."""
    return PlacementState(
        key=str(doc["metadata"]["name"]),
        generation=int(doc.get("generation", 0)),
        spec_hash=str(doc.get("specHash", "")),
        origin_file=str(doc.get("originFile", "")),
        policy_snapshots=read_snapshots(doc.get("policySnapshots")),
        resource_snapshots=read_snapshots(doc.get("resourceSnapshots")),
        bindings=read_binding_rows(doc),
        deleting=read_bindings(doc.get("deleting")),
        selected=tuple((str(r["id"]), str(r["file"])) for r in doc.get("selected") or []),
    )


def parse_state_head(doc: Mapping[str, Any]) -> tuple[PlacementState, int]:
    """A state file's placement state (without bindings when they are sharded) and its count
    of binding shards (1: none, the bindings are in the file)."""
    shards = int(doc.get(SHARDS_FIELD, 1))
    if shards != 1 and "bindings" in doc:
        raise ValueError(f"both bindings and {SHARDS_FIELD}")
    return parse_placement_state(doc), shards


_WHOLE: StageMemo[PlacementState] = StageMemo()
"""Placement key -> its state made of a state file and its shards, with what it was made of
(the state a pass wrote, put there by `state_files`: read back as the very same object)."""


def read_placement_state(files: Mapping[str, bytes], path: str) -> PlacementState:
    """The placement state of the state file at `path` with its bindings, from its shard files
    when it has some. Raises like `derive_own`, or ShardProblem naming a shard file."""
    head, shards = derive_own(files, path, "placement-state", parse_state_head)
    if shards == 1:
        return head
    parts = read_shards(files, head.key, shards)
    inputs = (head, *parts)
    found = _WHOLE.get(head.key, inputs)
    if found is None:
        bindings = sorted((b for part in parts for b in part), key=lambda b: (b.cluster, b.state))
        found = replace(head, bindings=tuple(bindings))
        _WHOLE.put(head.key, inputs, found)
    return found


_OWN: OwnFiles[Any] = OwnFiles()
"""The state files of the last pass: state path -> its placement state (and the overrides)."""


def own_states(files: Mapping[str, bytes]) -> dict[str, Any] | None:
    """State path -> placement state of every state file in `files` when they are the very
    files the last pass wrote (`ownprior`: nothing is read), else None. Shared: read only."""
    own = _OWN.values(files)
    if own is None or (OVERRIDES_FILE in own) != (OVERRIDES_FILE in files):
        return None
    heads = [p for p in paths_under(files, PLACEMENT_STATE_PREFIX) if p.endswith(".yaml")]
    if len(heads) + (OVERRIDES_FILE in own) != len(own) or not all(map(own.__contains__, heads)):
        return None
    return {**{path: own[path] for path in heads}, **own}  # in path order, as read


def read_state(files: Mapping[str, bytes]) -> tuple[State, list[str]]:
    """Rebuild the State from a previous output tree; unreadable state files (or their binding
    shards) are reported and skipped (their placements start afresh) rather than failing the
    pass. The files the last pass wrote give its states without a read (`own_states`)."""
    own = own_states(files)
    if own is not None:
        states = {ps.key: ps for path, ps in own.items() if path != OVERRIDES_FILE}
        return State(states, files, own.get(OVERRIDES_FILE, {})), []
    placements: dict[str, PlacementState] = {}
    problems: list[str] = []
    for path in [p for p in paths_under(files, PLACEMENT_STATE_PREFIX) if p.endswith(".yaml")]:
        try:
            ps = read_placement_state(files, path)
        except ShardProblem as exc:
            problems.append(f"{exc}: the state of {path} ignored")
            continue
        except (yaml.YAMLError, AttributeError, KeyError, TypeError, ValueError) as exc:
            problems.append(f"{path}: unreadable state file ignored ({type(exc).__name__})")
            continue
        placements[ps.key] = ps
    overrides = read_overrides(files, problems)
    return State(placements=placements, output=files, overrides=overrides), problems

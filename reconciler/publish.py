"""Vendor-neutral placement output: PlacementDecision slices and the ClusterProfiles they name.

`decision_files` writes `decisions/<placement>-<i>.yaml` for every placement (KEP-5313,
multicluster.x-k8s.io/v1alpha1; `reconciler.decisions`: up to 100 clusters one slice, more cut
into stable hash shards, each slice with the revision of its own cluster list, so a slice whose
clusters are unchanged rewrites nothing); a held placement keeps its previous decision files.
A recomputed placement whose targeted clusters and reasons are unchanged (a cluster it does not
select came or went) keeps its files; otherwise its clusters are kept per shard with each
(cluster, reason)'s ClusterDecision text (`reconciler.yamlparts`), patched where a binding's
state or a decision changed, and only the shards whose clusters or texts changed are written
again (every one when the shard count changes); no slice is emitted whole again: a slice's text
around its decisions is kept with a token for the revision. A decision is the scheduler's
output: every cluster with a Scheduled or Bound binding, including clusters the rollout has not
reached yet (a rolling update's later waves, an External placement's held clusters); Unscheduled
bindings are not listed. `profile_files` writes one ClusterProfile per member cluster (each
made again only when its MemberCluster is another object).
Called by `reconciler.pass_`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from typing import Any

from gitfleet.api.shards import shard_of
from gitfleet.load.yamlio import dump_yaml
from reconciler.decisions import (
    PROFILE_NAMESPACE,
    REVISION_ANNOTATION,
    cluster_profile_documents,
    cluster_shards,
    decision_entry,
    shard_documents,
    shard_slices,
    slice_count,
    slice_path,
)
from reconciler.isolate import hold
from reconciler.output import yaml_bytes
from reconciler.placement import PlacementPlan
from reconciler.priorparse import freeze, paths_under
from reconciler.publishread import Decided, Reading, read_afresh, read_changes
from reconciler.schedule.clusters import ClusterView
from reconciler.schedule.outcome import UNSCHEDULED
from reconciler.stagememo import IdentityMemo, RoundMemo, StageMemo
from reconciler.state import State
from reconciler.yamlparts import ItemTexts

_DECISIONS: StageMemo[dict[str, bytes]] = StageMemo()
"""Placement key -> its decision files, with the bindings and decisions they were made from."""
_KEPT: StageMemo[_Kept] = StageMemo()
"""Placement key -> its decision files with what they were written from (`_published`)."""
_ENTRY_TEXTS = ItemTexts()
"""(cluster, reason) -> the text of its ClusterDecision entry, for this pass and the last."""


def decision_files(plans: Mapping[str, PlacementPlan], prior: State) -> dict[str, bytes]:
    """Every placement's decision files; one whose bindings and scheduling decisions are last
    pass's very objects gets that pass's bytes, and so does one whose targeted clusters and
    their reasons are unchanged (a cluster it does not select came or went)."""
    _ENTRY_TEXTS.next_round()
    _AROUND.next_round()
    files: dict[str, bytes] = {}
    for key, plan in sorted(plans.items()):
        if not plan.held:
            inputs = (plan.name, plan.namespace, plan.state.bindings, plan.decisions)
            found = _DECISIONS.get(key, inputs)
            if found is not None:
                files.update(found)
                continue
            try:
                written = _published(key, plan)
                _DECISIONS.put(key, inputs, written)
                files.update(written)
                continue
            except Exception as exc:  # one placement's fault fails it alone
                _DECISIONS.drop(key)
                _KEPT.drop(key)
                hold(plan, "writing the scheduling decisions of", exc)
        files.update(_prior_slices(key, prior))
    return files


def _prior_slices(key: str, prior: State) -> dict[str, bytes]:
    """The placement's decision files of the last pass (`<key>-<digits>.yaml`: not those of a
    placement whose key continues with `-`)."""
    prefix = f"decisions/{key}-"
    paths = paths_under(prior.output, prefix)
    return {p: prior.output[p] for p in paths if _is_slice(p, prefix)}


def _is_slice(path: str, prefix: str) -> bool:
    """`path` is `<prefix><digits>.yaml`."""
    index = path[len(prefix) :].removesuffix(".yaml")
    return path.endswith(".yaml") and index.isascii() and index.isdigit()


_Shard = tuple[list[str], list[str | None]]
"""One shard's targeted clusters in name order and the entry text of each."""


@dataclass(frozen=True)
class _Kept:
    """A placement's decision files and what they were written from: the state of its binding
    to each cluster (one a cluster), its (cluster, selected, reason) decisions (one a cluster),
    the targeted clusters by shard (`cluster_shards`: each shard's clusters in order with each
    one's entry text), and the selected ones' reasons."""

    key: str
    name: str
    namespace: str
    states: dict[str, str]
    decided: set[tuple[str, bool, str]]
    shards: list[_Shard]
    reasons: dict[str, str]
    files: dict[str, bytes]
    bindings: tuple[Any, ...] = ()
    decisions: tuple[Any, ...] = ()


MAX_PATCHED = 0.25
"""Above this share of changed clusters a placement's decisions are written afresh."""


def _published(key: str, plan: PlacementPlan) -> dict[str, bytes]:
    """The placement's decision files: last pass's when its name, namespace, targeted clusters
    and their reasons are unchanged; else its kept entry texts patched where a binding's state
    or a decision changed (`_patched`: set differences in C, bisect into the kept shards), or
    every cluster's entry text taken again (`_afresh`). Kept only while no cluster has two
    bindings or two decisions."""
    bindings, decisions = plan.state.bindings, plan.decisions
    last = _KEPT.last(key)
    before = last[1] if last is not None else None
    reading = _read(before, bindings, decisions)
    kept = None
    named = (plan.name, plan.namespace)
    if before is not None and reading.unique and (before.name, before.namespace) == named:
        kept = _patched(before, reading)
    if kept is None:
        kept = _afresh(key, plan, reading.states, reading.decided)
    if reading.unique:
        _KEPT.put(key, (), replace(kept, bindings=bindings, decisions=decisions))
    else:
        _KEPT.drop(key)
    return kept.files


def _read(before: _Kept | None, bindings: tuple[Any, ...], decisions: tuple[Any, ...]) -> Reading:
    """Each cluster's binding state, the (cluster, selected, reason) decisions and whether no
    cluster has two of either: last pass's patched where the bindings and decisions are other
    objects (`publishread`)."""
    if before is None:
        return read_afresh(bindings, decisions)
    was = Reading(before.states, before.decided, True)
    return read_changes(was, (before.bindings, before.decisions), bindings, decisions)


def _afresh(
    key: str, plan: PlacementPlan, states: dict[str, str], decided: set[tuple[str, bool, str]]
) -> _Kept:
    """Every targeted cluster's entry text taken again (`_ENTRY_TEXTS`) and the files written."""
    reasons = {d.cluster: d.reason for d in plan.decisions if d.selected}
    ordered = sorted(set(plan.targeted_clusters()))
    texts = [_entry_text(c, reasons.get(c)) for c in ordered]
    shards = _sharded(ordered, texts)
    files = _written(key, plan.name, plan.namespace, shards, range(len(shards)), reasons)
    return _Kept(key, plan.name, plan.namespace, states, decided, shards, reasons, files)


def _sharded(ordered: list[str], texts: list[str | None]) -> list[_Shard]:
    """The clusters `ordered` (sorted, each once) and their `texts` cut into shards."""
    text_of = dict(zip(ordered, texts, strict=True))
    return [(names, [text_of[c] for c in names]) for names in cluster_shards(ordered)]


def _patched(before: _Kept, reading: Reading) -> _Kept | None:
    """`_afresh` made from the last files: only the clusters whose binding state or decision
    differs are looked at (as the reading names them, else set differences in C), only the
    shards they are in written again; None when too many did."""
    states, decided = reading.states, reading.decided
    touched, gone, new = reading.changes or _changes(before, states, decided)
    if not touched:
        return replace(before, states=states, decided=decided)
    if len(touched) > MAX_PATCHED * sum(len(names) for names, _ in before.shards) + 8:
        return None
    reasons = dict(before.reasons)
    for cluster, _, _ in gone:
        reasons.pop(cluster, None)
    reasons.update((cluster, reason) for cluster, selected, reason in new if selected)
    shards = list(before.shards)
    copied: set[int] = set()
    for cluster in sorted(touched):
        at = shard_of(cluster, len(shards))
        if at not in copied:
            copied.add(at)
            shards[at] = (list(shards[at][0]), list(shards[at][1]))
        _patch(shards[at], cluster, states.get(cluster, UNSCHEDULED) == UNSCHEDULED, reasons)
    changed = sorted(at for at in copied if shards[at] != before.shards[at])
    files = before.files
    if changed:
        shards, files = _rewritten(before, shards, changed, reasons)
    named = (before.key, before.name, before.namespace)
    return _Kept(*named, states, decided, shards, reasons, files)


def _changes(
    before: _Kept, states: dict[str, str], decided: set[Decided]
) -> tuple[set[str], set[Decided], set[Decided]]:
    """(the clusters whose binding state or decision differs, the decisions gone, the new
    ones) between `before` and a reading made afresh."""
    gone, new = (
        (set(), set())
        if decided is before.decided
        else (before.decided - decided, decided - before.decided)
    )
    touched = (
        set() if states is before.states else {p[0] for p in before.states.items() ^ states.items()}
    )
    return touched | {d[0] for d in gone} | {d[0] for d in new}, gone, new


def _patch(shard: _Shard, cluster: str, gone: bool, reasons: Mapping[str, str]) -> None:
    """`cluster` taken out of its `shard` (`gone`), or its entry text put in (bisect)."""
    clusters, texts = shard
    at = bisect_left(clusters, cluster)
    present = at < len(clusters) and clusters[at] == cluster
    if gone:
        if present:
            del clusters[at], texts[at]
        return
    text = _entry_text(cluster, reasons.get(cluster))
    if present:
        texts[at] = text
    else:
        clusters.insert(at, cluster)
        texts.insert(at, text)


def _rewritten(
    before: _Kept, shards: list[_Shard], changed: list[int], reasons: Mapping[str, str]
) -> tuple[list[_Shard], dict[str, bytes]]:
    """(the shards, the files) once the `changed` shards are written again: the last files
    with those shards' slices replaced, or, when the shard count is another one now, every
    cluster in its new shard and every slice written."""
    named = (before.key, before.name, before.namespace)
    count = len(shards)
    if slice_count(sum(len(names) for names, _ in shards)) != count:
        pairs = sorted((c, t) for names, texts in shards for c, t in zip(names, texts, strict=True))
        shards = _sharded([c for c, _ in pairs], [t for _, t in pairs])
        return shards, _written(*named, shards, range(len(shards)), reasons)
    files = dict(before.files)
    for at in changed:
        for index, _ in shard_slices(before.shards[at][0], at, count):
            del files[slice_path(before.key, index)]
    files.update(_written(*named, shards, changed, reasons))
    return shards, files


def _entry_text(cluster: str, reason: str | None) -> str | None:
    """The kept text of one ClusterDecision entry (per cluster and reason)."""
    ns = PROFILE_NAMESPACE
    return _ENTRY_TEXTS.text((cluster, reason, ns), partial(decision_entry, cluster, reason, ns))


def _written(
    key: str,
    name: str,
    namespace: str,
    shards: list[_Shard],
    which: Iterable[int],
    reasons: Mapping[str, str],
) -> dict[str, bytes]:
    """The slices of the shards `which` of `shards`, from each cluster's entry text."""
    written: dict[str, bytes] = {}
    for at in which:
        clusters, texts = shards[at]
        done = 0
        for path, doc, chunk in shard_documents(key, name, namespace, clusters, at, len(shards)):
            written[path] = _slice_bytes(doc, chunk, reasons, texts[done : done + len(chunk)])
            done += len(chunk)
    return written


def _slice_bytes(
    doc: dict[str, Any],
    chunk: list[str],
    reasons: Mapping[str, str],
    texts: list[str | None] | None = None,
) -> bytes:
    """`yaml_bytes` of the slice `doc` with the entries of `chunk`: its keys before and after
    `decisions` emitted, the entries' texts kept per (cluster, reason) (`texts`: theirs, when
    the caller kept them)."""
    if texts is None:
        texts = [_entry_text(cluster, reasons.get(cluster)) for cluster in chunk]
    if None in texts:  # an entry that cannot be padded: the whole document, emitted
        ns = PROFILE_NAMESPACE
        entries = [decision_entry(c, reasons.get(c), ns) for c in chunk]
        return yaml_bytes({**doc, "decisions": entries})
    body = "decisions:\n" + "".join(texts) if texts else "decisions: []\n"  # type: ignore[arg-type]
    return (_around(doc, "decisions", body)).encode()


_AROUND: RoundMemo[tuple[str, str] | None] = RoundMemo()
"""A slice without its decisions and revision -> its text before and after `decisions`, with
`REVISION_TOKEN` for the revision (None: the token is not written plain)."""
REVISION_TOKEN = "gitfleet-revision-5e1f"
"""Stands for the revision in a kept slice text (a plain scalar no document holds)."""


def _around(doc: dict[str, Any], field: str, body: str) -> str:
    """`dump_yaml` of `doc` with `field`'s text `body`: the keys before and after it emitted
    once per slice shape and kept (`_AROUND`), the revision put in where the token stands
    (when both are plain scalars: every revision of a slice then gives its own bytes)."""
    annotations = doc["metadata"]["annotations"]
    revision = annotations[REVISION_ANNOTATION]
    shape = {**doc, "metadata": {**doc["metadata"], "annotations": {**annotations}}}
    shape["metadata"]["annotations"][REVISION_ANNOTATION] = REVISION_TOKEN
    shape.pop(field, None)
    kept = _AROUND.get(freeze(shape), partial(_around_texts, shape, field))
    if kept is None or not _plain(revision):
        before = {k: v for k, v in doc.items() if k < field}
        after = {k: v for k, v in doc.items() if k > field}
        return dump_yaml(before) + body + dump_yaml(after)
    head, tail = (part.replace(REVISION_TOKEN, revision) for part in kept)
    return head + body + tail


def _around_texts(shape: dict[str, Any], field: str) -> tuple[str, str] | None:
    before = dump_yaml({k: v for k, v in shape.items() if k < field})
    after = dump_yaml({k: v for k, v in shape.items() if k > field})
    if (before + after).count(REVISION_TOKEN) != 1 or not _plain(REVISION_TOKEN):
        return None
    return before, after


@lru_cache(maxsize=4096)
def _plain(value: str) -> bool:
    """`value` is written as itself (a plain scalar) where a mapping holds it."""
    return dump_yaml({"v": value}) == f"v: {value}\n"


_PROFILES: IdentityMemo[tuple[str, str, bytes]] = IdentityMemo()
"""MemberCluster -> (view name, path, bytes) of its ClusterProfile, for the last two passes."""


def profile_files(views: Mapping[str, ClusterView]) -> dict[str, bytes]:
    """One ClusterProfile per cluster: a document made only of the view's name and its
    MemberCluster, so an unchanged MemberCluster object (the loader keeps it while its file
    and report are unchanged) gives last pass's bytes without building the document."""
    _PROFILES.next_round()
    files: dict[str, bytes] = {}
    for name in sorted(views):
        view = views[name]
        found = _PROFILES.get(view.cluster)
        if found is None or found[0] != name:
            [(path, doc)] = cluster_profile_documents({name: view})
            found = (name, path, yaml_bytes(doc))
            _PROFILES.put(view.cluster, found)
        files[found[1]] = found[2]
    return files

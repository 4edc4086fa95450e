"""Vendor-neutral placement output: PlacementDecision slices and the ClusterProfiles they name.

`decision_files` writes `decisions/<placement>-<i>.yaml` for every placement (KEP-5313,
multicluster.x-k8s.io/v1alpha1; at most 100 clusters a slice, clusters in name order, a revision
derived from the decision so an unchanged decision rewrites nothing); a held placement keeps its
previous decision files. A recomputed placement whose targeted clusters and reasons are
unchanged (a cluster it does not select came or went) keeps its files; otherwise its slices are
assembled from each (cluster, reason)'s kept ClusterDecision text (`reconciler.yamlparts`), so
no slice is emitted whole again: the kept texts are patched where a binding's state or a
decision changed, and a slice's text around its decisions is kept with a token for the
revision. A decision is the scheduler's output: every cluster with a
Scheduled or Bound binding, including clusters the rollout has not reached yet (a rolling
update's later waves, an External placement's held clusters); Unscheduled bindings are not
listed. `profile_files` writes one ClusterProfile per member cluster (each
made again only when its MemberCluster is another object).
Called by `reconciler.pass_`.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from operator import attrgetter, is_
from typing import Any

from gitfleet.load.yamlio import dump_yaml
from reconciler.decisions import (
    PROFILE_NAMESPACE,
    REVISION_ANNOTATION,
    cluster_profile_documents,
    decision_entry,
    decision_slices,
)
from reconciler.isolate import hold
from reconciler.output import yaml_bytes
from reconciler.placement import PlacementPlan
from reconciler.priorparse import freeze, paths_under
from reconciler.schedule.clusters import ClusterView
from reconciler.schedule.outcome import UNSCHEDULED
from reconciler.stagememo import IdentityMemo, RoundMemo, StageMemo
from reconciler.state import State
from reconciler.yamlparts import ItemTexts


def _revision(clusters: list[str]) -> str:
    return hashlib.sha256("\n".join(clusters).encode()).hexdigest()[:16]


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
        prefix = f"decisions/{key}-"
        files.update({p: prior.output[p] for p in paths_under(prior.output, prefix)})
    return files


@dataclass(frozen=True)
class _Kept:
    """A placement's decision files and what they were written from: the state of its binding
    to each cluster (one a cluster), its (cluster, selected, reason) decisions (one a cluster),
    the targeted clusters in order with each one's entry text, and the selected ones' reasons."""

    key: str
    name: str
    namespace: str
    states: dict[str, str]
    decided: set[tuple[str, bool, str]]
    clusters: list[str]
    texts: list[str | None]
    reasons: dict[str, str]
    files: dict[str, bytes]
    bindings: tuple[Any, ...] = ()
    decisions: tuple[Any, ...] = ()


_PAIR = attrgetter("cluster", "state")
_CLUSTER = attrgetter("cluster")
_DECIDED = attrgetter("cluster", "selected", "reason")
MAX_PATCHED = 0.25
"""Above this share of changed clusters a placement's decisions are written afresh."""


def _published(key: str, plan: PlacementPlan) -> dict[str, bytes]:
    """The placement's decision files: last pass's when its name, namespace, targeted clusters
    and their reasons are unchanged; else its kept entry texts patched where a binding's state
    or a decision changed (`_patched`: set differences in C, bisect into the kept order), or
    every cluster's entry text taken again (`_afresh`). Kept only while no cluster has two
    bindings or two decisions."""
    bindings, decisions = plan.state.bindings, plan.decisions
    last = _KEPT.last(key)
    before = last[1] if last is not None else None
    states, decided, unique = _read(before, bindings, decisions)
    kept = None
    named = (plan.name, plan.namespace)
    if before is not None and unique and (before.name, before.namespace) == named:
        kept = _patched(before, states, decided)
    if kept is None:
        kept = _afresh(key, plan, states, decided)
    if unique:
        _KEPT.put(key, (), replace(kept, bindings=bindings, decisions=decisions))
    else:
        _KEPT.drop(key)
    return kept.files


def _read(
    before: _Kept | None, bindings: tuple[Any, ...], decisions: tuple[Any, ...]
) -> tuple[dict[str, str], set[tuple[str, bool, str]], bool]:
    """(each cluster's binding state, the (cluster, selected, reason) decisions, whether no
    cluster has two of either): last pass's when the bindings or decisions are its objects."""
    if before is not None and bindings is before.bindings:
        states = before.states
    else:
        states = dict(map(_PAIR, bindings))
    unique = len(states) == len(bindings)
    if before is not None and _same(decisions, before.decisions):
        return states, before.decided, unique
    decided = set(map(_DECIDED, decisions))
    return states, decided, unique and len(set(map(_CLUSTER, decisions))) == len(decisions)


def _same(items: tuple[Any, ...], kept: tuple[Any, ...]) -> bool:
    """The very objects, in order (compared in C)."""
    return items is kept or (len(items) == len(kept) and all(map(is_, items, kept)))


def _afresh(
    key: str, plan: PlacementPlan, states: dict[str, str], decided: set[tuple[str, bool, str]]
) -> _Kept:
    """Every targeted cluster's entry text taken again (`_ENTRY_TEXTS`) and the files written."""
    clusters = plan.targeted_clusters()
    reasons = {d.cluster: d.reason for d in plan.decisions if d.selected}
    ordered = sorted(set(clusters))
    texts = [_entry_text(c, reasons.get(c)) for c in ordered]
    files = _written(key, plan.name, plan.namespace, clusters, texts, reasons)
    return _Kept(key, plan.name, plan.namespace, states, decided, ordered, texts, reasons, files)


def _patched(
    before: _Kept, states: dict[str, str], decided: set[tuple[str, bool, str]]
) -> _Kept | None:
    """`_afresh` made from the last files: only the clusters whose binding state or decision
    differs are looked at (set differences in C); None when too many did."""
    gone, new = (
        (set(), set())
        if decided is before.decided
        else (before.decided - decided, decided - before.decided)
    )
    touched = (
        set() if states is before.states else {p[0] for p in before.states.items() ^ states.items()}
    )
    touched |= {d[0] for d in gone} | {d[0] for d in new}
    if not touched:
        return replace(before, states=states, decided=decided)
    if len(touched) > MAX_PATCHED * len(before.clusters) + 8:
        return None
    reasons = dict(before.reasons)
    for cluster, _, _ in gone:
        reasons.pop(cluster, None)
    reasons.update((cluster, reason) for cluster, selected, reason in new if selected)
    clusters, texts = list(before.clusters), list(before.texts)
    for cluster in sorted(touched):
        at = bisect_left(clusters, cluster)
        present = at < len(clusters) and clusters[at] == cluster
        if states.get(cluster, UNSCHEDULED) == UNSCHEDULED:
            if present:
                del clusters[at], texts[at]
            continue
        text = _entry_text(cluster, reasons.get(cluster))
        if present:
            texts[at] = text
        else:
            clusters.insert(at, cluster)
            texts.insert(at, text)
    files = before.files
    if clusters != before.clusters or texts != before.texts:
        files = _written(before.key, before.name, before.namespace, clusters, texts, reasons)
    named = (before.key, before.name, before.namespace)
    return _Kept(*named, states, decided, clusters, texts, reasons, files)


def _entry_text(cluster: str, reason: str | None) -> str | None:
    """The kept text of one ClusterDecision entry (per cluster and reason)."""
    ns = PROFILE_NAMESPACE
    return _ENTRY_TEXTS.text((cluster, reason, ns), partial(decision_entry, cluster, reason, ns))


def _written(
    key: str,
    name: str,
    namespace: str,
    clusters: list[str],
    texts: list[str | None],
    reasons: Mapping[str, str],
) -> dict[str, bytes]:
    """The slices of the targeted `clusters` (as `targeted_clusters` gives them: the revision
    is theirs), with `texts`: the entry text of each of them in order, duplicates once."""
    written: dict[str, bytes] = {}
    at = 0
    for path, doc, chunk in decision_slices(key, name, namespace, clusters, _revision(clusters)):
        written[path] = _slice_bytes(doc, chunk, reasons, texts[at : at + len(chunk)])
        at += len(chunk)
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

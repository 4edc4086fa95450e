"""Vendor-neutral placement output: PlacementDecision slices and the ClusterProfiles they name.

`decision_files` writes `decisions/<placement>-<i>.yaml` for every placement (KEP-5313,
multicluster.x-k8s.io/v1alpha1; at most 100 clusters a slice, clusters in name order, a revision
derived from the decision so an unchanged decision rewrites nothing); a held placement keeps its
previous decision files. A recomputed placement whose targeted clusters and reasons are
unchanged (a cluster it does not select came or went) keeps its files; otherwise its slices are
assembled from each (cluster, reason)'s kept ClusterDecision text (`reconciler.yamlparts`), so
no slice is emitted whole again. A decision is the scheduler's output: every cluster with a
Scheduled or Bound binding, including clusters the rollout has not reached yet (a rolling
update's later waves, an External placement's held clusters); Unscheduled bindings are not
listed. `profile_files` writes one ClusterProfile per member cluster (each
made again only when its MemberCluster is another object).
Called by `reconciler.pass_`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from functools import partial
from typing import Any

from gitfleet.load.yamlio import dump_yaml
from reconciler.decisions import (
    PROFILE_NAMESPACE,
    cluster_profile_documents,
    decision_entry,
    decision_slices,
)
from reconciler.isolate import hold
from reconciler.output import yaml_bytes
from reconciler.placement import PlacementPlan
from reconciler.priorparse import paths_under
from reconciler.schedule.clusters import ClusterView
from reconciler.stagememo import IdentityMemo, StageMemo
from reconciler.state import State
from reconciler.yamlparts import ItemTexts


def _revision(clusters: list[str]) -> str:
    return hashlib.sha256("\n".join(clusters).encode()).hexdigest()[:16]


_DECISIONS: StageMemo[dict[str, bytes]] = StageMemo()
"""Placement key -> its decision files, with the bindings and decisions they were made from."""
_PUBLISHED: StageMemo[dict[str, bytes]] = StageMemo()
"""Placement key -> its decision files, with exactly what they read (`_published`)."""
_ENTRY_TEXTS = ItemTexts()
"""(cluster, reason) -> the text of its ClusterDecision entry, for this pass and the last."""


def decision_files(plans: Mapping[str, PlacementPlan], prior: State) -> dict[str, bytes]:
    """Every placement's decision files; one whose bindings and scheduling decisions are last
    pass's very objects gets that pass's bytes, and so does one whose targeted clusters and
    their reasons are unchanged (a cluster it does not select came or went)."""
    _ENTRY_TEXTS.next_round()
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
                _PUBLISHED.drop(key)
                hold(plan, "writing the scheduling decisions of", exc)
        prefix = f"decisions/{key}-"
        files.update({p: prior.output[p] for p in paths_under(prior.output, prefix)})
    return files


def _published(key: str, plan: PlacementPlan) -> dict[str, bytes]:
    """The placement's decision files, last pass's when its name, namespace, targeted
    clusters and their reasons are unchanged; else assembled from each cluster's kept entry."""
    clusters = plan.targeted_clusters()
    reasons = {d.cluster: d.reason for d in plan.decisions if d.selected}
    read = (plan.name, plan.namespace, tuple((c, reasons.get(c)) for c in clusters))
    found = _PUBLISHED.get(key, read)
    if found is not None:
        return found
    written: dict[str, bytes] = {}
    revision = _revision(clusters)
    for path, doc, chunk in decision_slices(key, plan.name, plan.namespace, clusters, revision):
        written[path] = _slice_bytes(doc, chunk, reasons)
    _PUBLISHED.put(key, read, written)
    return written


def _slice_bytes(doc: dict[str, Any], chunk: list[str], reasons: Mapping[str, str]) -> bytes:
    """`yaml_bytes` of the slice `doc` with the entries of `chunk`: its keys before and after
    `decisions` emitted, the entries' texts kept per (cluster, reason)."""
    ns = PROFILE_NAMESPACE
    texts = []
    for cluster in chunk:
        reason = reasons.get(cluster)
        text = _ENTRY_TEXTS.text(
            (cluster, reason, ns), partial(decision_entry, cluster, reason, ns)
        )
        if text is None:  # an entry that cannot be padded: the whole document, emitted
            entries = [decision_entry(c, reasons.get(c), ns) for c in chunk]
            return yaml_bytes({**doc, "decisions": entries}, memo=False)
        texts.append(text)
    before = {k: v for k, v in doc.items() if k < "decisions"}
    after = {k: v for k, v in doc.items() if k > "decisions"}
    body = "decisions:\n" + "".join(texts) if texts else "decisions: []\n"
    return (dump_yaml(before) + body + dump_yaml(after)).encode()


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

"""Manifests as the agent applies them: one serialised object a file, per cluster when overridden.

`default_manifests` serialises a placement's selected objects once (envelopes unwrapped, spec
§6.5): every cluster without applicable overrides shares those bytes. `OverrideRenderer` gives a
cluster with applicable overrides its own list: each object goes through
`PlacementOverrides.apply` (memoised per distinct object, override set and variable values) and
each distinct result is serialised once; results that differ only by the cluster's name and
label values are serialised once for all clusters on which the same rules apply
(`reconciler.nametemplate`); a cluster's whole result is made once per cluster label set when
no part of it reads the cluster's name. Serialised bytes are kept across
passes by content hash, and a source object's manifest by object (`source_manifest`), so a
long-running hub serialises only what changed. A patch failure drops only that object for that
cluster and is reported (the caller keeps the previous file). Called by `reconciler.placement`.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, TypeAlias

from gitfleet.api.canonical import content_hash, pairs_content_hash
from gitfleet.load.yamlio import dump_yaml
from reconciler.nametemplate import (
    MAX_LABELS,
    TOKEN,
    NameTemplate,
    holds_stand_in,
    instantiate,
    label_token,
    template_of,
)
from reconciler.output import object_file_name, object_identity
from reconciler.override import PlacementOverrides, wrapped_resource
from reconciler.override.cache import OverrideFault
from reconciler.schedule.clusters import ClusterView
from reconciler.select import ResourceIndex, SelectedResource, Selection

ENVELOPE_KINDS = frozenset({"ResourceEnvelope", "ClusterResourceEnvelope"})
ENVELOPE_GROUP = "placement.kubernetes-fleet.io"
MEMO_BYTES = 256 * 1024 * 1024
"""Serialised bytes kept by content hash across passes (least recently used dropped first)."""
MAX_SOURCES = 200_000
"""Source objects whose manifest is remembered (`source_manifest`)."""

_by_hash: OrderedDict[str, bytes] = OrderedDict()
_held = 0
_by_source: OrderedDict[int, tuple[Any, Manifest]] = OrderedDict()
MAX_OUTCOMES = 500_000
"""Override outcomes remembered across passes (`OverrideRenderer._remembered`)."""
Outcome: TypeAlias = "Manifest | tuple[str, OverrideFault | None] | None"
"""One object on one cluster: its manifest, its failure (message, located fault) or None when a
Delete rule removed it."""
_outcomes: OrderedDict[tuple[int, str | None], Outcome] = OrderedDict()
"""(result key token, the cluster's name when the result depends on it) -> outcome."""
_tokens: dict[tuple[Any, ...], int] = {}
"""`PlacementOverrides.result_key` without the cluster's name -> a number naming it (never
reused, so clearing this table only costs reuse)."""
_counter = itertools.count()
_templates: OrderedDict[int, NameTemplate | None] = OrderedDict()
"""Template token (`_template_part`) -> the name template of results that depend on the
cluster's name or label values (None: none)."""
TemplatePart: TypeAlias = "tuple[int, tuple[str, ...], tuple[str, ...]]"
"""The template a result can be made from: its token, the label keys it stands in for and the
cluster's values of them (`_template_part`)."""
Recipe: TypeAlias = "tuple[int, bool, TemplatePart | None]"
"""The token of a result's key without the cluster's name, whether the name is part of the
key, and its template part (`OverrideRenderer._recipe`)."""
_MISSING = object()


@dataclass(frozen=True)
class Manifest:
    """One object the agent applies: its file name, bytes, identity and content hash."""

    file: str
    data: bytes
    identity: Mapping[str, str]
    hash: str

    @cached_property
    def entry(self) -> dict[str, str]:
        """This object's entry in a cluster's index.yaml."""
        return {**self.identity, "file": self.file, "hash": self.hash}


def _remember(key: tuple[int, str | None], outcome: Outcome) -> None:
    _outcomes[key] = outcome
    if len(_outcomes) > MAX_OUTCOMES:
        with suppress(KeyError):
            _outcomes.popitem(last=False)


def manifest_of(obj: Mapping[str, Any]) -> Manifest:
    """`obj` serialised; the bytes of a content seen before (this pass or an earlier one) are
    reused: canonical YAML is a function of the canonical JSON the content hash is taken of."""
    global _held
    digest = content_hash(obj)
    data = _by_hash.get(digest)
    if data is None:
        data = _by_hash[digest] = dump_yaml(obj).encode()
        _held += len(data)
        with suppress(KeyError):  # KeyError: another hub thread emptied it meanwhile
            while _held > MEMO_BYTES:
                _held -= len(_by_hash.popitem(last=False)[1])
    else:
        with suppress(KeyError):
            _by_hash.move_to_end(digest)
    return Manifest(object_file_name(obj), data, object_identity(obj), digest)


def source_manifest(obj: Mapping[str, Any]) -> Manifest:
    """`manifest_of` a source object, remembered per object: the loader hands back the same
    object while its file is unchanged, so an unchanged resource is neither hashed nor
    serialised again. Each entry keeps its object alive (its id cannot be reused meanwhile)."""
    hit = _by_source.get(id(obj))
    if hit is not None and hit[0] is obj:
        with suppress(KeyError):
            _by_source.move_to_end(id(obj))
        return hit[1]
    manifest = manifest_of(obj)
    _by_source[id(obj)] = (obj, manifest)
    with suppress(KeyError):
        if len(_by_source) > MAX_SOURCES:
            _by_source.popitem(last=False)
    return manifest


def manifests_content_hash(manifests: tuple[Manifest, ...]) -> str:
    """`placement_content_hash(m.entry for m in manifests)`, without building the entries."""
    return pairs_content_hash(tuple(sorted([(m.file, m.hash) for m in manifests])))


def is_envelope(sel: SelectedResource) -> bool:
    return sel.kind in ENVELOPE_KINDS and sel.group == ENVELOPE_GROUP


def default_manifests(
    selection: Selection, index: ResourceIndex
) -> tuple[tuple[Manifest, ...], list[tuple[str, str]]]:
    """Each selected object serialised once; envelopes unwrapped. Errors: (field, message)."""
    out: list[Manifest] = []
    errors: list[tuple[str, str]] = []
    for sel in selection.resources:
        if not is_envelope(sel):
            out.append(source_manifest(sel.obj))
            continue
        objects, problems = index.unwrap(sel)
        errors += [("spec.resourceSelectors", f"{sel.kind} {sel.name}: {p}") for p in problems]
        out += [manifest_of(obj) for obj in objects]
    return tuple(out), errors


def _token(key: tuple[Any, ...]) -> int:
    """The number naming `key` (a result key, or a template's)."""
    token = _tokens.get(key)
    if token is None:
        if len(_tokens) >= MAX_OUTCOMES:
            _tokens.clear()  # tokens are never reused: old outcomes just go unused
        token = _tokens[key] = next(_counter)
    return token


def _template_part(key: tuple[Any, ...]) -> TemplatePart | None:
    """The template a result of `PlacementOverrides.result_key` `key` can be made from (one
    for every cluster on which the same rules apply: the same object, overrides, rules, label
    keys read and op limit); None when the result reads neither the cluster's name nor a
    label, when a label it reads is missing (its error names the cluster) or when the source
    object holds something like a stand-in."""
    labels = key[2]
    if key[3] is None and not labels:
        return None
    if len(labels) > MAX_LABELS or any(v is None for _, v in labels):
        return None
    if holds_stand_in(key[0][-1]):  # the source object's JSON
        return None
    keys = tuple(k for k, _ in labels)
    token = _token(("template", key[0], key[1], keys, key[4]))
    return token, keys, tuple(v for _, v in labels)


@dataclass(frozen=True)
class ClusterManifests:
    """What overrides make of a placement on one cluster."""

    cluster_overrides: tuple[str, ...] = ()
    """Applicable ClusterResourceOverride snapshot names (sorted)."""
    resource_overrides: tuple[str, ...] = ()
    """Applicable ResourceOverride snapshot names (`<namespace>/<name>-<index>`)."""
    manifests: tuple[Manifest, ...] | None = None
    """None: the placement's default manifests apply unchanged."""
    failures: tuple[tuple[str, str], ...] = ()
    """(object file, error) of objects whose overrides failed on this cluster."""
    faults: tuple[tuple[str, OverrideFault], ...] = ()
    """(error, where the failing override op is declared) for the override failures."""

    @property
    def overridden(self) -> bool:
        return bool(self.cluster_overrides or self.resource_overrides)


NO_OVERRIDES = ClusterManifests()


class OverrideRenderer:
    """Per-cluster manifests of one placement, serialising each distinct result once."""

    def __init__(
        self,
        overrides: PlacementOverrides,
        index: ResourceIndex,
        snapshot_names: Mapping[str, str],
    ) -> None:
        self._overrides = overrides
        self._index = index
        self._names = snapshot_names
        self._rendered: dict[int, tuple[Any, Manifest]] = {}
        self._faults: list[tuple[str, OverrideFault]] = []
        self._recipes: dict[tuple[int, Any], tuple[SelectedResource, Recipe]] = {}
        """(object id, cluster labels) -> (the object, its `_recipe`)."""
        self._tuples: dict[tuple[int, ...], tuple[Manifest, ...]] = {}
        """One tuple object per distinct manifest sequence: clusters with equal results share
        it, so later stages can work once per distinct tuple."""
        self._by_labels: dict[Any, tuple[Selection, ClusterManifests]] = {}
        """Cluster label set -> (the selection, its result) when no part of that result read
        the cluster's name: every cluster with those labels has it (one object)."""
        self._named = False
        """The result being made read the cluster's name (or came from an envelope)."""

    def _manifest(self, obj: Mapping[str, Any]) -> Manifest:
        """Serialise `obj` once per distinct object (results are shared, so identity works)."""
        hit = self._rendered.get(id(obj))
        if hit is None:
            hit = (obj, manifest_of(obj))
            self._rendered[id(obj)] = hit
        return hit[1]

    def _remembered(self, sel: SelectedResource, view: ClusterView) -> Outcome:
        """The manifest of `sel` after its overrides on this cluster, the failure (message and
        the override fault it locates), or
        None when a Delete rule removed it; remembered across passes by everything the result
        depends on (`PlacementOverrides.result_key`), so a long-running hub re-applies and
        re-serialises only what an edit touched. The key is made once per object and label
        set (`_recipe`) and names the cluster only when the result depends on it."""
        token, named, template = self._recipe(sel, view)
        self._named = self._named or named
        key = (token, view.name if named else None)
        found = _outcomes.get(key, _MISSING)
        if found is not _MISSING:
            with suppress(KeyError):
                _outcomes.move_to_end(key)
            return found  # type: ignore[return-value]
        outcome: Outcome = self._from_template(sel, view, template) if template else None
        if outcome is None:
            applied = self._overrides.apply(sel, view)
            if applied.error is not None:
                outcome = (applied.error, applied.fault)
            elif applied.obj is not None:
                outcome = self._manifest(applied.obj)
        _remember(key, outcome)
        return outcome

    def _recipe(self, sel: SelectedResource, view: ClusterView) -> Recipe:
        """(the token of `result_key(sel, view)` without the cluster's name, whether the name
        is part of the key, the template that may make the result), once per object and
        cluster label set in this pass."""
        labels = self._overrides.cache.labels_of(view)
        found = self._recipes.get((id(sel), labels))
        if found is not None and found[0] is sel:
            return found[1]
        key = self._overrides.result_key(sel, view)
        recipe = (_token((*key[:3], None, *key[4:])), key[3] is not None, _template_part(key))
        self._recipes[(id(sel), labels)] = (sel, recipe)
        return recipe

    def _from_template(
        self, sel: SelectedResource, view: ClusterView, part: TemplatePart
    ) -> Manifest | None:
        """The manifest of a result that depends on the cluster's name or label values, from
        its template (`reconciler.nametemplate`); None when it cannot be made that way."""
        token, keys, values = part
        template = _templates.get(token, _MISSING)
        if template is _MISSING:
            stand_ins = {key: label_token(i) for i, key in enumerate(keys)}
            applied = self._overrides.apply_as(sel, view, (TOKEN, stand_ins))
            made = template_of(applied.obj) if applied.error is None and applied.obj else None
            template = _templates[token] = made
            with suppress(KeyError):
                if len(_templates) > MAX_OUTCOMES // 8:
                    _templates.popitem(last=False)
        if not isinstance(template, NameTemplate):
            return None
        made_here = instantiate(template, view.name, values)
        if made_here is None:
            return None
        file, data, digest = made_here
        return Manifest(file, data, template.identity, digest)

    def _wrapped(
        self, envelope: SelectedResource, view: ClusterView
    ) -> tuple[list[Manifest], list[tuple[str, str]]]:
        manifests, failures = [], []
        objects, problems = self._index.unwrap(envelope)
        failures += [(object_file_name(envelope.obj), p) for p in problems]
        for obj in objects:
            applied = self._overrides.apply(wrapped_resource(envelope, obj), view)
            if applied.error is not None:
                failures.append((object_file_name(obj), applied.error))
                if applied.fault is not None:
                    self._faults.append((applied.error, applied.fault))
            elif applied.obj is not None:
                manifests.append(self._manifest(applied.obj))
        return manifests, failures

    def applicable_names(self, view: ClusterView) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(ClusterResourceOverride, ResourceOverride) snapshot names applying on a cluster."""
        cro, ro = self._overrides.applicable(view)
        return (
            tuple(self._names.get(k, k) for k in cro),
            tuple(f"{k.split('/')[1]}/{self._names.get(k, k)}" for k in ro),
        )

    def for_cluster(self, selection: Selection, view: ClusterView) -> ClusterManifests:
        """What overrides make of `selection` on the cluster: made once per cluster label set
        when nothing in it reads the cluster's name (rules, plans and label variables depend
        on the labels only), else cluster by cluster."""
        labels = self._overrides.cache.labels_of(view)
        shared = self._by_labels.get(labels)
        if shared is not None and shared[0] is selection:
            return shared[1]
        self._named = False
        made = self._made_for(selection, view)
        if not self._named:
            self._by_labels[labels] = (selection, made)
        return made

    def _made_for(self, selection: Selection, view: ClusterView) -> ClusterManifests:
        cro, ro = self._overrides.applicable(view)
        if not cro and not ro:
            return NO_OVERRIDES
        manifests: list[Manifest] = []
        failures: list[tuple[str, str]] = []
        self._faults = []
        for sel in selection.resources:
            if not is_envelope(sel):
                outcome = self._remembered(sel, view)
                if isinstance(outcome, Manifest):
                    manifests.append(outcome)
                elif outcome is not None:
                    error, fault = outcome
                    failures.append((object_file_name(sel.obj), error))
                    if fault is not None:
                        self._faults.append((error, fault))
                continue  # None: deleted by a Delete rule, not placed on this cluster
            self._named = True  # an envelope's objects: applied cluster by cluster
            applied = self._overrides.apply(sel, view)
            if applied.error is not None:
                failures.append((object_file_name(sel.obj), applied.error))
                if applied.fault is not None:
                    self._faults.append((applied.error, applied.fault))
            elif applied.obj is None:
                continue
            else:
                more, problems = self._wrapped(replace(sel, obj=dict(applied.obj)), view)
                manifests += more
                failures += problems
        ids = tuple(map(id, manifests))
        if ids not in self._tuples:
            self._tuples[ids] = tuple(manifests)  # holds them, so the ids stay theirs
        return ClusterManifests(
            cluster_overrides=tuple(self._names.get(k, k) for k in cro),
            resource_overrides=tuple(f"{k.split('/')[1]}/{self._names.get(k, k)}" for k in ro),
            manifests=self._tuples[ids],
            failures=tuple(failures),
            faults=tuple(self._faults),
        )

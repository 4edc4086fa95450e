"""Manifests as the agent applies them: one serialised object a file, per cluster when overridden.

`default_manifests` serialises a placement's selected objects once (envelopes unwrapped, spec
§6.5): every cluster without applicable overrides shares those bytes. `OverrideRenderer` gives a
cluster with applicable overrides its own list: each object goes through
`PlacementOverrides.apply` (memoised per distinct object, override set and variable values) and
each distinct result is serialised once; results that differ only by the cluster's name and
label values are serialised once for all clusters on which the same rules apply
(`reconciler.nametemplate`). What the rules make is worked out once per cluster label set: a
cluster's whole result when no part of it reads the cluster's name, else all but the objects
that do, which alone are made cluster by cluster. Serialised bytes are kept across passes by
content hash, and a source object's manifest by object (`source_manifest`; both in
`reconciler.manifestbytes`), so a long-running hub serialises only what changed. A patch failure
drops only that object for that cluster and is reported (the caller keeps the previous file).
Called by `reconciler.placement`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from reconciler.manifestbytes import Manifest as Manifest
from reconciler.manifestbytes import manifest_of as manifest_of
from reconciler.manifestbytes import manifests_content_hash as manifests_content_hash
from reconciler.manifestbytes import source_manifest as source_manifest
from reconciler.nametemplate import (
    TOKEN,
    NameTemplate,
    TemplatePart,
    key_token,
    label_token,
    template_of,
    template_part,
    with_labels,
    with_name,
)
from reconciler.output import object_file_name
from reconciler.override import PlacementOverrides, wrapped_resource
from reconciler.override.cache import OverrideFault
from reconciler.schedule.clusters import ClusterView
from reconciler.select import ResourceIndex, SelectedResource, Selection

ENVELOPE_KINDS = frozenset({"ResourceEnvelope", "ClusterResourceEnvelope"})
ENVELOPE_GROUP = "placement.kubernetes-fleet.io"
MAX_OUTCOMES = 500_000
"""Override outcomes remembered across passes (`OverrideRenderer._outcome`)."""
Outcome: TypeAlias = "Manifest | tuple[str, OverrideFault | None] | None"
"""One object on one cluster: its manifest, its failure (message, located fault) or None when a
Delete rule removed it."""
Outcomes: TypeAlias = "dict[str | None, Outcome]"
"""The cluster's name when the result depends on it (else None) -> outcome."""
_outcomes: OrderedDict[int, Outcomes] = OrderedDict()
"""Result key token -> its `Outcomes` (one table per token: a cluster's lookup is one plain dict
lookup by its name); the tokens least recently looked at are dropped first."""
_counted = 0
"""Outcomes put in the tables (about those held: `_remember` recounts when it drops tables)."""
_templates: OrderedDict[int, NameTemplate | None] = OrderedDict()
"""Template token (`template_part`) -> the name template of results that depend on the
cluster's name or label values (None: none)."""
_MISSING = object()


def _table(token: int) -> Outcomes:
    """The outcomes remembered for result key token `token` (an empty table when none), now
    the most recently used."""
    table = _outcomes.get(token)
    if table is None:
        table = _outcomes[token] = {}
    else:
        with suppress(KeyError):  # KeyError: another hub thread dropped it meanwhile
            _outcomes.move_to_end(token)
    return table


def _remember(table: Outcomes, name: str | None, outcome: Outcome) -> None:
    """`outcome` into `table`; beyond MAX_OUTCOMES outcomes, the least recently used tables
    are dropped until half as many are held."""
    global _counted
    table[name] = outcome
    _counted += 1
    if _counted > MAX_OUTCOMES:
        with suppress(KeyError):
            while _outcomes and _counted > MAX_OUTCOMES // 2:
                _counted -= len(_outcomes.popitem(last=False)[1])
        _counted = sum(map(len, list(_outcomes.values())))


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


_FIXED, _NAMED, _ENVELOPE = 0, 1, 2
"""Slot kinds of a `_Row`: the object's outcome is the same on every cluster of the label
set (the slot holds it); it reads the cluster's name (the slot holds its `_Recipe`); it is an
envelope (applied cluster by cluster)."""
Slot: TypeAlias = "tuple[int, SelectedResource, Any]"


class _Recipe:
    """How an object's result on the clusters of one label set is made: the tokens of its
    `result_key` without the cluster's name (its outcomes, remembered in `table`) and of that
    key with the names a failure reads (its failures), whether the name is part of the key, its
    template part, and the template with the label values in place (`_template`)."""

    __slots__ = ("failing", "named", "part", "table", "template", "token")

    def __init__(self, token: int, failing: int, named: bool, part: TemplatePart | None) -> None:
        self.token, self.failing, self.named, self.part = token, failing, named, part
        self.table = _table(token)
        self.template: Any = _MISSING


@dataclass(frozen=True)
class _Row:
    """What a placement's overrides make of its selection on every cluster with one label
    set: the applicable overrides' snapshot names, and a slot per object."""

    selection: Selection
    cluster_overrides: tuple[str, ...]
    resource_overrides: tuple[str, ...]
    slots: tuple[Slot, ...]
    shared: ClusterManifests | None = None
    """Every such cluster's result when no slot reads the cluster (one object)."""


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
        self._tuples: dict[tuple[int, ...], tuple[Manifest, ...]] = {}
        """One tuple object per distinct manifest sequence: clusters with equal results share
        it, so later stages can work once per distinct tuple."""
        self._rows: dict[Any, _Row] = {}
        """Cluster label set -> its `_Row`."""

    def _manifest(self, obj: Mapping[str, Any]) -> Manifest:
        """Serialise `obj` once per distinct object (results are shared, so identity works)."""
        hit = self._rendered.get(id(obj))
        if hit is None:
            hit = (obj, manifest_of(obj))
            self._rendered[id(obj)] = hit
        return hit[1]

    def _recipe(self, sel: SelectedResource, view: ClusterView) -> _Recipe:
        """The `_Recipe` of `sel` on the clusters with `view`'s labels."""
        key, failure_names = self._overrides.result_key(sel, view)
        unnamed = (*key[:3], None, *key[4:])
        failing = key_token(("failing", unnamed, failure_names))
        return _Recipe(key_token(unnamed), failing, key[3] is not None, template_part(key))

    def _template(
        self, sel: SelectedResource, view: ClusterView, part: TemplatePart | None
    ) -> NameTemplate | None:
        """The name template of a result that depends on the cluster's name or label values,
        with `view`'s label values in place (`reconciler.nametemplate`); None when there is
        none or it cannot be made that way."""
        if part is None:
            return None
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
        return with_labels(template, values)

    def _outcome(self, sel: SelectedResource, view: ClusterView, recipe: _Recipe) -> Outcome:
        """The manifest of `sel` after its overrides on this cluster, the failure (message and
        the override fault it locates), or None when a Delete rule removed it; remembered
        across passes by what the result depends on (the recipe's tokens: an edit reverted
        finds the objects it made; the cluster's name when the result reads it), so a
        long-running hub re-applies and re-serialises only what an edit touched. Made from
        the recipe's template when it can be."""
        name = view.name if recipe.named else None
        found = recipe.table.get(name, _MISSING)
        if found is _MISSING:
            failed = _outcomes.get(recipe.failing)
            found = _MISSING if failed is None else failed.get(name, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[return-value]
        template = recipe.template
        if template is _MISSING:
            template = recipe.template = self._template(sel, view, recipe.part)
        made = with_name(template, view.name) if template is not None else None
        outcome: Outcome = None
        if made is not None:
            outcome = Manifest(made[0], made[1], template.identity, made[2])
        else:
            applied = self._overrides.apply(sel, view)
            if applied.error is not None:
                outcome = (applied.error, applied.fault)
            elif applied.obj is not None:
                outcome = self._manifest(applied.obj)
        _remember(_table(recipe.failing) if type(outcome) is tuple else recipe.table, name, outcome)
        return outcome

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
        """What overrides make of `selection` on the cluster. Rules, plans and label
        variables depend on the cluster's labels only: what they make is worked out once per
        label set (`_row`), and only the objects whose result reads the cluster's name (and
        envelopes) are made cluster by cluster; a label set none of whose objects does has
        one result for all its clusters."""
        labels = self._overrides.cache.labels_of(view)
        row = self._rows.get(labels)
        if row is None or row.selection is not selection:
            row = self._rows[labels] = self._row(selection, view)
        return row.shared if row.shared is not None else self._made_for(row, view)

    def _row(self, selection: Selection, view: ClusterView) -> _Row:
        """The `_Row` of `view`'s label set."""
        cro, ro = self._overrides.applicable(view)
        if not cro and not ro:
            return _Row(selection, (), (), (), NO_OVERRIDES)
        slots: list[Slot] = []
        for sel in selection.resources:
            if is_envelope(sel):
                slots.append((_ENVELOPE, sel, None))
                continue
            recipe = self._recipe(sel, view)
            if recipe.named:
                slots.append((_NAMED, sel, recipe))
            else:
                slots.append((_FIXED, sel, self._outcome(sel, view, recipe)))
        names = self.applicable_names(view)
        row = _Row(selection, *names, tuple(slots))
        if all(kind == _FIXED for kind, _, _ in slots):
            row = replace(row, shared=self._made_for(row, view))
        return row

    def _made_for(self, row: _Row, view: ClusterView) -> ClusterManifests:
        """The cluster's result from its label set's row."""
        manifests: list[Manifest] = []
        failures: list[tuple[str, str]] = []
        self._faults = []
        for kind, sel, value in row.slots:
            if kind == _FIXED:
                outcome = value
            elif kind == _NAMED:
                outcome = self._outcome(sel, view, value)
            else:
                self._enveloped(sel, view, manifests, failures)
                continue
            if isinstance(outcome, Manifest):
                manifests.append(outcome)
            elif outcome is not None:  # None: deleted by a Delete rule, not on this cluster
                error, fault = outcome
                failures.append((object_file_name(sel.obj), error))
                if fault is not None:
                    self._faults.append((error, fault))
        ids = tuple(map(id, manifests))
        if ids not in self._tuples:
            self._tuples[ids] = tuple(manifests)  # holds them, so the ids stay theirs
        return ClusterManifests(
            cluster_overrides=row.cluster_overrides,
            resource_overrides=row.resource_overrides,
            manifests=self._tuples[ids],
            failures=tuple(failures),
            faults=tuple(self._faults),
        )

    def _enveloped(
        self,
        sel: SelectedResource,
        view: ClusterView,
        manifests: list[Manifest],
        failures: list[tuple[str, str]],
    ) -> None:
        """An envelope's objects after its overrides on this cluster, added to `manifests`
        (its failures to `failures`)."""
        applied = self._overrides.apply(sel, view)
        if applied.error is not None:
            failures.append((object_file_name(sel.obj), applied.error))
            if applied.fault is not None:
                self._faults.append((applied.error, applied.fault))
        elif applied.obj is not None:
            more, problems = self._wrapped(replace(sel, obj=dict(applied.obj)), view)
            manifests += more
            failures += problems

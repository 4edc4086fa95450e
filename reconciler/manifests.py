"""Manifests as the agent applies them: one serialised object a file, per cluster when overridden.

`default_manifests` serialises a placement's selected objects once (envelopes unwrapped, spec
§6.5): every cluster without applicable overrides shares those bytes. `OverrideRenderer` gives a
cluster with applicable overrides its own list: each object goes through
`PlacementOverrides.apply` (memoised per distinct object, override set and variable values) and
each distinct result is serialised once. A patch failure drops only that object for that
cluster and is reported (the caller keeps the previous file). Called by `reconciler.placement`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from gitfleet.api.canonical import content_hash
from reconciler.output import object_file_name, object_identity, yaml_bytes
from reconciler.override import PlacementOverrides, wrapped_resource
from reconciler.override.cache import OverrideFault
from reconciler.schedule.clusters import ClusterView
from reconciler.select import ResourceIndex, SelectedResource, Selection

ENVELOPE_KINDS = frozenset({"ResourceEnvelope", "ClusterResourceEnvelope"})
ENVELOPE_GROUP = "placement.kubernetes-fleet.io"


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


def manifest_of(obj: Mapping[str, Any]) -> Manifest:
    return Manifest(object_file_name(obj), yaml_bytes(obj), object_identity(obj), content_hash(obj))


def is_envelope(sel: SelectedResource) -> bool:
    return sel.kind in ENVELOPE_KINDS and sel.group == ENVELOPE_GROUP


def default_manifests(
    selection: Selection, index: ResourceIndex
) -> tuple[tuple[Manifest, ...], list[tuple[str, str]]]:
    """Each selected object serialised once; envelopes unwrapped. Errors: (field, message)."""
    out: list[Manifest] = []
    errors: list[tuple[str, str]] = []
    for sel in selection.resources:
        objects: list[Any] = [sel.obj]
        if is_envelope(sel):
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

    def _manifest(self, obj: Mapping[str, Any]) -> Manifest:
        """Serialise `obj` once per distinct object (results are shared, so identity works)."""
        hit = self._rendered.get(id(obj))
        if hit is None:
            hit = (obj, manifest_of(obj))
            self._rendered[id(obj)] = hit
        return hit[1]

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

    def for_cluster(self, selection: Selection, view: ClusterView) -> ClusterManifests:
        cro, ro = self._overrides.applicable(view)
        if not cro and not ro:
            return NO_OVERRIDES
        manifests: list[Manifest] = []
        failures: list[tuple[str, str]] = []
        self._faults = []
        for sel in selection.resources:
            applied = self._overrides.apply(sel, view)
            if applied.error is not None:
                failures.append((object_file_name(sel.obj), applied.error))
                if applied.fault is not None:
                    self._faults.append((applied.error, applied.fault))
            elif applied.obj is None:
                continue  # deleted by a Delete rule: not placed on this cluster
            elif is_envelope(sel):
                more, problems = self._wrapped(replace(sel, obj=dict(applied.obj)), view)
                manifests += more
                failures += problems
            else:
                manifests.append(self._manifest(applied.obj))
        return ClusterManifests(
            cluster_overrides=tuple(self._names.get(k, k) for k in cro),
            resource_overrides=tuple(f"{k.split('/')[1]}/{self._names.get(k, k)}" for k in ro),
            manifests=tuple(manifests),
            failures=tuple(failures),
            faults=tuple(self._faults),
        )

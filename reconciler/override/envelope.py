"""Objects wrapped in envelopes as override candidates (kubefleet.md §3.2.2, §6.5).

KubeFleet applies overrides to a selected envelope object itself (selectors naming the
ResourceEnvelope / ClusterResourceEnvelope; patch paths such as `/data/<key>/spec/replicas`), and
counts the wrapped objects as candidates when it decides which overrides are relevant to a
placement. gitfleet does both and, in addition, lets the caller apply the overrides that name a
wrapped object to that object after unwrapping: `wrapped_targets` feeds relevance,
`wrapped_resource` turns one unwrapped manifest into a `SelectedResource` for
`PlacementOverrides.apply`. Called by `reconciler.override.index` and the reconcile pass.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gitfleet.api.canonical import canonical_json
from reconciler.override.compiled import TargetKey, namespace_key
from reconciler.select.model import SelectedResource


def _identity(manifest: Any) -> tuple[str, str, str, str, str] | None:
    """(group, version, kind, namespace, name) of a wrapped manifest, None when malformed."""
    if not isinstance(manifest, Mapping):
        return None
    api_version, kind, meta = (
        manifest.get("apiVersion"),
        manifest.get("kind"),
        manifest.get("metadata"),
    )
    if not (isinstance(api_version, str) and isinstance(kind, str) and isinstance(meta, Mapping)):
        return None
    name, namespace = meta.get("name"), meta.get("namespace") or ""
    if not isinstance(name, str) or not isinstance(namespace, str):
        return None
    group, _, version = api_version.rpartition("/")
    return (group, version, kind, namespace, name)


def target_keys(group: str, version: str, kind: str, namespace: str, name: str) -> list[TargetKey]:
    """The override targets an object answers to: itself, and its Namespace when namespaced."""
    if namespace:
        return [namespace_key(namespace), (group, version, kind, namespace, name)]
    return [(group, version, kind, "", name)]


def wrapped_targets(sel: SelectedResource) -> Iterator[TargetKey]:
    """Target keys of the objects an envelope wraps (nothing for other objects)."""
    if not sel.is_envelope:
        return
    data = sel.obj.get("data")
    if not isinstance(data, Mapping):
        return
    for manifest in data.values():
        ident = _identity(manifest)
        if ident is not None:
            yield from target_keys(*ident)


def wrapped_resource(envelope: SelectedResource, manifest: Mapping[str, Any]) -> SelectedResource:
    """An unwrapped manifest as a SelectedResource (origin: the envelope's) for `apply`.

    Raises ValueError when the manifest has no apiVersion/kind/metadata.name (the envelope
    checks of `reconciler.select` reject such envelopes before this is called).
    """
    ident = _identity(manifest)
    if ident is None:
        raise ValueError("a wrapped manifest needs apiVersion, kind and metadata.name")
    group, version, kind, namespace, name = ident
    return SelectedResource(
        group=group,
        version=version,
        kind=kind,
        namespace=namespace,
        name=name,
        obj=dict(manifest),
        origin=envelope.origin,
        raw=canonical_json(manifest),
    )

"""Builders shared by the resource-selection tests: payload Resources and placement doubles.

The placement doubles are frozen dataclasses with the attribute names of `gitfleet.api`'s
ClusterResourcePlacement / ResourcePlacement, so these tests exercise `reconciler.select` alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gitfleet.load.model import Origin, Resource
from reconciler.select import ResourceIndex, Selection, build_index, select_resources


def res(manifest: Mapping[str, Any], file: str = "resources/all.yaml", doc: int = 0) -> Resource:
    """A payload Resource as the loader would build it from one YAML document."""
    api_version = str(manifest["apiVersion"])
    group, _, version = api_version.rpartition("/")
    meta = manifest.get("metadata") or {}
    return Resource(
        origin=Origin(file=file, doc=doc, line=doc * 10 + 1),
        obj=manifest,
        group=group,
        version=version,
        kind=str(manifest["kind"]),
        namespace=str(meta.get("namespace") or ""),
        name=str(meta.get("name") or ""),
    )


def obj(
    api_version: str,
    kind: str,
    name: str,
    namespace: str | None = None,
    labels: Mapping[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A manifest dict; `extra` adds top-level fields (spec, data, type, ...)."""
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels is not None:
        meta["labels"] = dict(labels)
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **extra}


def index_of(*manifests: Mapping[str, Any], **kwargs: Any) -> ResourceIndex:
    return build_index([res(m, doc=i) for i, m in enumerate(manifests)], **kwargs)


@dataclass(frozen=True)
class MatchLabels:
    """A label selector double: matchLabels only."""

    match_labels: Mapping[str, str]

    def matches(self, labels: dict[str, str], /) -> bool:
        return all(labels.get(k) == v for k, v in self.match_labels.items())


@dataclass(frozen=True)
class Term:
    group: str
    version: str
    kind: str
    name: str | None = None
    label_selector: MatchLabels | None = None
    selection_scope: str = "NamespaceWithResources"


@dataclass(frozen=True)
class Meta:
    name: str
    namespace: str | None = None


@dataclass(frozen=True)
class Spec:
    resource_selectors: tuple[Term, ...]


@dataclass(frozen=True)
class Placement:
    metadata: Meta
    spec: Spec = field(default_factory=lambda: Spec(()))


def crp(name: str, *terms: Term) -> Placement:
    return Placement(Meta(name), Spec(terms))


def rp(namespace: str, name: str, *terms: Term) -> Placement:
    return Placement(Meta(name, namespace), Spec(terms))


def ns_term(name: str | None = None, scope: str = "NamespaceWithResources", **labels: str) -> Term:
    selector = MatchLabels(labels) if labels else None
    return Term("", "v1", "Namespace", name, selector, scope)


def names(selection: Selection) -> list[str]:
    """`Kind/namespace/name` of each selected resource, in selection order."""
    return [f"{r.kind}/{r.namespace}/{r.name}" for r in selection.resources]


def select(placement: Placement, index: ResourceIndex) -> Selection:
    return select_resources(placement, index)

"""The renderer contract: units of work, the render context, and the shared source reader.

A `Unit` is what one renderer turns into documents (one file, or one kustomization directory);
`registry.plan_units` decides the units and `load_fleet` hands each renderer its batch with a
`RenderContext`. Every renderer reads files through `read_source`, so size caps and UTF-8
decoding are the same everywhere. Imported by every renderer module and by the registry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from gitfleet.api.errors import FleetError
from gitfleet.api.limits import DEFAULT_LIMITS, Limits
from gitfleet.load.model import SourceDoc
from gitfleet.load.yamlio import decode_text
from gitfleet.repo.tree import Tree

RenderResult = tuple[list[SourceDoc], list[FleetError]]
"""Documents produced, and errors for the units (or documents) that failed."""


@dataclass(frozen=True)
class Unit:
    """One piece of work for one renderer."""

    renderer: str
    """Name of the renderer that owns it: plain, jinja or kustomize."""
    path: str
    """The source file; for kustomize, the kustomization file of the directory."""
    files: tuple[str, ...] = ()
    """Every repository file the unit owns (for kustomize: all files under the directory)."""


@dataclass(frozen=True)
class TemplateContext:
    """What Jinja2 templates see: fleet values, the cluster inventory and the Fleet settings."""

    values: Mapping[str, Any] = field(default_factory=dict)
    """`Fleet.spec.values`, free-form."""
    clusters: tuple[Mapping[str, Any], ...] = ()
    """One {name, labels, taints, properties} mapping per cluster, sorted by name."""
    fleet: Mapping[str, Any] = field(default_factory=dict)
    """The Fleet object as YAML would show it (apiVersion, kind, metadata, spec)."""


@dataclass(frozen=True)
class RenderContext:
    """Everything a renderer may use: the tree it reads, the limits, the template context."""

    tree: Tree
    limits: Limits = DEFAULT_LIMITS
    template: TemplateContext = field(default_factory=TemplateContext)


class Renderer(Protocol):
    """Turns its units into documents; a failing unit fails alone."""

    name: str

    def render(self, units: Sequence[Unit], ctx: RenderContext) -> RenderResult:
        """Render a batch of units (one batch per `load_fleet`, so per-load resources such as
        a worker process or a materialised tree are set up once)."""
        ...


def read_source(tree: Tree, path: str, limits: Limits) -> tuple[str | None, FleetError | None]:
    """The text of `path`: refused without reading when larger than `limits.max_file_bytes`,
    an error with the byte offset when it is not UTF-8."""
    try:
        size = tree.size(path)
        if size > limits.max_file_bytes:
            message = (
                f"file is {size} bytes, larger than limits.maxFileBytes "
                f"({limits.max_file_bytes}); it was not read"
            )
            return None, FleetError(path, None, "", message)
        data = tree.read(path)
    except (KeyError, OSError) as exc:
        return None, FleetError(path, None, "", f"cannot read file: {exc.__class__.__name__}")
    return decode_text(path, data)

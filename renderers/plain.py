"""Plain YAML renderer: a `*.yaml` / `*.yml` file is decoded and split into its documents.

Everything goes through the shared limits (file size before reading, UTF-8, documents per file,
alias expansion, depth) via `base.read_source` and `gitfleet.load.yamlio.parse_documents`.
Called by `load_fleet` through the registry.
"""

from __future__ import annotations

from collections.abc import Sequence

from gitfleet.api.errors import FleetError
from gitfleet.load.model import SourceDoc
from gitfleet.load.yamlio import parse_documents
from renderers.base import RenderContext, RenderResult, Unit, read_source

SUFFIXES = (".yaml", ".yml")


def claims(path: str) -> bool:
    """True for files this renderer reads: `*.yaml` and `*.yml`."""
    return path.endswith(SUFFIXES)


class PlainRenderer:
    """Multi-document YAML files, parsed safely."""

    name = "plain"

    def render(self, units: Sequence[Unit], ctx: RenderContext) -> RenderResult:
        docs: list[SourceDoc] = []
        errors: list[FleetError] = []
        for unit in units:
            text, error = read_source(ctx.tree, unit.path, ctx.limits)
            if error is not None or text is None:
                errors.extend([error] if error else [])
                continue
            parsed, problems = parse_documents(unit.path, text, ctx.limits, renderer=self.name)
            docs.extend(parsed)
            errors.extend(problems)
        return docs, errors

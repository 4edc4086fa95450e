"""Plain YAML renderer: a `*.yaml` / `*.yml` file is decoded and split into its documents.

Everything goes through the shared limits (file size before reading, UTF-8, documents per file,
alias expansion, depth) via `base.read_source` and `gitfleet.load.yamlio.parse_documents`.
A tree that names blob ids (`gitfleet.repo.tree.BlobIds`: a Git commit) has each file's result
cached by (path, blob id, limits) for the process's life, so a long-running hub re-reads and
re-parses only the files whose content changed since its last pass, and unchanged files give
the very same documents (later stages memoise on them). Called by `load_fleet` through the
registry.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from contextlib import suppress

from gitfleet.api.errors import FleetError
from gitfleet.api.limits import Limits
from gitfleet.load.model import SourceDoc
from gitfleet.load.yamlio import parse_documents
from gitfleet.repo.tree import BlobIds
from renderers.base import RenderContext, RenderResult, Unit, read_source

SUFFIXES = (".yaml", ".yml")
MAX_CACHED_FILES = 100_000

_parsed: OrderedDict[tuple[str, str, Limits], RenderResult] = OrderedDict()


def claims(path: str) -> bool:
    """True for files this renderer reads: `*.yaml` and `*.yml`."""
    return path.endswith(SUFFIXES)


class PlainRenderer:
    """Multi-document YAML files, parsed safely."""

    name = "plain"

    def render(self, units: Sequence[Unit], ctx: RenderContext) -> RenderResult:
        docs: list[SourceDoc] = []
        errors: list[FleetError] = []
        ids = ctx.tree if isinstance(ctx.tree, BlobIds) else None
        for unit in units:
            if ids is None:
                found, problems = self._render_file(unit.path, ctx)
            else:
                found, problems = self._cached(unit.path, ids.oid(unit.path), ctx)
            docs.extend(found)
            errors.extend(problems)
        return docs, errors

    def render_file(self, path: str, ctx: RenderContext) -> RenderResult:
        """One file's documents and errors; on a tree with blob ids, the cached result itself
        (the same object for the same blob: `renderers.hubload` compares it by identity).
        Read it only."""
        if isinstance(ctx.tree, BlobIds):
            return self._cached(path, ctx.tree.oid(path), ctx)
        return self._render_file(path, ctx)

    def _cached(self, path: str, oid: str, ctx: RenderContext) -> RenderResult:
        key = (path, oid, ctx.limits)
        hit = _parsed.get(key)
        if hit is not None:
            with suppress(KeyError):  # another hub thread may have dropped it meanwhile
                _parsed.move_to_end(key)
            return hit
        result = _parsed[key] = self._render_file(path, ctx)
        with suppress(KeyError):
            if len(_parsed) > MAX_CACHED_FILES:
                _parsed.popitem(last=False)
        return result

    def _render_file(self, path: str, ctx: RenderContext) -> RenderResult:
        text, error = read_source(ctx.tree, path, ctx.limits)
        if error is not None or text is None:
            return [], [error] if error else []
        return parse_documents(path, text, ctx.limits, renderer=self.name)

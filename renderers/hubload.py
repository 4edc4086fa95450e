"""`load_fleet` for the long-running hub: each pass costs in proportion to the files that changed.

`FleetLoader.load(tree)` keeps, between passes, the last tree's listing (path -> blob id), each
file's part of the snapshot (`gitfleet.load.parts`) and their merged index
(`gitfleet.load.patch`). A pass diffs the listings, renders only the changed files (the plain
renderer caches parsed documents by blob id), and patches the index. It takes the longer ways
whenever the patch is not provably what `load_fleet` makes of the tree:
- assemble: every file's part (unchanged ones reused), merged afresh — when there is no index
  yet, `fleet.yaml` or a file holding a Fleet changed, or a changed file tries a name that
  another file claims;
- `load_fleet` itself — when the tree has no blob ids, a unit is not plain YAML (kustomize,
  Jinja2, Helm: they read other files, the inventory or the Fleet values), a file is
  SOPS-encrypted, or two files try the same name (duplicates); while the files that decided so
  are unchanged, the next pass goes straight to `load_fleet` (costs what it cost before).
A one-shot `gitfleet render` calls `load_fleet` and keeps nothing. Called by `reconciler.loop`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Mapping

from gitfleet.api import Fleet
from gitfleet.api.limits import Limits
from gitfleet.load.model import FleetSnapshot
from gitfleet.load.parts import FilePart, file_part, fleet_documents
from gitfleet.load.patch import SnapshotIndex, contenders
from gitfleet.load.snapshot import default_fleet, read_fleet, read_fleet_settings
from gitfleet.repo.tree import BlobIds, Tree
from renderers import FLEET_FILE, jinja, load_fleet, plain, read_settings
from renderers.base import RenderContext, RenderResult
from renderers.helm_rules import CHART_FILE
from renderers.kustomize_rules import KUSTOMIZATION_FILES
from renderers.registry import plan_units
from renderers.sops import is_sops_document

Listing = Mapping[str, object]
"""Path -> what identifies its content (blob id, or blob id and size)."""


def structural(path: str) -> bool:
    """A file whose presence can make or unmake a unit that is not plain YAML."""
    name = posixpath.basename(path)
    return name in KUSTOMIZATION_FILES or name == CHART_FILE or jinja.claims(path)


def listing_of(tree: Tree) -> Listing | None:
    """Path -> blob id of every listed file; None for a tree without blob ids."""
    listing = getattr(tree, "listing", None)
    if callable(listing):
        found: Listing = listing()
        return found
    if isinstance(tree, BlobIds):
        return {path: tree.oid(path) for path in tree.files()}
    return None


def changed_paths(old: Listing, new: Listing) -> set[str]:
    """Paths added, removed or with another blob."""
    if old == new:
        return set()
    return {path for path, _ in old.items() ^ new.items()}


class FleetLoader:
    """Loads a hub's successive source trees, patching the last pass's snapshot."""

    def __init__(self) -> None:
        self._listing: Listing | None = None
        self._limits: Limits | None = None
        self._parts: dict[str, FilePart] = {}
        self._index: SnapshotIndex | None = None
        self._holdouts: frozenset[str] | None = None
        """Why the last tree was loaded by `load_fleet`: the files that made it so (SOPS files,
        files declaring one name; empty when the plan had other units); None when it was not.
        Until one of them, `fleet.yaml` or a structural file changes, `load_fleet` it is."""
        self.mode = ""
        """How the last tree was loaded: patch, assemble or full (for tests and timings)."""

    def load(self, tree: Tree) -> FleetSnapshot:
        """The snapshot `load_fleet(tree)` makes, patched from the last one where possible."""
        listing = listing_of(tree)
        snapshot = self._load(tree, listing)
        self._listing = listing
        return snapshot

    def _load(self, tree: Tree, listing: Listing | None) -> FleetSnapshot:
        changed = (
            changed_paths(self._listing, listing)
            if listing is not None and self._listing is not None
            else None
        )
        if changed is not None and self._index is not None:
            patched = self._patch(tree, listing or {}, changed)
            if patched is not None:
                self.mode = "patch"
                return patched
        if listing is not None and not self._still_held(changed):
            assembled = self._assemble(tree)
            if assembled is not None:
                self.mode = "assemble"
                return assembled
        self.mode, self._index = "full", None
        return load_fleet(tree)

    def _still_held(self, changed: Collection[str] | None) -> bool:
        """The last tree needed `load_fleet` and nothing that decided so changed."""
        if self._holdouts is None or changed is None:
            return False
        return not any(p == FLEET_FILE or structural(p) or p in self._holdouts for p in changed)

    def _patch(self, tree: Tree, listing: Listing, changed: set[str]) -> FleetSnapshot | None:
        index, limits = self._index, self._limits
        if index is None or limits is None:
            return None
        if any(path == FLEET_FILE or structural(path) for path in changed):
            return None
        ctx = RenderContext(tree, limits)
        changes: dict[str, FilePart | None] = {}
        for path in sorted(changed):
            result = _render(path, ctx) if path in listing else None
            if result is not None and _sealed(result):
                return None
            changes[path] = None if result is None else _part(path, result, index.fleet)
        self._index = None  # not trusted again unless the patch completes
        if not index.patch(changes):
            return None
        self._index, self._parts = index, index.parts
        return index.snapshot(tree.commit, tree.errors)

    def _assemble(self, tree: Tree) -> FleetSnapshot | None:
        """Every file's part (unchanged ones reused) merged afresh; None (and `_holdouts` set)
        when only `load_fleet` can load this tree."""
        self._index, self._holdouts = None, None
        settings, settings_errors = read_settings(tree)
        self._limits = limits = read_fleet_settings(settings)[0].limits()
        plan = plan_units(tree, limits)
        if any(unit.renderer != "plain" for unit in plan.units):
            self._holdouts = frozenset()
            return None
        ctx = RenderContext(tree, limits)
        results: dict[str, RenderResult] = {}
        for unit in plan.units:
            found = (settings, settings_errors) if unit.path == FLEET_FILE else None
            results[unit.path] = found or plain.PlainRenderer().render_file(unit.path, ctx)
        sealed = frozenset(path for path, result in results.items() if _sealed(result))
        if sealed:
            self._holdouts = sealed
            return None
        fleet_docs = fleet_documents([d for docs, _ in results.values() for d in docs])
        fleet, origin, fleet_errors = read_fleet(fleet_docs)
        fleet = self._same_fleet(fleet or default_fleet())
        parts = {path: self._reused(path, result, fleet) for path, result in results.items()}
        self._parts = parts
        index = SnapshotIndex.of(fleet, origin, fleet_errors, parts)
        if index is None:
            self._holdouts = contenders(parts)
            return None
        self._index = index
        return index.snapshot(tree.commit, tree.errors)

    def _same_fleet(self, fleet: Fleet) -> Fleet:
        """The last pass's Fleet object when equal (parts built with it stay valid)."""
        last = next(iter(self._parts.values()), None)
        return last.fleet if last is not None and last.fleet == fleet else fleet

    def _reused(self, path: str, result: RenderResult, fleet: Fleet) -> FilePart:
        part = self._parts.get(path)
        if part is not None and part.source is result and part.fleet is fleet:
            return part
        return _part(path, result, fleet)


def _render(path: str, ctx: RenderContext) -> RenderResult | None:
    """The plain renderer's result for a file the registry gives it; None for others."""
    if jinja.is_partial(path) or not plain.claims(path):
        return None
    return plain.PlainRenderer().render_file(path, ctx)


def _part(path: str, result: RenderResult, fleet: Fleet) -> FilePart:
    docs, errors = result
    return file_part(path, docs, errors, fleet, source=result)


def _sealed(result: RenderResult) -> bool:
    return any(is_sops_document(doc.body) for doc in result[0])

"""One placement's files and index row on each cluster, reused per cluster across passes, and
the checks of the manifest tuples they are laid out from.

A placement recomputed because one cluster was added, removed or relabelled gives every other
cluster the very same manifest tuple as last pass (`reconciler.manifestmemo`). For a cluster
whose objects may all be written as rendered, its files and ClusterIndex row depend only on
that tuple, the placement's index header and the cluster's apply strategy: `CleanLayouts`
hands back last pass's paths, row and byte count while those are unchanged, so only changed
clusters make paths and rows again, and the row is the very object `reconciler.indexfiles`
emitted last pass. `checked_once` checks a manifest tuple (`reconciler.outputguard`: sizes, one
file name per object) once per tuple and limits, and once per content for three passes (an
override flipping each pass lays a cluster out from the same content every other pass; the
rows then share last time's very object list). `clean_layout` makes one cluster's layout
(also for `reconciler.layoutdiff`, which patches a placement's layouts cluster by cluster), the
very layout of the last three passes when made from the very check under an equal header and
strategy; the clusters given the same check share one row object in a pass.
Called by `reconciler.assemble` and `reconciler.layoutdiff`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from gitfleet.api.limits import Limits
from gitfleet.api.output import object_path
from reconciler.assemblememo import ThreeRounds
from reconciler.manifestbytes import manifests_content_hash
from reconciler.manifests import Manifest
from reconciler.outputguard import describe, refusal
from reconciler.stagememo import ClusterMemo, IdentityMemo

Layout = tuple[dict[str, Any], tuple[str, ...], int]
"""(index row, file paths (one per manifest), their bytes). Paths rather than a files mapping:
a layout is kept for every cluster of every placement."""
_LAYOUTS: ClusterMemo[Layout] = ClusterMemo()
"""Placement key -> cluster -> its last clean layout, made from its manifests tuple and (by
value) the placement's index header and the cluster's apply strategy."""


class CleanLayouts:
    """The clean layouts of one placement's `_write_one` call (`done` remembers them)."""

    def __init__(self, key: str) -> None:
        self.key = key
        self._round = _LAYOUTS.start(key)
        self.laid: dict[str, Layout] = {}
        """Every cluster laid out clean in this call, with its layout."""

    def layout(
        self,
        cluster: str,
        mine: tuple[Manifest, ...],
        header: Mapping[str, Any],
        strategy: dict[str, Any],
        checked: Checked,
    ) -> Layout:
        """(index row, the path of each manifest, their bytes) of `mine` on `cluster`; `checked`:
        the clean check of `mine` (its index objects and content hash)."""
        facts = (header, strategy)
        found = self._round.get(cluster, mine, facts)
        if found is None:
            found = clean_layout(
                self.key, cluster, mine, header, strategy, checked, self._round.known
            )
            self._round.keep(cluster, mine, facts, found)
        self.laid[cluster] = found
        return found

    def done(self) -> None:
        self._round.end()


def clean_layout(
    key: str,
    cluster: str,
    mine: tuple[Manifest, ...],
    header: Mapping[str, Any],
    strategy: dict[str, Any],
    checked: Checked,
    remember: bool = True,
) -> Layout:
    """The layout of placement `key`'s manifests `mine` on `cluster`, all written as rendered
    (`checked`: their clean check); the last layout made for the cluster within the last three
    passes when it was made from the very check (the same files and hashes, `checked_once`)
    under an equal header and strategy: a cluster given new manifests of the same content
    keeps one row object, which the index rows and files then skip by identity. Not
    `remember`ed: a placement's first layouts in this process (a hub's first pass lays out
    every cluster of every placement: ~42k entries at fleet-1k, which a later pass would find
    only when it lays the placement out again from new manifests of the same content within
    three passes; it then makes those layouts, and their clusters' index files, again)."""
    found = _MADE.get((key, cluster))
    if found is not None and found[0] is checked and found[1] == (header, strategy):
        return found[2]
    prefix = object_path(cluster, key, "")
    made = (
        _row(key, header, strategy, checked),
        tuple(map(prefix.__add__, map(_FILE, mine))),
        sum(map(len, map(_DATA, mine))),
    )
    if remember:
        _MADE.put((key, cluster), (checked, (header, strategy), made))
    return made


def _row(
    key: str, header: Mapping[str, Any], strategy: dict[str, Any], checked: Checked
) -> dict[str, Any]:
    """The index row of a clean layout: one object per placement, check, header and strategy
    in a pass (the clusters given the same manifests share it, and so its index pieces,
    `reconciler.indexfiles`)."""
    facts = (header, strategy)
    found = _ROWS.get((key, id(checked)))
    if found is not None and found[0] is checked and found[1] == facts:
        return found[2]
    row = {
        **header,
        "applyStrategy": strategy,
        "contentHash": checked.content,
        "objects": checked.clean,
    }
    _ROWS[(key, id(checked))] = (checked, facts, row)
    return row


_ROWS: dict[
    tuple[str, int], tuple[Checked, tuple[Mapping[str, Any], dict[str, Any]], dict[str, Any]]
] = {}
"""(placement key, id of a check) -> the check, header and strategy of a row made this pass, and
the row (holding the check: its id stays its own)."""
_MADE: ThreeRounds[tuple[Checked, tuple[Mapping[str, Any], dict[str, Any]], Layout]] = ThreeRounds()
"""(placement key, cluster) -> the check, header and strategy of its last clean layout, and the
layout, for the last three passes."""


@dataclass(frozen=True)
class Checked:
    """A manifest tuple's check: each object's refusal (None: it may be written), or None when
    none is refused (kept for two passes per tuple, so the common case holds no row); then the
    index objects and content hash every cluster given exactly this tuple shares."""

    problems: tuple[tuple[str, bool] | None, ...] | None
    clean: list[dict[str, Any]] | None
    content: str

    def rows(
        self, mine: tuple[Manifest, ...]
    ) -> Iterator[tuple[Manifest, tuple[str, bool] | None]]:
        """Each manifest of the tuple this check was made of, with its refusal."""
        problems = self.problems if self.problems is not None else (None,) * len(mine)
        return zip(mine, problems, strict=True)


CHECKS: IdentityMemo[tuple[Limits, Checked]] = IdentityMemo()
"""Manifest tuple -> its check under these limits, for the last two passes (`assemble_clusters`
starts a round): a recomputed placement hands most clusters last pass's very tuples."""
BY_CONTENT: ThreeRounds[Checked] = ThreeRounds()
"""(limits, each manifest's file, each one's content hash) -> the check of a tuple of them,
for the last three passes (`assemble_clusters` starts a round): an override flipping between
two values hands a cluster new manifests of the same content every other pass."""
_FILE = attrgetter("file")
_HASH = attrgetter("hash")
_DATA = attrgetter("data")


def checked_once(mine: tuple[Manifest, ...], limits: Limits) -> Checked:
    """`_checked`, once per manifest tuple and limits, and once per content: a manifest's
    content hash fixes its bytes, identity and file name (all a check reads), so manifests of
    the same files and hashes share a check (its `clean` entries equal theirs)."""
    found = CHECKS.get(mine)
    if found is not None and found[0] == limits:
        return found[1]
    files, hashes = tuple(map(_FILE, mine)), tuple(map(_HASH, mine))
    key = (limits, files, hashes)  # 3 tuples, not one per manifest: cheaper to make and free
    checked = BY_CONTENT.get(key)
    if checked is None:
        checked = _checked(mine, limits)
        BY_CONTENT.put(key, checked)
    CHECKS.put(mine, (limits, checked))
    return checked


def next_round() -> None:
    """A new pass: the checks and layouts of the last passes are kept."""
    CHECKS.next_round()
    BY_CONTENT.next_round()
    _ROWS.clear()
    _MADE.next_round()


def _checked(mine: tuple[Manifest, ...], limits: Limits) -> Checked:
    """The check of `mine`."""
    taken: dict[str, Mapping[str, str]] = {}
    problems = []
    for m in mine:
        problem = _refusal(m, taken, limits)
        if problem is None:
            taken[m.file] = m.identity
        problems.append(problem)
    if any(problem is not None for problem in problems):
        return Checked(tuple(problems), None, "")
    content = manifests_content_hash(mine)  # `placement_content_hash` of the entries
    return Checked(None, [m.entry for m in mine], content)


def _refusal(
    m: Manifest, taken: Mapping[str, Mapping[str, str]], limits: Limits
) -> tuple[str, bool] | None:
    problem = refusal(m, limits)
    if problem is None and m.file in taken and taken[m.file] != m.identity:
        other = describe(taken[m.file])
        return f"its output file name {m.file} is already used by {other}", False
    return problem

"""Rollback: older resource snapshots rendered again from the source commit recorded for them.

A resource snapshot is a source commit plus the hash of what the placement selected there
(DESIGN.md §2). The pass stays pure: before it runs, every shell (the hub loop, `gitfleet
render`/`validate`/`plan`) asks `needed_snapshots(fleet, prior)` which (placement, index) pairs
the pass may deploy other than from the fleet as it is now (a staged run's
`spec.resourceSnapshotIndex` or the index frozen in its recorded status, a RollingUpdate pin
`gitfleet.io/resource-snapshot-index`), reads the fleet at each recorded commit with the same
loader and hands `collect_sources(needed, open_at)` a function that does so. The result,
`HistoricalSources`, is a typed input of the pass: per pair the selected resources as they were
at that commit (checked against the recorded snapshot hash), or why they are unavailable.
`pin_target` follows the pin annotation (`pinned_index`/`pin_problem` read and check it) and
`older_renders` prepares `SnapshotRender`s of older snapshots for the rollout stage. Called by
the shells and `reconciler.placement`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from gitfleet.api import ClusterResourcePlacement, ResourcePlacement
from gitfleet.api.meta import key_path
from gitfleet.load.model import FleetSnapshot
from reconciler.manifests import (
    NO_OVERRIDES,
    ClusterManifests,
    Manifest,
    OverrideRenderer,
    default_manifests,
)
from reconciler.output import placement_key
from reconciler.override import OverrideIndex
from reconciler.rollout import stagedstatus as st
from reconciler.rollout.staged import run_refs
from reconciler.schedule.clusters import ClusterView
from reconciler.select import ResourceIndex, Selection, build_index, select_resources
from reconciler.state import PlacementState, Snapshot, State

PIN_ANNOTATION = "gitfleet.io/resource-snapshot-index"
"""On a RollingUpdate placement: roll to this resource snapshot index instead of the latest."""
PIN_FIELD = f"metadata.annotations{key_path(PIN_ANNOTATION)}"

Pair = tuple[str, int]
"""(placement key, resource snapshot index)."""
AnyPlacement = ClusterResourcePlacement | ResourcePlacement


class SourceUnavailable(Exception):
    """The fleet at a commit cannot be read (not a Git repository, commit missing)."""


@dataclass(frozen=True)
class SnapshotRef:
    """One recorded resource snapshot the pass may have to render again."""

    placement: str
    index: int
    hash: str
    commit: str | None

    @property
    def pair(self) -> Pair:
        return (self.placement, self.index)

    def describe(self) -> str:
        return f"resource snapshot index {self.index} of placement `{self.placement}`"


@dataclass(frozen=True)
class HistoricalResources:
    """What a placement selected at a recorded commit (hash-checked), ready to render."""

    commit: str
    selection: Selection
    index: ResourceIndex
    """The resource index of that commit (envelopes unwrap from it)."""


@dataclass(frozen=True)
class HistoricalSources:
    """A typed input of the pass: per (placement key, index), the resources or why not."""

    found: Mapping[Pair, HistoricalResources] = field(default_factory=dict)
    missing: Mapping[Pair, str] = field(default_factory=dict)
    """Why the snapshot cannot be rendered (a complete sentence naming index, placement, commit)."""

    def for_placement(self, key: str) -> dict[int, HistoricalResources | str]:
        out: dict[int, HistoricalResources | str] = {
            i: m for (k, i), m in self.missing.items() if k == key
        }
        out.update({i: r for (k, i), r in self.found.items() if k == key})
        return out


NO_HISTORY = HistoricalSources()


@dataclass
class SnapshotRender:
    """An older snapshot of one placement rendered per cluster through the normal override
    path (the placement's current overrides), each cluster once per pass."""

    index: int
    commit: str
    manifests: tuple[Manifest, ...]
    """The objects without overrides (shared by clusters no override applies to)."""
    selection: Selection
    renderer: OverrideRenderer
    views: Mapping[str, ClusterView]
    _done: dict[str, ClusterManifests] = field(default_factory=dict)

    def cluster(self, name: str) -> ClusterManifests:
        if name not in self._done:
            view = self.views.get(name)
            self._done[name] = (
                NO_OVERRIDES if view is None else self.renderer.for_cluster(self.selection, view)
            )
        return self._done[name]

    def names(self, name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(ClusterResourceOverride, ResourceOverride) snapshot names applying on a cluster."""
        view = self.views.get(name)
        return ((), ()) if view is None else self.renderer.applicable_names(view)

    def manifests_for(self, name: str) -> tuple[Manifest, ...]:
        custom = self.cluster(name).manifests
        return self.manifests if custom is None else custom


def pinned_index(placement: AnyPlacement) -> tuple[int | None, str | None]:
    """(pinned index, problem) of the pin annotation; (None, None) when there is none."""
    text = (placement.metadata.annotations or {}).get(PIN_ANNOTATION)
    if text is None:
        return None, None
    if not re.fullmatch(r"[0-9]+", text.strip()):
        return None, (
            f"annotation {PIN_ANNOTATION} must be a resource snapshot index (an integer >= 0), "
            f"got {text!r}"
        )
    return int(text.strip()), None


def pin_problem(placement: AnyPlacement, history: Iterable[Snapshot]) -> str | None:
    """Why the pin cannot be followed (wrong strategy, unknown or pruned index), or None."""
    index, problem = pinned_index(placement)
    if problem is not None or index is None:
        return problem
    if placement.spec.strategy.type != "RollingUpdate":
        return (
            f"annotation {PIN_ANNOTATION} applies to RollingUpdate placements only; an External "
            "placement deploys an older index through a staged update run's "
            "spec.resourceSnapshotIndex"
        )
    indexes = [s.index for s in history]
    if index not in indexes:
        kept = f"{indexes[0]}..{indexes[-1]}" if indexes else "none"
        return (
            f"annotation {PIN_ANNOTATION}: resource snapshot index {index} does not exist or was "
            f"pruned by revisionHistoryLimit (indexes kept: {kept})"
        )
    return None


def pin_target(
    key: str, placement: AnyPlacement, history: tuple[Snapshot, ...], sources: HistoricalSources
) -> tuple[int | None, HistoricalResources | None, str | None]:
    """A RollingUpdate pin: (the older index the placement rolls to, its resources read at the
    recorded commit, None) - or (None, None, None) without a pin or when it names the latest -
    or (None, None, why the placement must keep its previous output)."""
    index, _ = pinned_index(placement)
    problem = pin_problem(placement, history)
    if problem is None and index is not None and index != history[-1].index:
        found = sources.for_placement(key).get(index)
        if isinstance(found, HistoricalResources):
            return index, found, None
        problem = found or f"resource snapshot index {index} was not read from its commit"
    if problem is not None:
        return None, None, f"{problem}; the placement keeps its previous output"
    return None, None, None


def older_renders(
    key: str,
    target: Snapshot | None,
    placement: AnyPlacement,
    views: Mapping[str, ClusterView],
    sources: HistoricalSources,
    overrides: OverrideIndex,
    override_names: Mapping[str, str],
) -> tuple[dict[int, SnapshotRender], dict[int, str]]:
    """Older snapshots (other than `target`) a staged run may deploy, rendered per cluster on
    demand through the placement's current overrides; and those that cannot be, with why."""
    renders: dict[int, SnapshotRender] = {}
    unavailable: dict[int, str] = {}
    for index, found in sorted(sources.for_placement(key).items()):
        if target is not None and index == target.index:
            continue
        if isinstance(found, str):
            unavailable[index] = found
            continue
        manifests, _ = default_manifests(found.selection, found.index)
        mine = overrides.for_placement(placement, found.selection.resources)
        renders[index] = SnapshotRender(
            index=index,
            commit=found.commit,
            manifests=manifests,
            selection=found.selection,
            renderer=OverrideRenderer(mine, found.index, override_names),
            views=views,
        )
    return renders, unavailable


def _placements(fleet: FleetSnapshot) -> dict[str, AnyPlacement]:
    out: dict[str, AnyPlacement] = {placement_key(n): p for n, p in fleet.placements.items()}
    for (ns, name), rp in fleet.resource_placements.items():
        out[placement_key(name, ns)] = rp
    return out


def _run_indexes(fleet: FleetSnapshot, prior: State) -> list[Pair]:
    """Indexes of staged runs that may still deploy: `spec.resourceSnapshotIndex` and the
    index frozen in the run's recorded status (finished runs deploy nothing)."""
    out: list[Pair] = []
    for ref in run_refs(fleet):
        doc = st.read_doc(prior.output, st.run_status_path(ref.name, ref.namespace)) or {}
        status = doc.get("status") or {}
        if st.find(status.get("conditions"), st.SUCCEEDED) is not None:
            continue
        for text in (ref.run.spec.resource_snapshot_index, status.get("resourceSnapshotIndexUsed")):
            if text is not None and re.fullmatch(r"[0-9]+", str(text)):
                out.append((ref.placement, int(str(text))))
    return out


def needed_snapshots(fleet: FleetSnapshot, prior: State) -> tuple[SnapshotRef, ...]:
    """Every recorded snapshot the pass may render other than from the fleet as it is now
    (sorted, no duplicates): runs' and pins' indexes in the placement's recorded history. The
    prior latest is included: this pass may record a newer one."""
    wanted = set(_run_indexes(fleet, prior))
    for key, placement in _placements(fleet).items():
        index, _ = pinned_index(placement)
        if index is not None:
            wanted.add((key, index))
    out = []
    for key, index in sorted(wanted):
        ps = prior.placements.get(key) or PlacementState(key=key)
        snap = next((s for s in ps.resource_snapshots if s.index == index), None)
        if snap is None:
            continue
        out.append(SnapshotRef(key, index, snap.hash, snap.commit))
    return tuple(out)


def historical_resources(
    old: FleetSnapshot, ref: SnapshotRef, index: ResourceIndex | None = None
) -> HistoricalResources | str:
    """Select `ref`'s placement's resources in `old` (the fleet at the recorded commit) with the
    placement as it was then; the selection must hash to the recorded snapshot hash. `index`:
    `old`'s resource index when the caller has it."""
    commit = ref.commit or ""
    placement = _placements(old).get(ref.placement)
    if placement is None:
        return (
            f"{ref.describe()} cannot be rendered again: the placement is not in the fleet at "
            f"its recorded commit {commit[:12]}"
        )
    index = index or build_index(old.resources)
    selection = select_resources(placement, index)
    if selection.error is not None or selection.hash != ref.hash:
        why = selection.error or f"hash {selection.hash[:12]}, recorded {ref.hash[:12]}"
        return (
            f"{ref.describe()} cannot be rendered again: selecting at its recorded commit "
            f"{commit[:12]} gives other resources than the snapshot ({why})"
        )
    return HistoricalResources(commit, selection, index)


class _Current:
    """The fleet being rendered: a snapshot whose selection there hashes to the recorded hash
    is exactly the recorded resources, so its commit need not be read."""

    def __init__(self, fleet: FleetSnapshot | None) -> None:
        self._fleet = fleet
        self._index: ResourceIndex | None = None

    def lookup(self, ref: SnapshotRef) -> HistoricalResources | None:
        if self._fleet is None:
            return None
        if self._index is None:
            self._index = build_index(self._fleet.resources)
        got = historical_resources(self._fleet, ref, self._index)
        return None if isinstance(got, str) else got


def collect_sources(
    needed: Iterable[SnapshotRef],
    open_at: Callable[[str], FleetSnapshot],
    *,
    current: FleetSnapshot | None = None,
    memo: dict[SnapshotRef, HistoricalResources | str] | None = None,
) -> HistoricalSources:
    """The pass's `HistoricalSources`. `memo` (a long-lived hub's) keeps each snapshot's
    outcome across passes; then `current` (the fleet being rendered) is tried; otherwise
    `open_at(commit)` loads the fleet at the recorded commit (the shell's I/O; it raises
    SourceUnavailable with the reason), each commit once per call."""
    memo = {} if memo is None else memo
    outcomes: dict[Pair, HistoricalResources | str] = {}
    fleets: dict[str, FleetSnapshot | str] = {}
    now = _Current(current)
    for ref in needed:
        if ref in memo:
            outcomes[ref.pair] = memo[ref]
            continue
        same = now.lookup(ref)
        if same is not None:  # hash-checked: valid for this snapshot from now on
            outcomes[ref.pair] = memo[ref] = same
            continue
        if not ref.commit:
            outcomes[ref.pair] = (
                f"{ref.describe()} has no recorded source commit (it was rendered from a working "
                "directory, not a Git commit); render with --ref or from the hub"
            )
            continue
        if ref.commit not in fleets:
            try:
                fleets[ref.commit] = open_at(ref.commit)
            except SourceUnavailable as exc:
                fleets[ref.commit] = str(exc)
        old = fleets[ref.commit]
        if isinstance(old, str):
            outcomes[ref.pair] = (
                f"{ref.describe()} was recorded at commit {ref.commit[:12]}, which {old}"
            )
            continue
        outcomes[ref.pair] = memo[ref] = historical_resources(old, ref)
    return HistoricalSources(
        found={p: o for p, o in outcomes.items() if not isinstance(o, str)},
        missing={p: o for p, o in outcomes.items() if isinstance(o, str)},
    )

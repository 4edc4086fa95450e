"""What each cluster of a pass looks like to the placement stages, and which clusters changed.

`fleet_facts(views)` gives, once per pass (per views mapping), every cluster's row: its
eligibility verdict, a digest of its MemberCluster without the agents' heartbeats and labels
(`cluster_digest`), and its labels; the clusters sorted by name; and the names whose row differs
from an earlier pass's (`changed_since`: the pass just before is known at once, any older one is
compared row by row once). A cluster whose row is unchanged reads the same to every scheduler
plugin and every override, so the stages that remember per-cluster results (`reuse`, and
`reconciler.placememo`'s key) redo only the changed clusters. Digests are remembered by the
MemberCluster object for two passes (a long-running hub hands the same objects pass after pass),
and a pass with the last pass's cluster names takes the rows of the very views it had as they
are (`FleetFacts._follow`).
Called by `reconciler.schedule.reuse`, `reconciler.schedule.cycle` and `reconciler.placememo`.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from itertools import compress
from operator import is_not

from gitfleet.api import MemberCluster
from gitfleet.api.canonical import canonical_json
from reconciler.stagememo import IdentityMemo

from .clusters import ClusterView

Row = tuple[str | None, str, Mapping[str, str]]
"""(eligibility verdict, digest of the MemberCluster but heartbeats and labels, labels)."""
_digests: IdentityMemo[tuple[str, Mapping[str, str]]] = IdentityMemo()
_lock = threading.Lock()


def cluster_digest(cluster: MemberCluster) -> tuple[str, Mapping[str, str]]:
    """What scheduling and overrides may read of a MemberCluster besides its labels (all of it
    but the agents' heartbeats, whose effect is the view's eligibility verdict; a status with
    nothing else is none), and its labels."""
    found = _digests.get(cluster)
    if found is not None:
        return found
    dumped = cluster.model_dump(
        by_alias=True,
        exclude_none=True,
        mode="json",
        exclude={"status": {"agent_status"}, "metadata": {"labels"}},
    )
    if dumped.get("status") == {}:  # reads as no status to every plugin: an agent's first
        del dumped["status"]  # report (heartbeat and conditions only) moves no cluster
    text = canonical_json(dumped)
    digest = (hashlib.sha256(text.encode()).hexdigest(), dict(cluster.metadata.labels or {}))
    _digests.put(cluster, digest)
    return digest


def _row(view: ClusterView) -> Row:
    return (view.ineligible_reason, *cluster_digest(view.cluster))


class FleetFacts:
    """The rows of one pass's clusters, and the clusters (views) and their names sorted (and
    as a set)."""

    def __init__(self, views: Mapping[str, ClusterView], previous: FleetFacts | None) -> None:
        self.views = views
        self._diffs: dict[int, tuple[FleetFacts, frozenset[str]]] = {}
        if previous is not None and views.keys() == previous.views.keys():
            self._follow(previous)
            return
        self.clusters: list[ClusterView] = [views[n] for n in sorted(views)]
        self.names: tuple[str, ...] = tuple([v.name for v in self.clusters])
        """The clusters' names, sorted."""
        self.name_set: frozenset[str] = frozenset(self.names)
        self.rows: Mapping[str, Row] = {v.name: _row(v) for v in self.clusters}
        if previous is not None:
            self._diffs[id(previous)] = (previous, changed_rows(previous.rows, self.rows))

    def _follow(self, previous: FleetFacts) -> None:
        """The facts of views with the very names of `previous`'s: its names and the rows of
        the very views it had are taken as they are (a view is frozen: the same object reads
        the same), only the other views' rows are made and compared (in C: ~1,000 clusters a
        pass, nearly all of them the very views of the last pass)."""
        self.names, self.name_set = previous.names, previous.name_set
        self.clusters = list(map(self.views.__getitem__, self.names))
        other = list(map(is_not, self.clusters, map(previous.views.__getitem__, self.names)))
        rows, changed = previous.rows, set()
        if any(other):
            rows = dict(rows)
            for view in compress(self.clusters, other):
                row = _row(view)
                if row != rows[view.name]:
                    rows[view.name] = row
                    changed.add(view.name)
        self.rows = rows
        self._diffs[id(previous)] = (previous, frozenset(changed))

    def changed_since(self, older: FleetFacts) -> frozenset[str]:
        """Names of the clusters added, removed or changed since `older`'s pass."""
        if older is self:
            return frozenset()
        found = self._diffs.get(id(older))
        if found is None or found[0] is not older:
            found = self._diffs[id(older)] = (older, changed_rows(older.rows, self.rows))
        return found[1]

    def retire(self) -> None:
        """A later pass began: forget the change sets (they hold earlier passes' facts); the
        rest stays usable by a pass still running with these views."""
        self._diffs = {}


def changed_rows(old: Mapping[str, Row], new: Mapping[str, Row]) -> frozenset[str]:
    """Names whose row differs between two passes (added and removed ones included)."""
    out = {name for name, row in new.items() if old.get(name) != row}
    out.update(name for name in old if name not in new)
    return frozenset(out)


class _Current:
    facts: FleetFacts | None = None


_current = _Current()


def fleet_facts(views: Mapping[str, ClusterView]) -> FleetFacts:
    """The facts of the pass `views` belongs to (computed on the first call with these views)."""
    with _lock:
        facts = _current.facts
        if facts is not None and facts.views is views:
            return facts
        _digests.next_round()
        made = FleetFacts(views, facts)
        if facts is not None:
            facts.retire()
        _current.facts = made
        return made

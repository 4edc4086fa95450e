"""What the hub loop reads besides the tip: signature gate, older fleets, approving commits.

Part of the hub's imperative shell (`reconciler.loop` is its only caller); it reads Git through
`gitfleet.repo` and keeps the long-lived hub's memos between passes.
- `SourceGate`: may a source commit be reconciled? Signatures since the last reconciled
  (trusted) source commit, under the policies of trusted commits (`gitfleet.repo.trust`,
  README "Signed commits"); a verdict is remembered for the same (trusted, source) pair, so a
  held tip is not re-verified on every poll.
- `OlderFleets`: fleets loaded at the source commits recorded for older resource snapshots
  (rollback and pins, `reconciler.history`), cached by commit id.
- `with_approval_commits`: who last changed each approval file (the approving commit).
- `SourceFleets`: the fleet at the source tip, loaded once per (tip, last reconciled source):
  a pass for new agent reports only (most passes of a large fleet) neither lists nor loads the
  source tree again, nor asks Git for approvals and the tip's author; a new tip lists only
  the paths changed since the last one, and one `git log` gives its approvals and author (none
  when the loop's `commitwalk.learn_history` walked to it). Both read files through the
  mirror's long-running `cat-file` (`Mirror.objects`) when the loop hands it in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from gitfleet.load.model import FleetSnapshot, PathCommit
from gitfleet.repo.branches import approved_deletions, last_changes, new_commits
from gitfleet.repo.gitcmd import GitError
from gitfleet.repo.gitread import GitTree
from gitfleet.repo.objects import ObjectReader
from gitfleet.repo.signatures import CommitFiles, TrustPolicy, operator_policy
from gitfleet.repo.trust import Verdict, verify_source
from reconciler.history import (
    NO_HISTORY,
    HistoricalResources,
    HistoricalSources,
    SnapshotRef,
    SourceUnavailable,
    collect_sources,
    needed_snapshots,
)
from reconciler.sourcepolicy import PolicyError, SourcePolicies
from reconciler.state import State
from renderers import load_fleet
from renderers.hubload import FleetLoader

APPROVAL_KINDS = ("ClusterApprovalRequest", "ApprovalRequest")
MAX_HISTORICAL_FLEETS = 4
"""Fleets loaded at older source commits (rollback) kept by the long-lived hub."""
MAX_REMEMBERED_SNAPSHOTS = 256


class SourceGate:
    """Signature verification of source commits, with the verdict of the last check."""

    def __init__(
        self, mirror: Path, allowed_signers: Path | None, objects: ObjectReader | None = None
    ) -> None:
        self._mirror = mirror
        self._objects = objects
        self._operator = operator_policy(allowed_signers) if allowed_signers else None
        self._policies: dict[str, TrustPolicy | None] = {}
        self._verdict: tuple[tuple[str | None, str], Verdict] | None = None

    def verify(self, source: str, trusted: str | None) -> Verdict:
        """May `source` be reconciled, `trusted` being the last reconciled source commit that
        is still in the mirror (None: first pass, trust on first use)?"""
        key = (trusted, source)
        if self._verdict is not None and self._verdict[0] == key:
            return self._verdict[1]
        try:
            with CommitFiles(self._mirror, self._objects) as files:
                policies = SourcePolicies(files.read, self._operator, self._policies)
                verdict = verify_source(self._mirror, trusted, source, policies.policy_of)
        except (PolicyError, GitError) as exc:  # not remembered: tried again next pass
            return Verdict(False, message=f"SourceVerificationFailed: {source[:12]}: {exc}")
        self._verdict = (key, verdict)
        return verdict


class OlderFleets:
    """Fleets at older source commits and the snapshots selected from them (rollback)."""

    def __init__(self, mirror: Path) -> None:
        self._mirror = mirror
        self.fleets: dict[str, FleetSnapshot] = {}
        """Fleets read at older source commits, by commit id (oldest first)."""
        self._snapshots: dict[SnapshotRef, HistoricalResources | str] = {}

    def fleet_at(self, commit: str) -> FleetSnapshot:
        """The fleet as committed at `commit` (a recorded snapshot's), cached by commit id."""
        if commit in self.fleets:
            return self.fleets[commit]
        try:
            with GitTree.open(self._mirror, commit) as tree:
                fleet = load_fleet(tree)
        except GitError:
            raise SourceUnavailable("is not in this repository") from None
        while len(self.fleets) >= MAX_HISTORICAL_FLEETS:
            del self.fleets[next(iter(self.fleets))]
        self.fleets[commit] = fleet
        return fleet

    def history(self, fleet: FleetSnapshot, prior: State) -> HistoricalSources:
        """Older resource snapshots this pass may render (rollback, pins)."""
        needed = needed_snapshots(fleet, prior)
        if not needed:
            return NO_HISTORY
        if len(self._snapshots) > MAX_REMEMBERED_SNAPSHOTS:
            self._snapshots.clear()
        return collect_sources(needed, self.fleet_at, current=fleet, memo=self._snapshots)


def with_approval_commits(fleet: FleetSnapshot, repo: Path, source: str) -> FleetSnapshot:
    """The fleet with who last changed each approval file (the approving commit)."""
    paths = [o.file for k, o in fleet.origins.items() if k[0] in APPROVAL_KINDS]
    if not paths:
        return fleet
    changes = last_changes(repo, source, paths)
    commits = {p: PathCommit(c.commit, c.author, c.committer) for p, c in changes.items()}
    return replace(fleet, file_commits=commits)


class SourceFleets:
    """The fleet at a source commit with its approving commits and approved deletions (those
    since `since`, the source commit the output last recorded), loaded once for that pair:
    the source tree is listed from the last one (only the paths that changed) and its
    snapshot patched pass to pass with the files that changed (`FleetLoader`); the same pair
    again gives the same snapshot object."""

    def __init__(self) -> None:
        self._loader = FleetLoader()
        self._last: tuple[tuple[str, str | None], FleetSnapshot] | None = None
        self._author: tuple[str, str | None] | None = None
        self._tree: GitTree | None = None
        """The last source tree listed: the next is listed from it (`GitTree.open_since`)."""

    def fleet(
        self, repo: Path, source: str, since: str | None, objects: ObjectReader | None = None
    ) -> FleetSnapshot:
        """The fleet at `source` (a commit id) with approvals since `since` (files read through
        `objects`, the mirror's shared reader, when given)."""
        key = (source, since)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        with GitTree.open_since(repo, source, self._tree, objects) as tree:
            fleet = self._loader.load(tree)
        self._tree = tree
        fleet = with_approval_commits(fleet, repo, source)
        commits = new_commits(repo, since, source)  # newest first: `source` leads
        if commits and commits[0].commit == source:
            self._author = (source, commits[0].author)  # the same `git log` tells it
        approved = approved_deletions(repo, since, source, fleet.approval_files(), commits=commits)
        fleet = replace(fleet, allowed_deletions=approved)
        self._last = (key, fleet)
        return fleet

    def author(self, source: str, lookup: Callable[[str], str | None]) -> str | None:
        """The author of `source`: from the `git log` `fleet` read, else `lookup(source)`,
        asked once per source commit."""
        if self._author is None or self._author[0] != source:
            self._author = (source, lookup(source))
        return self._author[1]

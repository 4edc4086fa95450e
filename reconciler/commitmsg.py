"""What a reconcile pass changed, for the output commit's message (the audit trail).

`describe_changes` compares the new output tree with the previous output commit by blob id (no
blob is read) and groups the changed paths by placement and cluster. `ChangeSummary.message_parts`
gives the subject, body and trailers (`Gitfleet-Source`, `Gitfleet-Placement`,
`Gitfleet-Clusters`) that `gitfleet history` reads back; `add_driver_trailers` appends the rollout drivers' trailers.
Called by `reconciler.loop`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from gitfleet.repo.gitwrite import blob_id

MAX_BODY_LINES = 200


class ListedTree(Protocol):
    """What describe_changes needs of the previous output: paths and blob ids."""

    def files(self) -> list[str]: ...

    def oid(self, path: str) -> str: ...


@dataclass
class ChangeSummary:
    """Changed paths of one pass, grouped."""

    initial: bool
    placements: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    """placement key -> clusters whose files for it changed."""
    status: set[str] = field(default_factory=set)
    other: int = 0
    changes: dict[str, bytes | None] = field(default_factory=dict)
    """Every changed path: new bytes, or None for a removed file (what gets committed)."""

    @property
    def changed(self) -> bool:
        return bool(self.placements or self.status or self.other)

    def clusters(self) -> set[str]:
        return set().union(*self.placements.values()) if self.placements else set()

    def message_parts(self, source: str) -> tuple[str, str, dict[str, str | list[str]]]:
        """(subject, body, trailers) of the output commit."""
        clusters = self.clusters()
        if self.initial:
            subject = f"gitfleet: initial render of {source[:12]}"
        elif self.placements:
            subject = (
                f"gitfleet: {len(self.placements)} placement(s) changed on "
                f"{len(clusters)} cluster(s) (source {source[:12]})"
            )
        else:
            subject = f"gitfleet: status updated (source {source[:12]})"
        lines = []
        for key, cl in sorted(self.placements.items()):
            names = ", ".join(sorted(cl)[:8]) + (", ..." if len(cl) > 8 else "")
            lines.append(f"placement {key}: {len(cl)} cluster(s) changed ({names})")
        if self.status:
            lines.append(f"status: {len(self.status)} file(s) changed")
        if len(lines) > MAX_BODY_LINES:
            lines = [*lines[:MAX_BODY_LINES], f"... and {len(lines) - MAX_BODY_LINES} more"]
        trailers: dict[str, str | list[str]] = {
            "Gitfleet-Source": source,
            "Gitfleet-Placement": sorted(self.placements),
            "Gitfleet-Clusters": str(len(clusters)),
        }
        return subject, "\n".join(lines), trailers


def _record(summary: ChangeSummary, path: str) -> None:
    parts = path.split("/")
    if parts[0] == "clusters" and len(parts) >= 4:
        summary.placements[parts[2]].add(parts[1])
    elif parts[0] == "clusters" and len(parts) == 3:
        pass  # index.yaml changes follow the placement files that changed with it
    elif parts[0] in ("status", "decisions", "clusterprofiles"):
        summary.status.add(path)
    elif parts[0] != "state":
        summary.other += 1


_ABSENT = ("", 0)
"""The listing entry of a path that is not there (no blob id is empty)."""


def describe_changes(
    prior: ListedTree | None,
    files: Mapping[str, bytes],
    ids: Callable[[bytes], str] = blob_id,
    listing: Mapping[str, tuple[str, int]] | None = None,
    candidates: Iterable[str] | None = None,
) -> ChangeSummary:
    """Group what differs between the previous output tree and `files`; `ids` gives a
    content's blob id (the hub passes one that remembers them), or `listing` (path -> (blob
    id, size) of `files`) gives them all, and `candidates` (with `listing`) every path that
    may differ (`BlobIdMemo.listing_since`): only those are compared."""
    summary = ChangeSummary(initial=prior is None)
    whole = getattr(prior, "listing", None)  # a GitTree lists (blob id, size) of everything
    # Blob ids are compared, not (id, size): a tree listed without sizes has them unknown.
    if listing is not None and whole is not None and candidates is not None:
        old: Mapping[str, tuple[str, int]] = whole()
        for path in candidates:
            now = listing.get(path)
            if old.get(path, _ABSENT)[0] != (now or _ABSENT)[0]:
                _record(summary, path)
                summary.changes[path] = files[path] if now is not None else None
        return summary
    before: Mapping[str, object]
    if listing is not None and whole is not None:
        before = old = whole()
        changed = [p for p, entry in listing.items() if old.get(p, _ABSENT)[0] != entry[0]]
    else:
        before = {path: prior.oid(path) for path in prior.files()} if prior is not None else {}
        if listing is not None:  # blob ids already known: nothing to hash
            changed = [p for p in files if before.get(p) != listing[p][0]]
        else:
            changed = [p for p, data in files.items() if before.get(p) != ids(data)]
    for path in changed:
        _record(summary, path)
        summary.changes[path] = files[path]
    for path in before:
        if path not in files:
            _record(summary, path)
            summary.changes[path] = None
    return summary


def add_driver_trailers(
    trailers: dict[str, str | list[str]], extra: Sequence[tuple[str, str]]
) -> None:
    """Append the rollout drivers' trailers (who approved, what waits) in their order; keys the
    loop sets itself are never replaced."""
    for key, value in extra:
        old = trailers.get(key)
        if isinstance(old, str):
            continue
        trailers[key] = [*(old or []), value]

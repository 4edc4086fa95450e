"""Override snapshots: an index per override that moves on when the override's content changes.

KubeFleet keeps one snapshot per override version, named `<override>-<index>` (index from 0,
+1 per new content hash, latest flagged), and bindings name the snapshots they were rendered with
(kubefleet.md §3.1, §3.2.3). gitfleet keeps only the (index, hash) history per override key in its
state; `next_override_snapshots` advances it from this pass's hashes and `snapshot_name` spells
the name shown in status and messages. Called by the reconcile pass and
`reconciler.override.index`.
"""

from __future__ import annotations

from collections.abc import Mapping

from reconciler.state import Snapshot


def next_override_snapshots(
    prior: Mapping[str, tuple[Snapshot, ...]], hashes: Mapping[str, str], limit: int = 10
) -> dict[str, tuple[Snapshot, ...]]:
    """Per override key in `hashes` (sorted): its history, with a new snapshot (index + 1) when
    the hash differs from the latest one; at most `limit` kept, oldest dropped. Overrides that
    no longer exist are dropped (a re-created override starts again at index 0)."""
    out: dict[str, tuple[Snapshot, ...]] = {}
    for key in sorted(hashes):
        history = tuple(prior.get(key, ()))
        digest = hashes[key]
        if not history or history[-1].hash != digest:
            index = history[-1].index + 1 if history else 0
            history = (*history, Snapshot(index=index, hash=digest))
        out[key] = history[-max(limit, 1) :]
    return out


def snapshot_name(key: str, index: int) -> str:
    """`<override name>-<index>` for an override key (`Kind/<name>` or `Kind/<ns>/<name>`)."""
    return f"{key.rsplit('/', 1)[-1]}-{index}"

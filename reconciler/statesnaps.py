"""Snapshot lists of the state files, and `state/overrides.yaml` (OverrideState).

A placement state file lists its policy and resource snapshots (`snapshots_to_yaml`,
`read_snapshots`); `state/overrides.yaml` lists each override's snapshots. `override_file`
writes the latter, made again only when the overrides' snapshots changed (a pass mostly keeps
them), and `read_overrides` reads it back (by blob id, `priorparse.derive_own`). Called by
`reconciler.state`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from gitfleet.api.output import OUTPUT_API_VERSION, OVERRIDE_STATE_PATH
from gitfleet.load.yamlio import dump_yaml
from reconciler.priorparse import derive_own, remember
from reconciler.stagememo import StageMemo
from reconciler.statetypes import Snapshot

OVERRIDES_FILE = OVERRIDE_STATE_PATH
OVERRIDES_TAG = "override-state"
Overrides = Mapping[str, tuple[Snapshot, ...]]


def snapshots_to_yaml(snaps: tuple[Snapshot, ...]) -> list[dict[str, Any]]:
    out = []
    for s in snaps:
        entry: dict[str, Any] = {"index": s.index, "hash": s.hash}
        if s.commit:
            entry["commit"] = s.commit
        out.append(entry)
    return out


def read_snapshots(raw: Any) -> tuple[Snapshot, ...]:
    return tuple(
        Snapshot(index=int(s["index"]), hash=str(s["hash"]), commit=s.get("commit"))
        for s in raw or []
    )


def override_file(overrides: Overrides) -> tuple[bytes, dict[str, tuple[Snapshot, ...]]]:
    """`state/overrides.yaml` of `overrides` and what reading it gives; the last file again
    while the overrides' snapshots are equal."""
    found = _LAST.get("", (overrides,))
    if found is None:
        doc = {
            "apiVersion": OUTPUT_API_VERSION,
            "kind": "OverrideState",
            "overrides": {k: snapshots_to_yaml(v) for k, v in sorted(overrides.items())},
        }
        data = dump_yaml(doc).encode()
        found = (data, remember(data, OVERRIDES_TAG, dict(overrides)))
        _LAST.put("", (dict(overrides),), found)
    return found


_LAST: StageMemo[tuple[bytes, dict[str, tuple[Snapshot, ...]]]] = StageMemo()
"""The last overrides file and its value, with the overrides (copied) it was made of."""


def read_overrides(
    files: Mapping[str, bytes], problems: list[str]
) -> dict[str, tuple[Snapshot, ...]]:
    if OVERRIDES_FILE not in files:
        return {}
    try:
        return derive_own(files, OVERRIDES_FILE, OVERRIDES_TAG, _override_snapshots)
    except (yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as exc:
        problems.append(f"{OVERRIDES_FILE}: unreadable state file ignored ({type(exc).__name__})")
        return {}


def _override_snapshots(doc: Any) -> dict[str, tuple[Snapshot, ...]]:
    return {str(k): read_snapshots(v) for k, v in ((doc or {}).get("overrides") or {}).items()}

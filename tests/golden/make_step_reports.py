"""Write the agent reports of a golden step: what agents that applied their index would push.

    python -m tests.golden.make_step_reports TREE OUT --now 2026-11-21T10:01:00Z \\
        [--unavailable eu-1,eu-2] [--clusters eu-1,eu-2] [--empty]

For each cluster (default: every `clusters/<name>/` in TREE, the previous step's expected tree)
it writes `OUT/<name>.yaml`, an `AgentReport` whose placements are that cluster's index entries
(the same `contentHash`, so the hub counts them) with Applied True and Available True, or
Available False for `--unavailable` clusters. `--empty` writes heartbeat-only reports (agents
that joined and applied nothing yet). Used to author stepped golden cases
(`tests/golden/test_golden.py`); run it again only if the index format changes the hashes.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml

from gitfleet.api.canonical import placement_content_hash
from gitfleet.load.yamlio import dump_yaml


def _conditions(available: bool, now: str) -> list[dict[str, str]]:
    applied = {
        "type": "Applied",
        "status": "True",
        "reason": "AllWorkHaveBeenApplied",
        "message": "All objects are applied",
        "lastTransitionTime": now,
    }
    if available:
        state = ("True", "AllWorkAreAvailable", "All objects are available")
    else:
        state = ("False", "NotAllWorkAreAvailable", "1 object is not available yet")
    avail = dict(zip(("status", "reason", "message"), state, strict=True))
    return [applied, {"type": "Available", **avail, "lastTransitionTime": now}]


def report(cluster: str, index: Any, now: str, available: bool, empty: bool) -> dict[str, Any]:
    placements = []
    for entry in [] if empty else (index or {}).get("placements") or []:
        placement: dict[str, Any] = {"key": entry["key"], "name": entry["name"]}
        if entry.get("namespace"):
            placement["namespace"] = entry["namespace"]
        placement["resourceSnapshotIndex"] = entry["resourceSnapshotIndex"]
        placement["policySnapshotIndex"] = entry["policySnapshotIndex"]
        placement["contentHash"] = placement_content_hash(entry.get("objects") or [])
        placement["conditions"] = _conditions(available, now)
        placements.append(placement)
    return {
        "apiVersion": "gitfleet.io/v1alpha1",
        "kind": "AgentReport",
        "metadata": {"name": cluster},
        "heartbeatTime": now,
        "agentVersion": "golden",
        "placements": placements,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--now", required=True)
    parser.add_argument("--unavailable", default="")
    parser.add_argument("--clusters", default="")
    parser.add_argument("--empty", action="store_true")
    args = parser.parse_args()
    unavailable = set(filter(None, args.unavailable.split(",")))
    clusters = list(filter(None, args.clusters.split(","))) or sorted(
        p.name for p in (args.tree / "clusters").iterdir() if p.is_dir()
    )
    args.out.mkdir(parents=True, exist_ok=True)
    for cluster in clusters:
        path = args.tree / "clusters" / cluster / "index.yaml"
        index = yaml.safe_load(path.read_text()) if path.is_file() else {}
        doc = report(cluster, index, args.now, cluster not in unavailable, args.empty)
        (args.out / f"{cluster}.yaml").write_text(dump_yaml(doc))


if __name__ == "__main__":
    main()

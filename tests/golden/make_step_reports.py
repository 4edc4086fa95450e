"""Write the agent reports of a golden step: what agents that applied their index would push.

    python -m tests.golden.make_step_reports TREE OUT --now 2026-11-21T10:01:00Z \\
        [--unavailable eu-1,eu-2] [--clusters eu-1,eu-2] [--empty]
    python -m tests.golden.make_step_reports --refresh tests/golden/rolling-waves

For each cluster (default: every cluster with an index in TREE, the previous step's expected
tree) it writes `OUT/<name>.yaml`, an `AgentReport` whose placements are that cluster's index
entries (the same content hash, so the hub counts them) with Applied True and Available True, or
Available False for `--unavailable` clusters. `--empty` writes heartbeat-only reports (agents
that joined and applied nothing yet). `--refresh CASE` rewrites every step's own reports from
the step before it, keeping which clusters reported unavailable: needed only when the output
format changes the content hashes (`test_golden_steps` says so). Used to author stepped golden
cases (`tests/golden/test_golden.py`).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from gitfleet.load.yamlio import dump_yaml
from reconciler.assemble import given_content, read_prior_index


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


def report(
    cluster: str, entries: Iterable[Mapping[str, Any]], now: str, available: bool
) -> dict[str, Any]:
    """The report of an agent that applied `entries` (its index entries, by placement key)."""
    placements = []
    for entry in entries:
        placement: dict[str, Any] = {"key": entry["key"], "name": entry["name"]}
        if entry.get("namespace"):
            placement["namespace"] = entry["namespace"]
        placement["resourceSnapshotIndex"] = entry["resourceSnapshotIndex"]
        placement["policySnapshotIndex"] = entry["policySnapshotIndex"]
        placement["contentHash"] = given_content(entry)
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


def write_reports(
    files: Mapping[str, bytes],
    out: Path,
    now: str,
    unavailable: set[str],
    clusters: list[str] | None = None,
    empty: bool = False,
) -> None:
    """The reports of agents that applied the output tree `files`."""
    index = read_prior_index(files)
    out.mkdir(parents=True, exist_ok=True)
    for cluster in clusters or sorted(index):
        entries = [] if empty else [index[cluster][k] for k in sorted(index.get(cluster, {}))]
        doc = report(cluster, entries, now, cluster not in unavailable)
        (out / f"{cluster}.yaml").write_text(dump_yaml(doc))


def _unavailable(reports: Path) -> set[str]:
    out = set()
    for path in reports.glob("*.yaml"):
        doc = yaml.safe_load(path.read_text()) or {}
        for p in doc.get("placements") or []:
            if any(c["type"] == "Available" and c["status"] == "False" for c in p["conditions"]):
                out.add(path.stem)
    return out


def refresh(case: Path) -> None:
    """Rewrite every step's own reports from the step before it."""
    from reconciler.state import State
    from tests.golden.test_golden import case_spec, next_prior, render_case

    files = render_case(case, State())
    for step in case_spec(case)["steps"]:
        if "reports" not in step:
            out = case / "steps" / step["name"] / "reports"
            write_reports(files, out, step["now"], _unavailable(out))
        files = render_case(case, next_prior(files), step)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("tree", type=Path, nargs="?")
    parser.add_argument("out", type=Path, nargs="?")
    parser.add_argument("--now")
    parser.add_argument("--unavailable", default="")
    parser.add_argument("--clusters", default="")
    parser.add_argument("--empty", action="store_true")
    parser.add_argument("--refresh", type=Path, metavar="CASE")
    args = parser.parse_args()
    if args.refresh is not None:
        refresh(args.refresh)
        return
    if args.tree is None or args.out is None or args.now is None:
        parser.error("TREE, OUT and --now are required (or --refresh CASE)")
    tree = {
        p.relative_to(args.tree).as_posix(): p.read_bytes()
        for p in sorted(args.tree.rglob("*"))
        if p.is_file()
    }
    clusters = list(filter(None, args.clusters.split(","))) or None
    unavailable = set(filter(None, args.unavailable.split(",")))
    write_reports(tree, args.out, args.now, unavailable, clusters, args.empty)


if __name__ == "__main__":
    main()

"""Output-shape benchmark: metadata sizes, their emission time and the hub's restart cost.

`python benchmarks/bench_shape.py FLEET OUT` (FLEET a fleet directory, e.g. from
`benchmarks/generate.py`; OUT a new directory) runs in this process a cold pass
(`reconcile` with an empty prior) and reports the bytes of each part of the output tree
(cluster indexes, placement indexes, placement status, state, manifests: all bytes and distinct
git blobs), the CPU seconds spent serialising each document kind (`dump_yaml`, by kind), then
writes the tree to OUT. `--restart` then starts a fresh process that reads OUT back
(`read_state`) and runs the same pass over it, as a restarted hub does: its CPU seconds (reading
the files from disk not counted: a hub reads the git blobs it needs), the
bytes it parsed (`load_bounded`) and whether the tree came out identical. Prints one JSON
object. CPU seconds are reported next to wall seconds: the machine may be shared.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

NOW = "2026-01-01T00:00:00Z"


def cpu_seconds() -> float:
    """User + system CPU seconds of this process."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def category(path: str) -> str:
    """Which part of the output tree `path` is."""
    parts = path.split("/")
    if parts[0] == "clusters" and parts[-1] == "index.yaml":
        return "clusterIndex" if len(parts) == 3 else "placementIndex"
    if parts[0] == "clusters":
        return "manifests"
    if parts[:2] == ["status", "placements"]:
        return "placementStatus"
    return parts[0]


def sizes(files: Mapping[str, bytes]) -> dict[str, dict[str, float]]:
    """Per part: files, MB of all files, MB of distinct contents (what git stores)."""
    total: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    distinct: dict[str, dict[str, int]] = defaultdict(dict)
    for path, data in files.items():
        part = category(path)
        total[part][0] += 1
        total[part][1] += len(data)
        distinct[part][hashlib.sha1(data, usedforsecurity=False).hexdigest()] = len(data)
    return {
        part: {
            "files": count,
            "MB": round(size / 1e6, 2),
            "distinctMB": round(sum(distinct[part].values()) / 1e6, 2),
        }
        for part, (count, size) in sorted(total.items())
    }


def timed_by_kind(seconds: dict[str, float], dump: Callable[..., str]) -> Callable[..., str]:
    """`dump` that adds its seconds to `seconds[<document kind>]`."""

    def wrapped(doc: Any, *args: Any, **kwargs: Any) -> str:
        started = time.process_time()  # CPU time: the machine may be shared
        try:
            return dump(doc, *args, **kwargs)
        finally:
            kind = doc.get("kind", "?") if isinstance(doc, dict) else "?"
            seconds[kind] = seconds.get(kind, 0.0) + time.process_time() - started

    return wrapped


def instrument(seconds: dict[str, float], parsed: list[int]) -> None:
    """Time YAML emission by kind; count the bytes read back from a previous output."""
    import reconciler.output
    import reconciler.priorparse
    import reconciler.state

    for module in (reconciler.output, reconciler.state):
        module.dump_yaml = timed_by_kind(seconds, module.dump_yaml)  # type: ignore[attr-defined]
    load = reconciler.priorparse.load_bounded

    def counted(data: bytes) -> Any:
        parsed[0] += 1
        parsed[1] += len(data)
        return load(data)

    reconciler.priorparse.load_bounded = counted


def run(fleet_dir: Path, out: Path, restart: bool) -> dict[str, Any]:
    """The cold pass (and, in this process, a restart over `out` when `restart`)."""
    from gitfleet.api import parse_time
    from gitfleet.repo.outdir import read_output, write_output
    from gitfleet.repo.workdir import WorkdirTree
    from reconciler.pass_ import reconcile
    from reconciler.state import State, read_state
    from renderers import load_fleet

    emitted: dict[str, float] = {}
    parsed = [0, 0]
    instrument(emitted, parsed)
    fleet = load_fleet(WorkdirTree(fleet_dir))
    cpu, wall = cpu_seconds(), time.perf_counter()
    if not restart:
        result = reconcile(fleet, State(), None, parse_time(NOW))
        report: dict[str, Any] = {"coldPassCpu": cpu_seconds() - cpu}
        report["coldPassWall"] = time.perf_counter() - wall
        report["sizes"] = sizes(result.files)
        write_output(out, result.files)
    else:
        files = read_output(out, "")  # a hub reads git blobs lazily: not counted
        cpu, wall = cpu_seconds(), time.perf_counter()
        prior, _problems = read_state(files)
        report = {"readStateCpu": cpu_seconds() - cpu}
        result = reconcile(fleet, prior, None, parse_time(NOW))
        report["restartCpu"] = cpu_seconds() - cpu
        report["restartWall"] = time.perf_counter() - wall
        report["identical"] = result.files == files
        report["parsedFiles"], report["parsedMB"] = parsed[0], round(parsed[1] / 1e6, 2)
    report["emitSeconds"] = {k: round(v, 3) for k, v in sorted(emitted.items())}
    report["maxRssMiB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    return report


def main(argv: list[str] | None = None) -> int:
    """Parse arguments; the cold pass here, the restart in a fresh process."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("fleet", type=Path)
    p.add_argument("out", type=Path, help="a new directory for the cold pass's output")
    p.add_argument("--restart", action="store_true", help="also time a restarted hub")
    p.add_argument("--only-restart", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.only_restart:
        print(json.dumps(run(args.fleet, args.out, restart=True)))
        return 0
    report = {"cold": run(args.fleet, args.out, restart=False)}
    if args.restart:
        argv2 = [sys.executable, __file__, str(args.fleet), str(args.out), "--only-restart"]
        done = subprocess.run(argv2, capture_output=True, check=True, text=True)
        report["restart"] = json.loads(done.stdout)
    print(json.dumps(report, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

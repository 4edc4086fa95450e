"""Render benchmark: time loading, the pure pass and writing the output of a synthetic fleet, each
in a fresh process, and compare with `kubectl kustomize` per cluster.

`python benchmarks/bench_render.py --size fleet-1k --trials 5 [--json out.json]` generates the
fleet once (`benchmarks.generate`), then runs `benchmarks/phase.py` in a new Python process per
trial and phase: (a) load, (b) load + pass, (c) load + pass + write into an empty directory. It
reports per phase the median / min / max wall time of the process, its peak RSS (os.wait4), the
in-process step times, the output's file count, bytes and distinct contents, and a baseline:
`kubectl kustomize` of one overlay per sampled cluster holding the same manifests, with the ratio
of per-cluster times. Prints a markdown summary; `--json` also saves every measurement.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.baseline import (
    OverlayRun,
    build_overlays,
    clusters_with_output,
    pick_sample,
    time_overlays,
)
from benchmarks.generate import SIZES, add_size_options, build_fleet, resolve_size, write_fleet
from benchmarks.phase import DEFAULT_NOW, PHASES

ROOT = Path(__file__).resolve().parent.parent
LABELS = {"load": "(a) load", "pass": "(b) load + pass", "write": "(c) load + pass + write"}


@dataclass(frozen=True)
class Trial:
    """One child process: wall seconds, peak RSS and the child's own report."""

    phase: str
    wall: float
    max_rss_mib: float
    report: dict[str, Any]


@dataclass(frozen=True)
class OutputStats:
    """What a write phase left on disk (the marker file excluded)."""

    files: int
    bytes: int
    distinct: int
    distinct_bytes: int
    by_section: dict[str, int]


def run_child(phase: str, fleet_dir: Path, out_dir: Path | None) -> Trial:
    """Run `benchmarks/phase.py` in a new interpreter; wall time and RSS of that process."""
    argv = [sys.executable, str(ROOT / "benchmarks" / "phase.py"), phase, str(fleet_dir)]
    argv += ["--now", DEFAULT_NOW] + (["--out", str(out_dir)] if out_dir else [])
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=err)
        assert proc.stdout is not None
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stdout.close()
        if proc.returncode != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace")[-2000:]
            raise RuntimeError(f"phase {phase} exited {proc.returncode}: {tail}")
    return Trial(phase, wall, usage.ru_maxrss / 1024, json.loads(out))


def output_stats(out_dir: Path) -> OutputStats:
    """Count files, bytes and distinct contents (sha256) of a rendered tree."""
    digests: dict[str, int] = {}
    files = total = 0
    sections: dict[str, int] = {}
    for dirpath, dirnames, filenames in os.walk(out_dir):
        dirnames.sort()
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(dirpath) / name
            data = path.read_bytes()
            files, total = files + 1, total + len(data)
            digests.setdefault(hashlib.sha256(data).hexdigest(), len(data))
            section = path.relative_to(out_dir).parts[0]
            sections[section] = sections.get(section, 0) + 1
    return OutputStats(
        files, total, len(digests), sum(digests.values()), dict(sorted(sections.items()))
    )


def run_trials(
    phases: list[str], trials: int, fleet_dir: Path, work: Path, budget: float
) -> tuple[dict[str, list[Trial]], Path | None]:
    """Phase by phase, `trials` times each (at least once each; a further trial only when the
    budget in seconds, if any, leaves room for one more of the same length)."""
    started = time.perf_counter()
    results: dict[str, list[Trial]] = {}
    kept: Path | None = None
    for phase in phases:
        results[phase] = []
        for k in range(trials):
            last = results[phase][-1].wall if results[phase] else 0.0
            if k and budget and time.perf_counter() - started + last > budget:
                break
            out_dir = work / f"out-{k}" if phase == "write" else None
            trial = run_child(phase, fleet_dir, out_dir)
            results[phase].append(trial)
            print(f"  {phase} trial {k + 1}: {trial.wall:.1f}s", file=sys.stderr)
            if out_dir is not None and kept is None:
                kept = out_dir
            elif out_dir is not None:
                shutil.rmtree(out_dir)
    return results, kept


def _stat(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def phase_summary(results: dict[str, list[Trial]]) -> dict[str, dict[str, Any]]:
    """Per phase: wall stats, peak RSS and median in-process step seconds."""
    out: dict[str, dict[str, Any]] = {}
    for phase, trials in results.items():
        steps = sorted(
            {s for t in trials for s in t.report["seconds"]},
            key=["import", "load", "pass", "write"].index,
        )
        out[phase] = {
            "trials": len(trials),
            "wall": _stat([t.wall for t in trials]),
            "maxRssMiB": max(t.max_rss_mib for t in trials),
            "steps": {s: statistics.median(t.report["seconds"][s] for t in trials) for s in steps},
            "errors": trials[0].report.get("errors", trials[0].report["loadErrors"]),
            "files": trials[0].report.get("files"),
        }
    return out


def baseline(fleet_dir: Path, out_dir: Path, sample_size: int, work: Path) -> list[OverlayRun]:
    """Time `kubectl kustomize` on overlays of `sample_size` clusters that got objects."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return []
    sample = pick_sample(clusters_with_output(out_dir), sample_size)
    overlays = build_overlays(fleet_dir, out_dir, sample, work / "kustomize")
    (work / "home").mkdir(exist_ok=True)
    return time_overlays(kubectl, overlays, work / "home")


def render_markdown(summary: dict[str, Any]) -> str:
    """The short report printed to stdout."""
    lines = [
        f"fleet `{summary['size']}` (seed {summary['seed']}): {summary['fleet']}",
        "",
        "| phase | trials | median s | min s | max s | peak RSS MiB | in-process median s |",
        "|---|---|---|---|---|---|---|",
    ]
    for phase, s in summary["phases"].items():
        steps = ", ".join(f"{k} {v:.2f}" for k, v in s["steps"].items())
        w = s["wall"]
        lines.append(
            f"| {LABELS[phase]} | {s['trials']} | {w['median']:.2f} | {w['min']:.2f} | {w['max']:.2f} | {s['maxRssMiB']:.0f} | {steps} |"
        )
    out = summary.get("output")
    if out:
        lines += [
            "",
            f"output: {out['files']} files, {out['bytes'] / 1e6:.1f} MB; {out['distinct']} distinct contents "
            f"({out['distinct_bytes'] / 1e6:.1f} MB); files by section {out['by_section']}",
        ]
    base = summary.get("baseline")
    if base:
        lines += [
            "",
            "| per cluster | seconds |",
            "|---|---|",
            f"| kubectl kustomize (mean of {base['clusters']} clusters, {base['objectsPerCluster']:.0f} objects each; gitfleet wrote {base['gitfleetObjectsPerCluster']:.0f}) | {base['kustomizePerCluster']:.4f} |",
            f"| gitfleet (median (c) / {summary['clusters']} clusters) | {base['gitfleetPerCluster']:.4f} |",
            f"| ratio kustomize / gitfleet | {base['ratio']:.1f}x |",
        ]
    return "\n".join(lines)


def _baseline_summary(
    runs: list[OverlayRun], phases: dict[str, Any], clusters: int
) -> dict[str, Any] | None:
    if not runs or "write" not in phases:
        return None
    per_cluster = statistics.fmean(r.seconds for r in runs)
    gitfleet = phases["write"]["wall"]["median"] / clusters
    return {
        "clusters": len(runs),
        "objectsPerCluster": statistics.fmean(r.objects for r in runs),
        "objectsMatch": all(r.objects == r.expected for r in runs),
        "gitfleetObjectsPerCluster": statistics.fmean(r.expected for r in runs),
        "kustomizePerCluster": per_cluster,
        "kustomizeMedian": statistics.median(r.seconds for r in runs),
        "gitfleetPerCluster": gitfleet,
        "ratio": per_cluster / gitfleet,
        "runs": [asdict(r) for r in runs],
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line arguments of the benchmark."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_size_options(p)
    p.add_argument("--trials", type=int, default=5)
    p.add_argument(
        "--phases", default=",".join(PHASES), help="comma-separated subset of load,pass,write"
    )
    p.add_argument("--baseline-clusters", type=int, default=20)
    p.add_argument(
        "--max-minutes",
        type=float,
        default=0.0,
        help="stop repeating trials past this (0: no limit)",
    )
    p.add_argument("--json", type=Path, help="also write every measurement here")
    p.add_argument(
        "--workdir", type=Path, help="where to put the fleet and outputs (default: a temp dir)"
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Generate, measure, print the markdown summary."""
    args = parse_args(argv)
    phases = [p for p in PHASES if p in args.phases.split(",")]
    size = resolve_size(args)
    label = args.size if size == SIZES[args.size] else f"custom {size}"
    work = Path(tempfile.mkdtemp(prefix="gitfleet-bench-", dir=args.workdir))
    try:
        fleet = build_fleet(size, args.seed)
        write_fleet(fleet, work / "fleet")
        print(f"generated {work / 'fleet'}", file=sys.stderr)
        results, kept = run_trials(phases, args.trials, work / "fleet", work, args.max_minutes * 60)
        summary: dict[str, Any] = {
            "size": label,
            "seed": args.seed,
            "clusters": size.clusters,
            "fleet": f"{size.clusters} clusters, placements {fleet.policy_counts()}, {size.resources} resources, {size.overrides} overrides",
            "phases": phase_summary(results),
        }
        if kept is not None:
            summary["output"] = asdict(output_stats(kept))
            runs = baseline(work / "fleet", kept, args.baseline_clusters, work)
            summary["baseline"] = _baseline_summary(runs, summary["phases"], size.clusters)
        print(render_markdown(summary))
        if args.json:
            raw = {p: [asdict(t) for t in ts] for p, ts in results.items()}
            args.json.write_text(
                json.dumps({**summary, "trials": raw}, indent=2, sort_keys=True) + "\n"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

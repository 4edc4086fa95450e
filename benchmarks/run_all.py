"""One command for every benchmark at one size: render phases with the kustomize baseline ratio
(`bench_render.py`) and the Git scenarios with their three checks (`bench_hub.py`).

    python benchmarks/run_all.py --size fleet-1k --trials 5
    python benchmarks/run_all.py --clusters 200 --placements 50 --resources 500 --overrides 20
    python benchmarks/run_all.py --size fleet-10k --only render --phases load,pass --trials 1

Each benchmark runs as its own process and prints its markdown table; the exit code is non-zero
when either fails (a failed check of the Git scenarios makes the run not count).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZE_FLAGS = (
    "size",
    "clusters",
    "placements",
    "resources",
    "overrides",
    "seed",
    "trials",
    "max_minutes",
)


def forwarded(args: argparse.Namespace) -> list[str]:
    out: list[str] = []
    for flag in SIZE_FLAGS:
        value = getattr(args, flag)
        if value is not None:
            out += [f"--{flag.replace('_', '-')}", str(value)]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", default="fleet-1k")
    for flag in ("clusters", "placements", "resources", "overrides", "seed", "trials"):
        p.add_argument(f"--{flag}", type=int)
    p.add_argument("--max-minutes", type=float, help="per phase / scenario budget (see each)")
    p.add_argument("--baseline-clusters", type=int, default=20)
    p.add_argument(
        "--only", choices=("render", "hub"), help="run one benchmark (fleet-10k: render only)"
    )
    p.add_argument("--phases", help="render phases, e.g. load,pass (default: all three)")
    p.add_argument("--json-dir", type=Path, help="write render.json and hub.json here")
    p.add_argument("--git-daemon", action="store_true", help="bench_hub.py --git-daemon")
    args = p.parse_args(argv)
    common = forwarded(args)
    render = [*common, "--baseline-clusters", str(args.baseline_clusters)]
    render += ["--phases", args.phases] if args.phases else []
    runs = [
        ("bench_render.py", render, "render.json"),
        ("bench_hub.py", [*common, *(["--git-daemon"] if args.git_daemon else [])], "hub.json"),
    ]
    if args.only is not None:
        runs = [r for r in runs if r[0] == f"bench_{args.only}.py"]
    failed = 0
    for script, extra, json_name in runs:
        if args.json_dir is not None:
            args.json_dir.mkdir(parents=True, exist_ok=True)
            extra = [*extra, "--json", str(args.json_dir / json_name)]
        print(f"\n## {script}\n", flush=True)
        done = subprocess.run([sys.executable, str(HERE / script), *extra], check=False)
        failed += done.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""The output-shape benchmark: parts of the tree are told apart, distinct bytes counted once,
and a cold pass plus a restart over its output run end to end (the restart identical)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.bench_shape import category, sizes
from benchmarks.generate import FleetSize, build_fleet, write_fleet

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("path", "part"),
    [
        ("clusters/c1/index.yaml", "clusterIndex"),
        ("clusters/c1/web/index.yaml", "placementIndex"),
        ("clusters/c1/web/configmap_web_a.yaml", "manifests"),
        ("status/placements/web.yaml", "placementStatus"),
        ("status/clusters/c1.yaml", "status"),
        ("state/placements/web.yaml", "state"),
    ],
)
def test_category(path: str, part: str) -> None:
    assert category(path) == part


def test_sizes_count_distinct_contents_once() -> None:
    got = sizes({"clusters/a/web/index.yaml": b"x" * 10, "clusters/b/web/index.yaml": b"x" * 10})
    assert got == {"placementIndex": {"files": 2, "MB": 0.0, "distinctMB": 0.0}}


def test_cold_and_restart_run(tmp_path: Path) -> None:
    write_fleet(build_fleet(FleetSize(6, 4, 20, 2), seed=2), tmp_path / "fleet")
    argv = [sys.executable, str(ROOT / "benchmarks/bench_shape.py"), str(tmp_path / "fleet")]
    done = subprocess.run([*argv, str(tmp_path / "out"), "--restart"], capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stdout)
    assert report["restart"]["identical"] is True
    assert report["cold"]["sizes"]["clusterIndex"]["files"] == 6
    assert "PlacementIndex" in report["cold"]["emitSeconds"]

"""`gitfleet explain placement`: every cluster, picked or not, with the first filter that
rejected it (KubeFleet's reason string), its scores and rank; JSON for machines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "tests/golden/affinity-taints"
SPREAD = ROOT / "tests/golden/pickn-spread"
NOW = "2026-11-21T10:00:00Z"


def explain(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gitfleet", "explain", "placement", *map(str, args), "--now", NOW],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )


def test_explain_names_the_first_failing_filter_for_every_cluster() -> None:
    out = explain(
        "observability", CASE / "fleet", "--cluster-status", CASE / "status", "--output", "json"
    )
    assert out.returncode == 0, out.stderr
    rows = {r["cluster"]: r for r in json.loads(out.stdout)["clusters"]}
    assert sorted(rows) == ["eu-dev-1", "eu-prod-1", "eu-prod-2", "us-prod-1"]
    assert rows["eu-prod-2"]["filter"] == "TaintToleration"
    assert rows["eu-prod-2"]["filterReason"] == (
        "ClusterUnschedulable, taint &{Key:nvidia.com/gpu Value:true Effect:NoSchedule} cannot be tolerated"
    )
    assert rows["eu-dev-1"]["filter"] == "ClusterAffinity"
    assert rows["us-prod-1"]["selected"] and not rows["eu-dev-1"]["selected"]


def test_explain_one_cluster_with_scores_and_rank() -> None:
    out = explain(
        "batch",
        SPREAD / "fleet",
        "--cluster-status",
        SPREAD / "status",
        "--cluster",
        "eu-1",
        "--output",
        "json",
    )
    assert out.returncode == 0, out.stderr
    [row] = json.loads(out.stdout)["clusters"]
    assert row["selected"] and row["rank"] == 2 and row["scores"]["affinity"] == 36


def test_explain_text_and_unknown_names() -> None:
    text = explain("batch", SPREAD / "fleet", "--cluster-status", SPREAD / "status")
    assert text.returncode == 0 and "Placement batch: 2 of 6 cluster(s) selected" in text.stdout
    missing = explain("nope", SPREAD / "fleet")
    assert missing.returncode == 1 and "placement nope is not in the fleet" in missing.stderr
    no_cluster = explain("batch", SPREAD / "fleet", "--cluster", "zz")
    assert no_cluster.returncode == 1 and "cluster zz is not a member" in no_cluster.stderr
    assert "Traceback" not in missing.stderr + no_cluster.stderr

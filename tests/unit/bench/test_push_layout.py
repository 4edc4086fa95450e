"""`benchmarks.push_layout`: the per-cluster-ref layout is made of the same two output commits
(each changed cluster's new tree on its old commit, the rest on its own), sends what the one
branch sends, and the server's check is measured for both layouts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks.hub_checks import OUTPUT_REF, git
from benchmarks.push_layout import (
    CLUSTER_REFS,
    REST_REF,
    measure_layouts,
    per_cluster,
    same_content,
)

_ID = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]


def _output_remote(tmp_path: Path) -> Path:
    """A bare remote whose output branch has two commits: the second changes cluster b's
    file and the status file."""
    work, bare = tmp_path / "work", tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "-b", "gitfleet/rendered", str(work)], check=True)
    files = {"clusters/a/x.yaml": "a", "clusters/b/y.yaml": "b", "clusters/c/z.yaml": "c"}
    files["status/s.yaml"] = "s"
    for version, changed in ((1, files), (2, {"clusters/b/y.yaml": "b2", "status/s.yaml": "s2"})):
        for path, text in changed.items():
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_text(f"{text}\n")
        git(work, "add", "-A", bare=False)
        subprocess.run(["git", *_ID, "-C", str(work), "commit", "-qm", f"v{version}"], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return bare


def test_per_cluster_refs_hold_the_same_trees(tmp_path: Path) -> None:
    bare = _output_remote(tmp_path)
    new = git(bare, "rev-parse", OUTPUT_REF).strip()
    old = git(bare, "rev-parse", f"{new}~1").strip()
    tips = per_cluster(bare, new, old)
    assert len(tips) == 2  # cluster b, and the rest
    assert (
        git(bare, "rev-parse", f"{tips[0]}^{{tree}}").strip()
        == git(bare, "rev-parse", f"{new}:clusters/b").strip()
    )
    assert (
        git(bare, "rev-parse", f"{tips[0]}^").strip()
        == git(bare, "rev-parse", f"{CLUSTER_REFS}b").strip()
    )
    assert git(bare, "ls-tree", "--name-only", tips[1]).split() == ["status"]
    assert git(bare, "rev-parse", f"{tips[1]}^").strip() == git(bare, "rev-parse", REST_REF).strip()
    refs = git(bare, "for-each-ref", "--format=%(refname)").split()
    assert OUTPUT_REF not in refs and f"{CLUSTER_REFS}a" in refs
    olds = [line.split()[0] for line in git(bare, "show-ref").splitlines()]
    same_content(bare, new, old, tips, olds)
    with pytest.raises(ValueError, match="differ in what they send"):
        same_content(bare, new, old, tips[:1], olds)  # without the rest: the status file missing


def test_both_layouts_are_measured(tmp_path: Path) -> None:
    bare = _output_remote(tmp_path)
    work = tmp_path / "layouts"
    work.mkdir()
    result = measure_layouts(bare, work, trials=2)
    assert (result["changedClusters"], result["clusters"], result["entries"]) == (1, 3, 4)
    figures = result["figures"]
    assert isinstance(figures, list)
    seen = [(f["layout"], f["graph"], f["tips"], f["refs"]) for f in figures]
    assert seen == [
        ("one branch", False, 1, 1),
        ("one branch", True, 1, 1),
        ("per-cluster refs", False, 2, 4),
        ("per-cluster refs", True, 2, 4),
    ]
    assert all(0 <= f["min_ms"] <= f["median_ms"] <= f["max_ms"] for f in figures)
    assert git(bare, "rev-parse", OUTPUT_REF).strip()  # the measured remote is left as it was
    assert list(work.iterdir()) == []

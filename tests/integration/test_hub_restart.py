"""A restarted hub continues an output branch on a real Git remote from `state/` alone: with
nothing in memory and a new cache directory it commits the very tree the hub that kept running
commits, without parsing the previous output's index or status files; from an output without
`state/prior/` (an older hub's) it parses them and commits the same tree too."""

from __future__ import annotations

import shutil
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler import loop, priorindex, statusdocs
from reconciler.pass_ import PassResult, reconcile
from tests.helpers.gitrepo import OUTPUT, git, list_output
from tests.helpers.hubs import Clock
from tests.integration.test_hub_faults import (
    CONFIGMAP,
    NAMESPACE,
    World,
    format_placement_on,
    rev,
)
from tests.unit.reconciler.test_priorstate import cold_caches

ROLLING = {
    "placements/rolling.yaml": format_placement_on("rolling", "prod").replace(
        'maxUnavailable: "100%"', "maxUnavailable: 1, unavailablePeriodSeconds: 60"
    ),
    "resources/rolling/namespace.yaml": NAMESPACE.format(ns="rolling"),
    "resources/rolling/cm.yaml": CONFIGMAP.format(name="cm", ns="rolling", rev=0),
}


def reconcile_with_records(*args: Any, **kwargs: Any) -> PassResult:
    """The pass as it is: it writes `state/prior/` from its own output."""
    result = reconcile(*args, **kwargs)
    assert any(p.startswith("state/prior/") for p in result.files)
    return result


def reconcile_without_records(*args: Any, **kwargs: Any) -> PassResult:
    """The pass of a hub from before `state/prior/`."""
    result = reconcile(*args, **kwargs)
    files = {p: d for p, d in result.files.items() if not p.startswith("state/prior/")}
    return replace(result, files=files)


def _refused(*_args: object) -> None:
    raise AssertionError("the restarted hub parsed the previous index or status files")


def _tree(remote: Path) -> str | None:
    return rev(remote, f"refs/heads/{OUTPUT}^{{tree}}")


def _snapshots(remote: Path) -> dict[str, int]:
    """cluster -> the resource snapshot its index gives it of the `rolling` placement."""
    out = {}
    for cluster in ("east", "west"):
        doc = yaml.safe_load(git(remote, "show", f"{OUTPUT}:clusters/{cluster}/index.yaml"))
        row = next(r for r in doc["placements"] if r["key"] == "rolling")
        out[cluster] = int(row["resourceSnapshotIndex"])
    return out


@pytest.mark.parametrize("records", [True, False], ids=["from-state", "older-output"])
def test_a_restarted_hub_commits_the_tree_of_the_hub_that_kept_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, records: bool
) -> None:
    monkeypatch.setattr(loop, "reconcile", reconcile_with_records)
    world, clock = World.create(tmp_path), Clock()
    world.commit(ROLLING, "a placement that rolls out one cluster at a time")
    running = world.hub("running", clock)
    with monkeypatch.context() as older:
        if not records:
            older.setattr(loop, "reconcile", reconcile_without_records)
        assert running.run_once().outcome == "committed"
    copy = tmp_path / "copy.git"  # the same remote, for the hub that restarts
    shutil.copytree(world.remote, copy)
    assert any(p.startswith("state/prior/") for p in list_output(copy)) is records
    world.edit(1)
    world.commit(
        {"resources/rolling/cm.yaml": CONFIGMAP.format(name="cm", ns="rolling", rev=1)}, "roll"
    )
    git(world.work, "push", "-q", str(copy), "HEAD:refs/heads/main")
    seen = []
    for step in range(2):  # mid-rollout (one cluster keeps its previous index row), then done
        clock.now += timedelta(minutes=5)
        assert running.run_once().outcome == "committed"
        cold_caches()  # a new process: nothing derived or emitted yet
        with monkeypatch.context() as patched:
            if records or step:
                patched.setattr(priorindex, "parsed_prior_index", _refused)
                patched.setattr(statusdocs, "status_conditions", _refused)
            restarted = loop.Hub(
                loop.HubConfig(str(copy), tmp_path / f"restarted-{step}"), clock=clock
            )
            assert restarted.run_once().outcome == "committed"
        assert _tree(copy) == _tree(world.remote)
        seen.append(_snapshots(copy))
        cold_caches()
    assert sorted(seen[0].values()) == [0, 1] and set(seen[1].values()) == {1}

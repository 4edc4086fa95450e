"""A ClusterIndex row without `applyStrategy` (the hub leaves the default out,
`gitfleet.api.indexrow`) is applied with the default strategy, exactly as a row that spells the
default out (the older shape); a row with another strategy is not."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from gitfleet.agent.memory import InMemoryCluster
from gitfleet.agent.run import run_once
from gitfleet.api.indexrow import DEFAULT_APPLY_STRATEGY
from gitfleet.api.output import cluster_index_path
from gitfleet.load.yamlio import dump_yaml

from .conftest import COMMIT, NOW, cm, directory, ns, options
from .test_run import placement


def _spelled_out(files: dict[str, bytes]) -> dict[str, bytes]:
    """`files` with the cluster index in the older shape (the default apply strategy written)."""
    path = cluster_index_path("c1")
    doc = yaml.safe_load(files[path])
    for row in doc["placements"]:
        row.setdefault("applyStrategy", dict(DEFAULT_APPLY_STRATEGY))
    return {**files, path: dump_yaml(doc).encode()}


# strategy the hub gives (None: none) -> the index keeps the field, the takeover failure reason.
CASES: list[tuple[str, dict[str, Any] | None, bool, bool, str | None]] = [
    ("no applyStrategy", None, False, False, None),
    ("the default, left out", dict(DEFAULT_APPLY_STRATEGY), False, False, None),
    ("the default spelled out (older shape)", None, True, True, None),
    ("IfNoDiff kept", {"whenToTakeOver": "IfNoDiff"}, False, True, "FailedToTakeOver"),
]


@pytest.mark.parametrize(
    ("what", "strategy", "old", "listed", "reason"), CASES, ids=[c[0] for c in CASES]
)
def test_a_row_without_apply_strategy_applies_with_the_default(
    what: str, strategy: dict[str, Any] | None, old: bool, listed: bool, reason: str | None
) -> None:
    cluster = InMemoryCluster()  # an object of the placement someone else made, other content
    cluster.apply(ns("app"), field_manager="kubectl", force=False, dry_run=False)
    cluster.apply(cm("a", k="other"), field_manager="kubectl", force=False, dry_run=False)
    files = directory("c1", {"app": [ns("app"), cm("a", k="v")]}, strategy=strategy)
    if old:
        files = _spelled_out(files)
    assert (b"applyStrategy" in files[cluster_index_path("c1")]) == listed, what
    report = run_once(cluster, "c1", files, COMMIT, None, NOW, options())
    failed = placement(report, "app").failed_placements
    assert [f.condition.reason for f in failed] == ([reason] if reason else []), what
    live = cluster.get("v1", "ConfigMap", "app", "a")
    assert live is not None
    assert live["data"] == ({"k": "other"} if reason else {"k": "v"}), what  # default: taken over

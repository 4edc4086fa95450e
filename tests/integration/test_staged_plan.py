"""`gitfleet plan` on a pull request that adds a staged update run: stages with their clusters in
order, the gates, and a Mermaid flowchart in the markdown comment."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from gitfleet import service
from reconciler.planreport import to_markdown, to_text
from tests.integration.test_staged_e2e import CLUSTER, LABELS, PLACEMENT, RESOURCES, ROLLOUT, git


def test_plan_previews_a_new_run(tmp_path: Path) -> None:
    work = tmp_path / "fleet"
    for folder in ("clusters", "resources", "placements", "rollouts"):
        (work / folder).mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    for name, env in LABELS.items():
        (work / "clusters" / f"{name}.yaml").write_text(CLUSTER.format(name=name, env=env))
    (work / "resources/shop.yaml").write_text(RESOURCES)
    (work / "placements/shop.yaml").write_text(PLACEMENT)
    git(work, "add", "-A")
    git(work, "commit", "-qm", "base")
    git(work, "checkout", "-q", "-b", "release")
    (work / "rollouts/release.yaml").write_text(ROLLOUT)
    git(work, "add", "-A")
    git(work, "commit", "-qm", "release v2")
    now = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
    result = service.plan_revisions(work, "main", "release", now)
    text = to_text(result.plan, result.base, result.head)
    assert "staged update run release: placement shop, strategy three-stages, state Run" in text
    assert "  stage staging: stg1 (new -> 0)" in text
    assert "  gate: TimedWait 10m after staging" in text
    assert "  stage prod: prod1 (new -> 0), prod2 (new -> 0)" in text
    markdown = to_markdown(result.plan, result.base, result.head)
    assert "```mermaid" in markdown
    assert 's2["prod: 2 cluster(s)"]' in markdown

"""`gitfleet plan` on a pull request that adds a staged update run: stages with their clusters in
order, the gates, and a Mermaid flowchart in the markdown comment."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gitfleet import service
from reconciler.planreport import to_markdown, to_text
from tests.helpers.fleetfiles import format_cluster, write_tree
from tests.helpers.gitrepo import commit_all, git, init_work
from tests.integration.test_staged_e2e import LABELS, PLACEMENT, RESOURCES, ROLLOUT


def test_plan_previews_a_new_run(tmp_path: Path) -> None:
    work = init_work(tmp_path / "fleet")
    files = {f"clusters/{name}.yaml": format_cluster(name, env) for name, env in LABELS.items()}
    write_tree(work, {**files, "resources/shop.yaml": RESOURCES, "placements/shop.yaml": PLACEMENT})
    commit_all(work, "base")
    git(work, "checkout", "-q", "-b", "release")
    write_tree(work, {"rollouts/release.yaml": ROLLOUT})
    commit_all(work, "release v2")
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

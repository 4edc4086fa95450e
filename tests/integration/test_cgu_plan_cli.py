"""`gitfleet plan` on a pull request that adds a ClusterGroupUpgrade (real git, real CLI): the
comment shows its batches, the label ops it would record and a warning that merging starts it."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.integration.fleet_helpers import NOW, ROOT, commit_fleet, git, run_cli

EXAMPLE = ROOT / "examples" / "cluster-group-upgrade"


def test_plan_shows_batches_of_an_added_cgu(tmp_path: Path) -> None:
    base = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, base)
    cgu = base / "rollouts" / "upgrade-web.yaml"
    text = cgu.read_text()
    cgu.unlink()
    repo = tmp_path / "repo"
    commit_fleet(base, repo)
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "rollouts").mkdir(exist_ok=True)
    (repo / "rollouts" / "upgrade-web.yaml").write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add a CGU")
    result = run_cli(
        repo, "plan", "--base", "main", "--head", "pr", "--now", NOW, "--output", "markdown"
    )
    assert result.code == 0, result.output
    out = result.stdout
    assert "ClusterGroupUpgrade `default/upgrade-web` (added)" in out
    assert "**Warning: merging this starts the upgrade (enable is true)**" in out
    assert "- batch 1: canary-1" in out
    assert "- batch 2: prod-1 prod-2 prod-3" in out and "- batch 3: prod-4 prod-5 prod-6" in out
    # only the canary gets the placement in the first pass after the merge
    assert "canary-1" in out and "| `web` |" in out

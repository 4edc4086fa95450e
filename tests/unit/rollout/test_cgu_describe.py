"""`gitfleet status cgu` and `gitfleet explain distribution` text (reconciler.describe)."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from gitfleet.cli import main
from reconciler.describe import describe_group_upgrade
from tests.unit.distribute.rd_helpers import rd, subset, write_fleet
from tests.unit.rollout.cgu_helpers import Fleet, at, cgu


def test_status_cgu_shows_plan_progress_and_canary() -> None:
    f = Fleet([cgu(clusters=list("abcde"), remediationStrategy={"canaries": ["d"]})])
    f.step(at())
    doc = yaml.safe_load(f.output["status/clustergroupupgrades/default/cgu.yaml"])
    text = describe_group_upgrade(doc)
    assert "batch 1 (canary): d  <- current" in text
    assert "batch 2: a b" in text and "batch 3: c e" in text
    assert "Remediating non-compliant policies" in text
    assert "ClusterResourcePlacement web -> resource snapshot 2" in text


def test_status_cgu_from_a_render_directory(tmp_path: Path) -> None:
    f = Fleet([cgu(enable=False)])
    f.step(at())
    for path, data in f.output.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (tmp_path / ".gitfleet-output").write_text("")
    result = CliRunner().invoke(main, ["status", "cgu", "cgu", "--repo", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "NotEnabled" in result.output
    missing = CliRunner().invoke(main, ["status", "cgu", "nope", "--repo", str(tmp_path)])
    assert missing.exit_code != 0 and "default/nope has no status" in missing.output


def test_explain_distribution(tmp_path: Path) -> None:
    spec = {
        "replicas": 10,
        "topology": {
            "subsets": [
                subset("eu", "eu", replicas=6),
                subset("us", "us", replicas="40%"),
                subset("ap", "ap"),
            ]
        },
    }
    write_fleet(tmp_path / "fleet", [rd(spec)])
    result = CliRunner().invoke(
        main,
        [
            "explain",
            "distribution",
            "web",
            str(tmp_path / "fleet"),
            "-n",
            "shop",
            "--now",
            "2026-01-01T00:00:00Z",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Subset us: 4 replicas (replicas 40% of 10 = 4)" in result.output
    assert "us-3: 2" in result.output and "Unassigned" not in result.output
    missing = CliRunner().invoke(main, ["explain", "distribution", "web", str(tmp_path / "fleet")])
    assert missing.exit_code != 0 and "give its namespace with -n" in missing.output

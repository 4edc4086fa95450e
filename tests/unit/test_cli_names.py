"""`--cluster`, `--output-branch` and `--source-branch` are validated as the names they become
(a directory and a status branch; a branch) before anything runs: exit 2 with one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gitfleet.cli import main


@pytest.mark.parametrize(
    "cluster", ["../other", "Prod", "a_b", "-rm", "x" * 64, "c1/../../main", "", "c1 "]
)
def test_agent_cluster_must_be_a_dns_label(cluster: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["agent", "--repo", str(tmp_path), "--cluster", cluster, "--once"]
    )
    assert result.exit_code == 2, result.output
    assert "--cluster" in result.output


@pytest.mark.parametrize(
    "branch",
    ["-evil", "a..b", "x.lock", "gitfleet/status/c1", "a b", "refs/../x", ".hidden", "main"],
)
def test_output_branch_is_a_valid_branch_of_its_own(branch: str, tmp_path: Path) -> None:
    args = ["reconcile", "--repo", str(tmp_path), "--once", "--output-branch", branch]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "--output-branch" in result.output


def test_source_branch_is_validated(tmp_path: Path) -> None:
    args = ["reconcile", "--repo", str(tmp_path), "--once", "--source-branch", "-x"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "--source-branch" in result.output

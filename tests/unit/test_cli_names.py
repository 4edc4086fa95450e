"""`--cluster`, `--output-branch`, `--source-branch` and the manifests' `--secret` are validated as
the names they become (a directory and a status branch; a branch; a Secret name) before anything
runs: exit 2 with one clear line."""

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


MANIFESTS = {
    "agent": ["agent", "manifests", "--cluster", "eu-1", "--repo", "ssh://git@h/fleet.git"],
    "hub": ["reconcile", "manifests", "--repo", "ssh://git@h/fleet.git"],
}


@pytest.mark.parametrize("command", sorted(MANIFESTS))
@pytest.mark.parametrize(
    "secret", ["Git_Creds", "git creds", "-rf", "../x", "gitfleet-", ".git", "", "x" * 254]
)
def test_manifests_secret_must_be_a_secret_name(command: str, secret: str) -> None:
    result = CliRunner().invoke(main, [*MANIFESTS[command], "--secret", secret])
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--secret'" in result.output, result.output
    rule = "no more than 253 characters" if len(secret) > 253 else "RFC 1123 subdomain"
    assert rule in result.output


@pytest.mark.parametrize("command", sorted(MANIFESTS))
@pytest.mark.parametrize("secret", ["git-creds", "fleet.git-creds", "a" * 253])
def test_manifests_mount_a_valid_secret_name(command: str, secret: str) -> None:
    result = CliRunner().invoke(main, [*MANIFESTS[command], "--secret", secret])
    assert result.exit_code == 0, result.output
    assert f"secretName: {secret}\n" in result.output

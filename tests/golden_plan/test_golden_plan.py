"""Golden output of `gitfleet plan` (markdown, JSON, text) for a pull request on a small fleet.

`base/` is committed on `main`; `head/` holds the files the `pr` branch changes on top of it: a
ConfigMap edit, the `tools` placement gaining cluster `east` (PickFixed), and new Secret values.
The CLI runs as a subprocess with a fixed `--now`; commit ids are replaced by `<base>`/`<head>`
before comparing with `expected/`. No Secret value (encoded or decoded, old or new) may appear.
Regenerate with `GITFLEET_UPDATE_GOLDEN=1`.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.integration.fleet_helpers import GIT_IDENTITY, NOW, run_cli

HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "expected"
UPDATE = os.environ.get("GITFLEET_UPDATE_GOLDEN") == "1"
DATES = {"GIT_AUTHOR_DATE": "2026-11-20T09:00:00Z", "GIT_COMMITTER_DATE": "2026-11-20T09:00:00Z"}
SECRETS = ["hunter2-old-password", "s3cr3t-new-password", "plain-old-token-value"]
SECRETS += ["plain-new-token-value"]
SECRETS += [base64.b64encode(s.encode()).decode() for s in SECRETS[:2]]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *GIT_IDENTITY, "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **DATES},
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A fleet repository with `main` (base/) and `pr` (head/ on top); (path, base id, head id)."""
    root = tmp_path_factory.mktemp("plan") / "fleet"
    shutil.copytree(HERE / "base", root, copy_function=shutil.copy)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fleet")
    git(root, "checkout", "-q", "-b", "pr")
    # fresh mtimes: a same-size edit with a copied mtime would look unchanged to git's stat cache
    shutil.copytree(HERE / "head", root, dirs_exist_ok=True, copy_function=shutil.copy)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "maintenance mode, tools on east, rotate creds")
    git(root, "checkout", "-q", "main")
    return root, git(root, "rev-parse", "main"), git(root, "rev-parse", "pr")


def plan(repo: tuple[Path, str, str], fmt: str) -> str:
    root, base, head = repo
    result = run_cli(root, "plan", "--base", "main", "--head", "pr", "--now", NOW, "--output", fmt)
    assert result.code == 0, result.output
    return result.stdout.replace(base, "<base>").replace(head, "<head>")


def placeholders(text: str, repo: tuple[Path, str, str]) -> str:
    _, base, head = repo
    return text.replace(base[:12], "<base>").replace(head[:12], "<head>")


@pytest.mark.parametrize("fmt", ["markdown", "json", "text"])
def test_plan_matches_golden(repo: tuple[Path, str, str], fmt: str) -> None:
    got = placeholders(plan(repo, fmt), repo)
    name = {"markdown": "plan.md", "json": "plan.json", "text": "plan.txt"}[fmt]
    if UPDATE:
        (EXPECTED / name).write_text(got)
    assert got == (EXPECTED / name).read_text()
    leaked = [s for s in SECRETS if s in got]
    assert not leaked, f"Secret values in the {fmt} plan: {leaked}"


def test_plan_json_says_what_changed(repo: tuple[Path, str, str]) -> None:
    doc = yaml.safe_load(plan(repo, "json"))
    assert (doc["base"], doc["head"], doc["errors"]) == ("<base>", "<head>", [])
    by_key = {p["placement"]: p for p in doc["placements"]}
    assert sorted(by_key) == ["tools", "web"]
    assert (by_key["tools"]["clustersGained"], by_key["tools"]["clustersLost"]) == (["east"], [])
    assert sorted(by_key["tools"]["clusters"]) == ["east"]
    web = by_key["web"]["clusters"]
    assert sorted(web) == ["east", "west"]
    changes = {(o["file"], o["change"]) for o in web["east"]}
    assert changes == {
        ("configmap_web_settings.yaml", "changed"),
        ("secret_web_creds.yaml", "changed"),
    }

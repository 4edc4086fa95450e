"""A new user's first hour, through the real CLI: a clone that only has remote-tracking branches
(`status`, `history`, `--fetch`), revisions people type (`plan --base HEAD~1`), `init` into an
empty git repository and with `--git`, and the template CI's pinned install.

Every run asserts that no Python traceback and no raw `fatal:` git message reaches the user.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.integration.fleet_helpers import (
    NOW,
    QUICKSTART,
    ROOT,
    Result,
    commit_fleet,
    git,
    run_cli,
)

WORKFLOW = ROOT / "fleet-repo-template/.github/workflows/validate.yaml"


def cli(cwd: Path, *args: str | Path) -> Result:
    result = run_cli(cwd, *args)
    assert "fatal:" not in result.output, result.output
    return result


@pytest.fixture()
def hub(tmp_path: Path) -> dict[str, Path]:
    """A bare `origin` with the quickstart on main, reconciled once; a fresh clone of it."""
    work = tmp_path / "work"
    commit_fleet(QUICKSTART, work)
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(origin)], check=True)
    done = cli(tmp_path, "reconcile", "--repo", origin, "--once", "--cache-dir", tmp_path / "hub")
    assert done.code == 0, done.output
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    return {"tmp": tmp_path, "work": work, "origin": origin, "clone": clone}


# --- 2. status and history from a normal clone ----------------------------------------------


def test_the_clone_has_the_output_only_as_a_remote_tracking_branch(hub: dict[str, Path]) -> None:
    refs = git(hub["clone"], "for-each-ref", "--format=%(refname)")
    assert "refs/remotes/origin/gitfleet/rendered" in refs
    assert "refs/heads/gitfleet/rendered" not in refs


def test_status_and_history_work_in_a_fresh_clone(hub: dict[str, Path]) -> None:
    clone, cache = hub["clone"], hub["tmp"] / "cache"
    placement = cli(clone, "status", "placement", "web", "--cache-dir", cache)
    assert placement.code == 0, placement.output
    assert "web" in placement.stdout and "eu-1" in placement.stdout
    cluster = cli(clone, "status", "cluster", "eu-1", "--repo", ".", "--cache-dir", cache)
    assert cluster.code == 0, cluster.output
    history = cli(clone, "history", "--repo", ".", "--cache-dir", cache)
    assert history.code == 0, history.output
    assert "gitfleet:" in history.stdout and "no reconciler commits" not in history.stdout


def test_fetch_reads_the_newest_output_from_origin(hub: dict[str, Path]) -> None:
    tmp, work, origin, clone = hub["tmp"], hub["work"], hub["origin"], hub["clone"]
    (work / "clusters/ap-1.yaml").write_text(
        (work / "clusters/eu-1.yaml").read_text().replace("eu-1", "ap-1")
    )
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "add ap-1")
    git(work, "push", "-q", str(origin), "main")
    assert cli(tmp, "reconcile", "--repo", origin, "--once", "--cache-dir", tmp / "hub").code == 0
    stale = cli(clone, "status", "cluster", "ap-1", "--cache-dir", tmp / "cache")
    assert stale.code == 1 and "ap-1 has no status" in stale.stderr
    fresh = cli(clone, "status", "cluster", "ap-1", "--fetch", "--cache-dir", tmp / "cache")
    assert fresh.code == 0, fresh.output
    log = cli(clone, "history", "--cluster", "ap-1", "--fetch", "--cache-dir", tmp / "cache")
    assert log.code == 0 and "ap-1" in log.stdout, log.output


@pytest.mark.parametrize("command", ["status", "history"])
def test_a_clone_without_output_gets_a_one_line_hint(tmp_path: Path, command: str) -> None:
    work = tmp_path / "work"
    commit_fleet(QUICKSTART, work)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(work), str(clone)], check=True)
    args = ["placement", "web"] if command == "status" else []
    result = cli(clone, command, *args, "--cache-dir", tmp_path / "cache")
    assert result.code == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "gitfleet/rendered" in lines[0] and "hint:" in lines[0]


@pytest.mark.parametrize("command", ["status", "history"])
def test_a_folder_that_is_not_a_repository_is_named(tmp_path: Path, command: str) -> None:
    (tmp_path / "plain").mkdir()
    args = ["placement", "web"] if command == "status" else []
    result = cli(tmp_path, command, *args, "--repo", "plain", "--cache-dir", tmp_path / "c")
    assert result.code == 1
    assert "plain is neither a git repository" in result.stderr


# --- 3. revisions people type -----------------------------------------------------------------


@pytest.fixture()
def two_commits(tmp_path: Path) -> Path:
    repo = tmp_path / "fleet"
    commit_fleet(QUICKSTART, repo)
    path = repo / "resources/web/configmap.yaml"
    path.write_text(path.read_text().replace("data:", "data:\n  added: 'yes'", 1))
    git(repo, "commit", "-qam", "change")
    return repo


@pytest.mark.parametrize("base", ["HEAD~1", "main~1", "HEAD^", "short", "@~"])
def test_plan_accepts_revisions_people_type(two_commits: Path, base: str) -> None:
    if base == "short":
        base = git(two_commits, "rev-parse", "--short=7", "HEAD~1")
    result = cli(two_commits, "plan", "--base", base, "--head", "HEAD", "--now", NOW)
    assert result.code == 0, result.output
    assert "added" in result.stdout


@pytest.mark.parametrize(
    ("rev", "fragment"),
    [
        ("HEAD~9", "unknown revision 'HEAD~9'"),
        ("no-such-branch", "unknown revision 'no-such-branch'"),
        ("--output=x", "invalid revision '--output=x'"),
        ("main..HEAD", "invalid revision 'main..HEAD': a range"),
    ],
)
def test_a_bad_revision_names_itself(two_commits: Path, rev: str, fragment: str) -> None:
    result = cli(two_commits, "plan", f"--base={rev}", "--head", "HEAD", "--now", NOW)
    assert result.code == 1
    assert fragment in result.stderr, result.stderr


def test_validate_ref_accepts_a_relative_revision(two_commits: Path) -> None:
    result = cli(two_commits, "validate", ".", "--ref", "HEAD~1", "--now", NOW)
    assert result.code == 0, result.output


# --- 4. init --------------------------------------------------------------------------------


def test_init_dot_in_an_empty_git_repository(tmp_path: Path) -> None:
    repo = tmp_path / "fleet"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    result = cli(repo, "init", ".")
    assert result.code == 0, result.output
    assert (repo / "fleet.yaml").is_file() and (repo / ".github/workflows/validate.yaml").is_file()
    assert cli(repo, "validate").code == 0


def test_init_git_creates_the_repository(tmp_path: Path) -> None:
    result = cli(tmp_path, "init", "--git", "fleet")
    assert result.code == 0, result.output
    assert git(tmp_path / "fleet", "symbolic-ref", "HEAD") == "refs/heads/main"
    git(tmp_path / "fleet", "add", "-A")
    git(tmp_path / "fleet", "commit", "-q", "-m", "fleet")
    assert cli(tmp_path / "fleet", "validate", ".", "--ref", "HEAD").code == 0


def _site_packages(venv: Path) -> Path:
    found = list(venv.glob("lib/python*/site-packages"))
    assert len(found) == 1, found
    return found[0]


def test_init_after_a_plain_pip_install(tmp_path: Path) -> None:
    """Build a wheel of this checkout, install it (not editable) into a new venv whose only
    other packages are this environment's dependencies, and run `gitfleet init` from there."""
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels, ROOT],
        capture_output=True,
        text=True,
        timeout=600,
    )
    offline = ("Could not find a version that satisfies", "Failed to establish a new connection")
    if built.returncode != 0 and any(text in built.stderr for text in offline):
        pytest.skip("building a wheel needs setuptools from PyPI (or pip's cache); offline")
    assert built.returncode == 0, built.stderr[-2000:]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    deps = Path(yaml.__file__).resolve().parents[1]  # this environment's site-packages
    (_site_packages(venv) / "deps.pth").write_text(f"{deps}\n")
    wheel = next(wheels.glob("gitfleet_k8s-*.whl"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            _site_packages(venv),
            wheel,
        ],
        check=True,
        capture_output=True,
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    home = tmp_path / "elsewhere"
    home.mkdir()
    run = subprocess.run(
        [venv / "bin/python", "-c", "import gitfleet; print(gitfleet.__file__)"],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.startswith(str(venv)), run.stdout  # the installed copy, not the checkout
    init = subprocess.run(
        [venv / "bin/python", "-m", "gitfleet", "init", "myfleet"],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
    )
    assert init.returncode == 0, init.stderr
    assert (home / "myfleet/fleet.yaml").is_file()
    assert (home / "myfleet/.github/workflows/validate.yaml").read_bytes() == WORKFLOW.read_bytes()
    version = subprocess.run(
        [venv / "bin/python", "-m", "gitfleet", "--version"],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "gitfleet-k8s" in version.stdout


# --- 1. the template's CI installs exactly the pinned distribution ---------------------------


def _install_step() -> str:
    doc = yaml.safe_load(WORKFLOW.read_text())
    steps = doc["jobs"]["plan"]["steps"]
    return next(s["run"] for s in steps if s.get("name") == "install gitfleet (pinned)")


def test_the_template_pins_this_distribution_and_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "gitfleet-k8s"
    text = WORKFLOW.read_text()
    assert f"'gitfleet-k8s=={project['version']}'" in text
    assert not re.search(r"pip install\s+['\"]?gitfleet\b(?!-k8s)", text)


@pytest.mark.parametrize(
    ("spec", "installs"),
    [
        ("gitfleet", False),
        ("gitfleet-k8s", False),
        ("gitfleet-k8s>=0.1", False),
        ("gitfleet-k8s @ git+https://example.invalid/gitfleet.git", False),
        ("gitfleet-k8s==0.1.0", True),
        ("gitfleet-k8s @ git+https://example.invalid/gitfleet.git@v0.1.0", True),
    ],
)
def test_the_template_install_step_refuses_unpinned_specs(
    tmp_path: Path, spec: str, installs: bool
) -> None:
    """Run the workflow's install script with a fake `pip` that records its arguments and
    fails (as for a name that cannot be installed): unpinned specs never reach pip, and a
    failing pip fails the step loudly."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "pip.log"
    (bin_dir / "pip").write_text(f'#!/bin/sh\necho "$@" >> {log}\nexit 1\n')
    (bin_dir / "pip").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "GITFLEET_PIP_SPEC": spec}
    done = subprocess.run(["bash", "-c", _install_step()], env=env, capture_output=True, text=True)
    assert done.returncode != 0
    assert "::error::" in done.stdout
    calls = log.read_text().splitlines() if log.exists() else []
    assert calls == ([f"install {spec}"] if installs else [])


# --- --output json ----------------------------------------------------------------------------


def test_status_history_reconcile_and_init_print_json(hub: dict[str, Path]) -> None:
    import json

    tmp, clone, cache = hub["tmp"], hub["clone"], hub["tmp"] / "cache"
    placement = json.loads(
        cli(clone, "status", "placement", "web", "--output", "json", "--cache-dir", cache).stdout
    )
    assert placement["status"]["kind"] == "ClusterResourcePlacement"
    cluster = json.loads(
        cli(clone, "status", "cluster", "eu-1", "--output", "json", "--cache-dir", cache).stdout
    )
    assert cluster["status"]["metadata"]["name"] == "eu-1" and "placements" in cluster["index"]
    log = json.loads(cli(clone, "history", "--output", "json", "--cache-dir", cache).stdout)
    assert log and {"commit", "parents", "author", "subject", "message", "trailers"} <= set(log[0])
    assert "Gitfleet-Source" in log[0]["trailers"]
    args = ["reconcile", "--repo", hub["origin"], "--once", "--output", "json"]
    passed = json.loads(cli(tmp, *args, "--cache-dir", tmp / "hub").stdout)
    assert passed["outcome"] in ("unchanged", "skipped") and passed["errors"] == []
    steps = passed["steps"]  # each step the pass reached, with its seconds
    assert steps[0]["step"] == "fetch" and steps[-1]["step"] == "maintain"
    assert all(s["seconds"] >= 0 and s["cpuSeconds"] >= 0 for s in steps)
    created = json.loads(cli(tmp, "init", "--git", "new", "--output", "json").stdout)
    assert created == {"created": "new", "git": True, "schemas": 20}

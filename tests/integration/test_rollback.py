"""Rollback on real Git: an older resource snapshot is rendered again from its recorded commit.

A ConfigMap is committed as v1, v2 and v3, each deployed by a staged update run (`gitfleet
render --ref ... --now ...`, stepped; a dry run counts every cluster as ready). A fourth run with
`resourceSnapshotIndex: "0"` deploys v1 again through its stages: each cluster's files are then
byte for byte what the pass rendered when v1 was the latest. A RollingUpdate placement pinned with
`gitfleet.io/resource-snapshot-index` rolls back likewise. In a shallow clone the v1 commit is
missing: only that run reports it, the other placement renders on.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result

from gitfleet.cli import main
from gitfleet.repo.gitwrite import Identity, commit_files
from reconciler.history import PIN_ANNOTATION
from tests.helpers.fleetfiles import (
    format_cluster,
    format_pin,
    format_placement,
    format_run,
    format_settings,
    format_two_stages,
    write_tree,
)
from tests.helpers.gitrepo import commit_all, git, init_work

CLUSTERS = {"c1": "staging", "c2": "prod"}


def _format_pin(index: int | None) -> str:
    return format_pin(PIN_ANNOTATION, str(index)) if index is not None else ""


def _commit(repo: Path, version: str, runs: list[str], pin: int | None = None) -> str:
    files = {f"clusters/{name}.yaml": format_cluster(name, env) for name, env in CLUSTERS.items()}
    for ns in ("app", "web"):
        files[f"resources/{ns}.yaml"] = format_settings(ns, "version", version)
    files["placements/app.yaml"] = format_placement("app", "External")
    files["placements/web.yaml"] = format_placement("web", "RollingUpdate", _format_pin(pin))
    docs = [format_two_stages()] + [format_run(r, index="0" if r == "back" else None) for r in runs]
    files["rollouts/release.yaml"] = "---\n".join(docs)
    write_tree(repo, files)
    return commit_all(repo, f"{version} {' '.join(runs)}")


def _world(tmp: Path) -> Path:
    return init_work(tmp / "fleet")


class Renders:
    """`gitfleet render --ref` stepped with an advancing `--now`."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.minute = 0

    def step(self, repo: Path, ref: str) -> Result:
        self.minute += 1
        now = f"2026-11-25T10:{self.minute:02d}:00Z"
        args = ["render", str(repo), "--ref", ref, "--out", str(self.out), "--now", now]
        return CliRunner().invoke(main, args)

    def until_done(self, repo: Path, ref: str, run: str) -> None:
        for _ in range(8):
            result = self.step(repo, ref)
            assert result.exit_code == 0, result.output
            if _succeeded(self.out, run):
                return
        raise AssertionError(f"run {run} did not finish")


def _run_status(out: Path, run: str) -> dict[str, Any]:
    return yaml.safe_load((out / f"status/updateruns/{run}.yaml").read_text())["status"]  # type: ignore[no-any-return]


def _succeeded(out: Path, run: str) -> bool:
    conds = _run_status(out, run).get("conditions") or []
    return any(c["type"] == "Succeeded" and c["status"] == "True" for c in conds)


def _placed(out: Path, cluster: str, key: str) -> dict[str, Any]:
    """The placement's files on a cluster (path -> bytes) and its index entry."""
    folder = out / "clusters" / cluster / key
    files = {p.name: p.read_bytes() for p in sorted(folder.glob("*.yaml"))}
    index = yaml.safe_load((out / "clusters" / cluster / "index.yaml").read_text())
    entry = next(e for e in index["placements"] if e["key"] == key)
    return {"files": files, "entry": entry}


NOW = "2026-11-25T12:00:00Z"


def _publish(repo: Path, out: Path) -> None:
    """The render directory as the repository's output branch (what the hub would push)."""
    files = {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*.yaml"))
        if p.is_file()
    }
    who = Identity("gitfleet", "gitfleet@localhost")
    ref = "refs/heads/gitfleet/rendered"
    assert commit_files(repo, None, files, "render\n", who, ref=ref).changed


def _version(placed: dict[str, Any]) -> str:
    data = placed["files"]["configmap_app_settings.yaml"]
    return str(yaml.safe_load(data)["data"]["version"])


def test_a_staged_run_on_an_older_index_renders_it_from_its_commit(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    renders = Renders(tmp_path / "out")
    v1 = _commit(repo, "v1", ["first"])
    renders.until_done(repo, v1, "first")
    at_v1 = {c: _placed(renders.out, c, "app") for c in CLUSTERS}
    web_v1 = {c: _placed(renders.out, c, "web") for c in CLUSTERS}
    assert _version(at_v1["c1"]) == "v1"
    v2 = _commit(repo, "v2", ["first", "second"])
    renders.until_done(repo, v2, "second")
    v3 = _commit(repo, "v3", ["first", "second", "third"])
    renders.until_done(repo, v3, "third")
    assert {_version(_placed(renders.out, c, "app")) for c in CLUSTERS} == {"v3"}

    back = _commit(repo, "v3", ["first", "second", "third", "back"])
    _publish(repo, renders.out)
    args = ["plan", "--repo", str(repo), "--base", v3, "--head", back]
    plan = CliRunner().invoke(main, [*args, "--state-from", "gitfleet/rendered", "--now", NOW])
    assert plan.exit_code == 0, plan.output
    assert f"rollback: deploys snapshot 0 (commit {v1[:7]}), clusters now at 2" in plan.output
    assert "c1 (2 -> 0 (rollback))" in plan.output
    changed = [line.strip() for line in plan.output.splitlines() if "version: v" in line]
    assert "-  version: v3" in changed and "+  version: v1" in changed
    before = (renders.out).joinpath("clusters/c2/index.yaml").read_bytes()
    first = renders.step(repo, back)
    assert first.exit_code == 0, first.output
    assert _placed(renders.out, "c1", "app") == at_v1["c1"], "c1 has v1's bytes again"
    assert (renders.out / "clusters/c2/index.yaml").read_bytes() == before, "prod waits its stage"
    status = CliRunner().invoke(main, ["status", "updaterun", "back", "--repo", str(renders.out)])
    assert status.exit_code == 0, status.output
    line = f"rollback: deploys snapshot 0 (commit {v1[:7]}), clusters now at 2"
    assert line in status.output
    args = ["status", "updaterun", "back", "--repo", str(renders.out), "--output", "json"]
    as_json = CliRunner().invoke(main, args)
    assert as_json.exit_code == 0, as_json.output
    doc = json.loads(as_json.output)
    assert doc["rollback"] == line
    assert doc["clusterResourceSnapshotIndexes"] == {"c1": 0, "c2": 2}
    assert doc["status"]["status"]["resourceSnapshotIndexUsed"] == "0"
    assert doc["status"]["metadata"]["annotations"] == {"gitfleet.io/resource-snapshot-commit": v1}
    renders.until_done(repo, back, "back")
    assert {c: _placed(renders.out, c, "app") for c in CLUSTERS} == at_v1
    assert _run_status(renders.out, "back")["resourceSnapshotIndexUsed"] == "0"

    # A pin on the RollingUpdate placement rolls it back to its index 0 (v1) too.
    write_tree(
        repo, {"placements/web.yaml": format_placement("web", "RollingUpdate", _format_pin(0))}
    )
    git(repo, "commit", "-qam", "pin web to index 0")
    pinned = git(repo, "rev-parse", "HEAD")
    for _ in range(3):
        assert renders.step(repo, pinned).exit_code == 0
    assert {c: _placed(renders.out, c, "web") for c in CLUSTERS} == web_v1
    state = yaml.safe_load((renders.out / "state/placements/web.yaml").read_text())
    assert [s["index"] for s in state["resourceSnapshots"]] == [0, 1, 2], "history is kept"


def test_a_missing_commit_fails_only_that_run(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    renders = Renders(tmp_path / "out")
    v1 = _commit(repo, "v1", ["first"])
    renders.until_done(repo, v1, "first")
    v2 = _commit(repo, "v2", ["first", "second"])
    renders.until_done(repo, v2, "second")
    _commit(repo, "v3", ["first", "second"])
    _commit(repo, "v3", ["first", "second", "back"])
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True
    )
    result = renders.step(shallow, "HEAD")
    assert result.exit_code == 1
    expected = (
        "ClusterStagedUpdateRun/back: cannot start cluster `c1`: resource snapshot index 0 of "
        f"placement `app` was recorded at commit {v1[:12]}, which is not in this repository"
    )
    assert expected in result.output
    assert result.output.count("is not in this repository") == 1
    assert renders.step(shallow, "HEAD").exit_code == 1, "the next wave of web, same error"
    web = {_version_of(renders.out, c, "web") for c in CLUSTERS}
    assert web == {"v3"}, "the other placement renders on"
    assert _version_of(renders.out, "c1", "app") == "v2", "c1 keeps what it has"


def _version_of(out: Path, cluster: str, key: str) -> str:
    data = (out / "clusters" / cluster / key / f"configmap_{key}_settings.yaml").read_text()
    return str(yaml.safe_load(data)["data"]["version"])

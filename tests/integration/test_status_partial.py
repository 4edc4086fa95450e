"""`gitfleet status` reads only the files it shows (named, through `OutputView`), and shows what
it showed when it read the whole output tree: for every status document of every golden output
and of a rendered fleet with staged update runs, from a render directory and from a real output
branch, compared with the same formatter fed every file of the tree."""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gitfleet import rolloutops, service
from gitfleet.cli import main
from gitfleet.outputread import status_from_files
from gitfleet.repo.gitread import GitTree
from gitfleet.repo.outdir import MARKER
from reconciler.describe import describe_cluster, describe_placement
from reconciler.priorparse import load_bounded

GOLDEN = Path(__file__).parents[1] / "golden"
CASES = sorted(d.name for d in GOLDEN.iterdir() if (d / "expected" / "status").is_dir())
BRANCH = "gitfleet/rendered"
NOW = "2026-11-21T10:00:00Z"
CLUSTERS = {"stg1": "staging", "can1": "canary", "prod1": "prod", "prod2": "prod"}
STAGED = {
    "fleet.yaml": "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata: {name: small}\n"
    "spec: {clusterEligibility: AssumeJoined}\n",
    "resources/shop.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\n"
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\n"
    "data: {version: v2}\n",
    "placements/shop.yaml": """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: shop}
spec:
  resourceSelectors: [{group: "", version: v1, kind: Namespace, name: shop}]
  strategy: {type: External}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourcePlacement
metadata: {name: settings, namespace: shop}
spec:
  resourceSelectors: [{group: "", version: v1, kind: ConfigMap, name: settings}]
  strategy: {type: External}
""",
    "rollouts/runs.yaml": """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateStrategy
metadata: {name: three-stages}
spec:
  stages:
    - name: staging
      labelSelector: {matchLabels: {env: staging}}
      beforeStageTasks: [{type: Approval}]
    - name: prod
      labelSelector: {matchExpressions: [{key: env, operator: In, values: [canary, prod]}]}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata: {name: release}
spec: {placementName: shop, stagedRolloutStrategyName: three-stages, state: Run}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: StagedUpdateStrategy
metadata: {name: two-stages, namespace: shop}
spec:
  stages:
    - name: canary
      labelSelector: {matchExpressions: [{key: env, operator: In, values: [staging, canary]}]}
    - name: prod
      labelSelector: {matchLabels: {env: prod}}
      beforeStageTasks: [{type: Approval}]
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: StagedUpdateRun
metadata: {name: settings-run, namespace: shop}
spec: {placementName: settings, stagedRolloutStrategyName: two-stages, state: Run}
""",
} | {
    f"clusters/{name}.yaml": "apiVersion: cluster.kubernetes-fleet.io/v1beta1\n"
    f"kind: MemberCluster\nmetadata: {{name: {name}, labels: {{env: {env}}}}}\n"
    for name, env in CLUSTERS.items()
}


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def _every_file(root: Path) -> dict[str, bytes]:
    """What `status` used to read: every YAML file of the output."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.yaml")}


def _committed(out: Path, tmp: Path) -> Path:
    """A repository whose output branch holds the files of `out`."""
    repo = tmp / "repo"
    shutil.copytree(out, repo)
    _git(repo, "init", "-q", "-b", BRANCH)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "output")
    return repo


def _staged_output(tmp: Path) -> Path:
    fleet, out = tmp / "fleet", tmp / "out"
    for path, text in STAGED.items():
        (fleet / path).parent.mkdir(parents=True, exist_ok=True)
        (fleet / path).write_text(text)
    for now in ("2026-11-21T10:00:00Z", "2026-11-21T10:05:00Z"):
        done = CliRunner().invoke(main, ["render", str(fleet), "--out", str(out), "--now", now])
        assert done.exit_code == 0, done.output
    return out


def _golden_output(case: str, tmp: Path) -> Path:
    out = tmp / "out"
    shutil.copytree(GOLDEN / case / "expected", out)
    (out / MARKER).write_text("# gitfleet output\n")
    return out


def _documents(files: dict[str, bytes]) -> list[tuple[str, str, str]]:
    """(what, name, namespace) of every status document, and of some that are not there."""
    out = [("placement", "absent", ""), ("cluster", "../status/clusters/x", ""), ("cgu", "x", "")]
    for path in sorted(files):
        parts = path.removesuffix(".yaml").split("/")
        if path.startswith("status/placements/"):
            meta = (load_bounded(files[path]) or {}).get("metadata") or {}
            out.append(("placement", meta.get("name", ""), meta.get("namespace") or ""))
        elif path.startswith("status/clusters/"):
            out.append(("cluster", parts[-1], ""))
        elif path.startswith("status/clustergroupupgrades/"):
            out.append(("cgu", parts[-1], parts[-2]))
    return out


def _shown(files: Any, what: str, name: str, namespace: str) -> Any:
    try:
        return status_from_files(files, what, name, namespace)
    except LookupError as exc:
        return str(exc)


def _read(source: Path | str, what: str, name: str, namespace: str, cache: Path) -> Any:
    try:
        return service.status_document(what, name, namespace, source, BRANCH, cache)
    except LookupError as exc:
        return str(exc)


def _runs(files: dict[str, bytes]) -> list[tuple[str, str]]:
    prefix = "status/updateruns/"
    names = [p.removeprefix(prefix).removesuffix(".yaml") for p in files if p.startswith(prefix)]
    return [(n.split("/")[-1], n.split("/")[0] if "/" in n else "") for n in sorted(names)]


def _check_output(out: Path, tmp: Path) -> None:
    every = _every_file(out)
    repo = _committed(out, tmp)
    documents = _documents(every)
    assert len(documents) > 3
    for what, name, namespace in documents:
        want = _shown(every, what, name, namespace)
        assert _read(out, what, name, namespace, tmp / "c") == want, (what, name)
        assert _read(str(repo), what, name, namespace, tmp / "c") == want, (what, name)
    for name, namespace in _runs(every):
        want = rolloutops.run_document(every, name, namespace)
        for source in (out, str(repo)):
            files = service.updaterun_files(source, BRANCH, tmp / "c", name, namespace)
            assert rolloutops.run_document(files, name, namespace) == want


@pytest.mark.parametrize("case", CASES)
def test_status_of_every_golden_document_is_what_a_full_read_shows(
    case: str, tmp_path: Path
) -> None:
    _check_output(_golden_output(case, tmp_path), tmp_path)


def test_status_of_staged_runs_is_what_a_full_read_shows(tmp_path: Path) -> None:
    out = _staged_output(tmp_path)
    every = _every_file(out)
    assert len(_runs(every)) == 2
    assert any(p.startswith("status/approvals/") for p in every)
    _check_output(out, tmp_path)


def _cli(*args: str) -> str:
    done = CliRunner().invoke(main, ["status", *args])
    assert done.exit_code == 0, done.output
    return done.output


def _same_text(out: Path, repo: Path, cache: list[str], args: list[str], want: str) -> None:
    """The text (as `want`) and the JSON of `status ARGS` from the directory and the branch."""
    assert _cli(*args, "--repo", str(out)) == want
    assert _cli(*args, "--repo", str(repo), *cache) == want
    as_json = _cli(*args, "--repo", str(out), "--output", "json")
    assert _cli(*args, "--repo", str(repo), *cache, "--output", "json") == as_json


def test_status_cli_prints_the_same_from_a_directory_and_a_branch(tmp_path: Path) -> None:
    out = _staged_output(tmp_path)
    every = _every_file(out)
    repo = _committed(out, tmp_path)
    cache = ["--cache-dir", str(tmp_path / "c")]
    for what, name, namespace in [("placement", "shop", ""), ("placement", "settings", "shop")]:
        doc = _shown(every, what, name, namespace)
        _same_text(
            out, repo, cache, [what, name, "-n", namespace], describe_placement(doc["status"])
        )
    doc = _shown(every, "cluster", "can1", "")
    _same_text(out, repo, cache, ["cluster", "can1"], describe_cluster(doc["status"], doc["index"]))
    for name, namespace in _runs(every):
        args = ["updaterun", name, "-n", namespace]
        text = _cli(*args, "--repo", str(out))
        assert text == rolloutops.describe_run(every, name, namespace)
        assert _cli(*args, "--repo", str(repo), *cache) == text


def test_status_reads_only_the_files_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _committed(_staged_output(tmp_path), tmp_path)
    read: list[str] = []
    real = GitTree.read

    def counted(self: GitTree, path: str) -> bytes:
        read.append(path)
        return real(self, path)

    monkeypatch.setattr(GitTree, "read", counted)
    service.status_document("placement", "settings", "shop", str(repo), BRANCH, tmp_path / "c")
    assert read == ["status/placements/shop.settings.yaml"]
    read.clear()
    service.status_document("cluster", "can1", "", str(repo), BRANCH, tmp_path / "c")
    assert read[:2] == ["clusters/can1/index.yaml", "status/clusters/can1.yaml"]
    assert all(p.startswith("clusters/can1/") and p.endswith("/index.yaml") for p in read[2:])
    assert len(read) > 2


def test_plan_state_from_reads_the_output_lazily_with_the_same_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`plan --state-from` hands the pass the output tree as a lazy mapping (as the hub does):
    the plan is the one the whole tree read up front gives."""
    fleet, out = tmp_path / "fleet", tmp_path / "out"
    shutil.copytree(Path(__file__).parents[2] / "examples" / "quickstart", fleet)
    rendered = CliRunner().invoke(main, ["render", str(fleet), "--out", str(out), "--now", NOW])
    assert rendered.exit_code == 0, rendered.output
    output_repo = _committed(out, tmp_path)
    _git(fleet, "init", "-q", "-b", "main")
    _git(fleet, "add", "-A")
    _git(fleet, "commit", "-qm", "v1")
    page = fleet / "resources/web/configmap.yaml"
    page.write_text(page.read_text().replace("Hello", "Hi"))
    _git(fleet, "commit", "-qam", "v2")
    _git(fleet, "fetch", "-q", str(output_repo), f"{BRANCH}:{BRANCH}")
    now = datetime(2026, 11, 21, 10, 10, tzinfo=UTC)
    lazy = service.plan_revisions(fleet, "HEAD~1", "HEAD", now, state_from=BRANCH)
    monkeypatch.setattr(service, "TreeFiles", lambda tree: {p: tree.read(p) for p in tree.files()})
    eager = service.plan_revisions(fleet, "HEAD~1", "HEAD", now, state_from=BRANCH)
    assert lazy == eager
    assert lazy.plan.placements, "the change shows"

"""`plan_changes`: clusters gained/lost and object diffs between two rendered trees; Secret
values never appear in a plan."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from gitfleet.repo.workdir import WorkdirTree
from reconciler.pass_ import reconcile
from reconciler.plan import plan_changes
from reconciler.planreport import to_json, to_markdown, to_text
from reconciler.state import State
from renderers import load_fleet

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 11, 21, 10, tzinfo=UTC)


def render(path: Path) -> dict[str, bytes]:
    return reconcile(load_fleet(WorkdirTree(path)), State(), None, NOW).files


def test_no_change_is_an_empty_plan(tmp_path: Path) -> None:
    files = render(ROOT / "examples/quickstart")
    plan = plan_changes(files, files)
    assert plan.placements == ()
    assert plan.totals()["changed"] == 0


def test_replicas_change_and_new_fixed_cluster(tmp_path: Path) -> None:
    head = tmp_path / "head"
    shutil.copytree(ROOT / "examples/quickstart", head)
    dep = head / "resources/web/deployment.yaml"
    dep.write_text(dep.read_text().replace("replicas: 2", "replicas: 3"))
    fixed = head / "placements/fleet-viewer.yaml"
    fixed.write_text(fixed.read_text().replace("      - us-1\n", "      - us-1\n      - eu-2\n"))
    plan = plan_changes(render(ROOT / "examples/quickstart"), render(head))
    by_key = {p.key: p for p in plan.placements}
    assert by_key["fleet-viewer"].gained == ["eu-2"]
    assert [o.change for o in by_key["fleet-viewer"].clusters["eu-2"]] == ["added"]
    web = by_key["web"]
    assert sorted(web.clusters) == ["eu-1", "eu-2", "us-1"]
    diff = web.clusters["eu-1"][0].diff
    assert "-  replicas: 2" in diff and "+  replicas: 3" in diff
    assert plan.totals() == {
        "placements": 2,
        "added": 1,
        "changed": 3,
        "removed": 0,
        "clusters": 3,
        "errors": 0,
    }
    md = to_markdown(plan, "a" * 40, "b" * 40)
    assert (
        "<details><summary>same change on 3 clusters: eu-1, eu-2, us-1 — "
        "changed deployment.apps_web_frontend.yaml</summary>"
    ) in md
    assert "--- a/clusters/*/web/deployment.apps_web_frontend.yaml" in md
    assert json.loads(to_json(plan, "a", "b"))["totals"]["added"] == 1
    assert "placement fleet-viewer: gained [eu-2]" in to_text(plan, "a", "b")


def secret(value: str) -> bytes:
    return (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: app\n"
        f"stringData:\n  password: {value}\n  user: admin\n"
    ).encode()


def test_secret_values_never_appear_in_a_plan() -> None:
    index = b"apiVersion: gitfleet.io/v1alpha1\nkind: ClusterIndex\nplacements:\n- key: app\n"
    base = {
        "clusters/c1/index.yaml": index,
        "clusters/c1/app/secret_app_db.yaml": secret("hunter2"),
    }
    head = {
        "clusters/c1/index.yaml": index,
        "clusters/c1/app/secret_app_db.yaml": secret("correct-horse"),
    }
    plan = plan_changes(base, head)
    rendered = to_markdown(plan, "a", "b") + to_text(plan, "a", "b") + to_json(plan, "a", "b")
    assert "hunter2" not in rendered and "correct-horse" not in rendered
    assert "password" in rendered and "redacted" in rendered


def test_a_secret_spelled_with_escapes_is_still_redacted() -> None:
    """The Secret check reads a manifest only when it could be one: a kind written with YAML
    escapes (no literal "Secret" in its bytes) is read and redacted too."""
    escaped = secret("hunter2").replace(b"kind: Secret", b'kind: "\\x53ecret"')
    assert b"Secret" not in escaped
    index = b"apiVersion: gitfleet.io/v1alpha1\nkind: ClusterIndex\nplacements:\n- key: app\n"
    base = {"clusters/c1/index.yaml": index, "clusters/c1/app/s.yaml": escaped}
    head = {"clusters/c1/index.yaml": index}
    plan = plan_changes(base, head)
    assert "hunter2" not in to_text(plan, "a", "b") and "redacted" in to_text(plan, "a", "b")


def test_only_the_objects_that_differ_are_listed() -> None:
    """Objects equal on both sides are not listed; added, changed and removed ones are, in
    name order, and a placement's index file is no object."""
    index = b"apiVersion: gitfleet.io/v1alpha1\nkind: ClusterIndex\nplacements:\n- key: app\n"
    same = {"clusters/c1/index.yaml": index, "clusters/c1/app/a.yaml": b"a: 1\n"}
    base = same | {"clusters/c1/app/c.yaml": b"c: 1\n", "clusters/c1/app/index.yaml": b"x: 1\n"}
    head = same | {"clusters/c1/app/c.yaml": b"c: 2\n", "clusters/c1/app/b.yaml": b"b: 1\n"}
    base |= {"clusters/c1/app/d.yaml": b"d: 1\n"}
    [placement] = plan_changes(base, head).placements
    listed = [(c.file, c.change) for c in placement.clusters["c1"]]
    assert listed == [("b.yaml", "added"), ("c.yaml", "changed"), ("d.yaml", "removed")]

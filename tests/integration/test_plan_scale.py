"""`gitfleet plan --output markdown` on 200 clusters, through the real CLI: one placement makes
the same change on every cluster (shown once, with the list of clusters), another makes a
different change per cluster (an override puts the cluster's name next to the changed line), so
the comment must be cut. The markdown is parsed (markdown-it) to check it is well formed: no
code block or <details> left open, under GitHub's comment size, and a closing truncation line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.helpers.fleetfiles import format_placement
from tests.integration.fleet_helpers import NOW, git, run_cli, write_files

CLUSTERS = [f"c-{i:03d}" for i in range(200)]
GITHUB_COMMENT_LIMIT = 65_536
BIG = "x" * 600

NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n"
CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: {ns}
data:
  mode: {mode}
"""
PICK_ALL = "  policy:\n    placementType: PickAll\n"
OVERRIDE = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourceOverride
metadata:
  name: who
  namespace: per
spec:
  resourceSelectors:
    - {group: "", version: v1, kind: ConfigMap, name: settings}
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector: {matchLabels: {env: prod}}
        jsonPatchOverrides:
          - {op: add, path: /data/who, value: "${MEMBER-CLUSTER-NAME}"}
"""


def fleet_files(mode: str) -> dict[str, str]:
    files = {
        "fleet.yaml": "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: big\n"
    }
    for name in CLUSTERS:
        files[f"clusters/{name}.yaml"] = (
            "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
            f"metadata:\n  name: {name}\n  labels: {{env: prod}}\n"
        )
    for ns in ("common", "per"):
        files[f"placements/{ns}.yaml"] = format_placement(ns, spec=PICK_ALL)
        files[f"resources/{ns}/namespace.yaml"] = NAMESPACE.format(name=ns)
        value = mode if ns == "common" else f"{mode}-{BIG}"
        files[f"resources/{ns}/configmap.yaml"] = CONFIGMAP.format(ns=ns, mode=value)
    files["overrides/who.yaml"] = OVERRIDE
    return files


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scale") / "fleet"
    write_files(root, fleet_files("live"))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fleet")
    write_files(root, fleet_files("maintenance"))
    git(root, "commit", "-qam", "maintenance")
    return root


def plan(repo: Path, *extra: str) -> str:
    result = run_cli(
        repo,
        "plan",
        "--base",
        "HEAD~1",
        "--head",
        "HEAD",
        "--now",
        NOW,
        "--output",
        "markdown",
        *extra,
        timeout=300,
    )
    assert result.code == 0, result.output
    return result.stdout


def check_well_formed(text: str) -> None:
    """Every fence closed, <details> balanced and never inside a code block."""
    tokens = MarkdownIt("commonmark").parse(text)
    fences = [t for t in tokens if t.type == "fence"]
    assert fences
    for fence in fences:
        assert "<details>" not in fence.content and "</details>" not in fence.content
        assert fence.info == "diff"
    fence_lines = re.findall(r"^(`{3,})", text, flags=re.M)
    assert len(fence_lines) == 2 * len(fences), "a code block was left open"
    html = "".join(t.content for t in tokens if t.type == "html_block")
    assert html.count("<details>") == html.count("</details>") > 0


def test_a_200_cluster_plan_is_cut_between_sections(repo: Path) -> None:
    text = plan(repo)
    assert len(text) <= GITHUB_COMMENT_LIMIT
    check_well_formed(text)
    same = re.findall(r"<summary>same change on (\d+) clusters: ([^<]*)</summary>", text)
    assert same == [
        (
            "200",
            "c-000, c-001, c-002, c-003, c-004, … (+195) — changed configmap_common_settings.yaml",
        )
    ]
    assert "Clusters: " + ", ".join(CLUSTERS) in text
    last = text.rstrip("\n").splitlines()[-1]
    assert last.startswith("**plan truncated**: ") and "job artifact" in last
    assert "<summary>c-000: changed configmap_per_settings.yaml</summary>" in text
    assert "<summary>c-199:" not in text  # cut before the last cluster


def test_the_full_plan_has_every_cluster(repo: Path) -> None:
    text = plan(repo, "--max-chars", "0")
    check_well_formed(text)
    assert "plan truncated" not in text
    assert all(
        f"<summary>{c}: changed configmap_per_settings.yaml</summary>" in text for c in CLUSTERS
    )
    assert len(text) > GITHUB_COMMENT_LIMIT


def test_a_small_limit_still_closes_every_block(repo: Path) -> None:
    text = plan(repo, "--max-chars", "5000")
    assert len(text) <= 5000
    check_well_formed(text)
    assert "plan truncated" in text.splitlines()[-1]

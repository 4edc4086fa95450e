"""Kustomize renderer: offline builds with kubectl, and the rules checked before kubectl runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitfleet.api.limits import Limits
from gitfleet.repo.tree import Tree
from renderers.base import RenderContext, RenderResult
from renderers.kustomize import KustomizeRenderer
from renderers.registry import plan_units
from tests.unit.renderers.render_helpers import (
    KUBECTL,
    make_git_tree,
    make_tree,
    messages,
    needs_kubectl,
    one_error,
    write_files,
)

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
"""
PATCH = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n"
OVERLAY = "resources:\n- ../../base\nnamePrefix: prod-\npatches:\n- path: replicas.yaml\n"
APP = {
    "resources/web/base/kustomization.yaml": "resources:\n- deployment.yaml\n",
    "resources/web/base/deployment.yaml": DEPLOY,
    "resources/web/overlays/prod/kustomization.yaml": OVERLAY,
    "resources/web/overlays/prod/replicas.yaml": PATCH,
}
BAD = "resources/bad/kustomization.yaml"


def render(tree: Tree, kubectl: str | None = None) -> RenderResult:
    units = [u for u in plan_units(tree, Limits()).units if u.renderer == "kustomize"]
    return KustomizeRenderer(kubectl).render(units, RenderContext(tree, Limits()))


def check_overlay(result: RenderResult) -> None:
    docs, errors = result
    assert errors == [], messages(errors)
    (doc,) = docs
    assert doc.file == "resources/web/overlays/prod/kustomization.yaml"
    assert doc.renderer == "kustomize"
    assert doc.body["metadata"]["name"] == "prod-web"
    assert doc.body["spec"]["replicas"] == 3


@needs_kubectl
def test_overlay_with_base_and_patch(tmp_path: Path) -> None:
    check_overlay(render(make_tree(tmp_path, APP)))


@needs_kubectl
def test_overlay_from_a_git_commit(tmp_path: Path) -> None:
    tree = make_git_tree(tmp_path, APP)
    try:
        check_overlay(render(tree))
    finally:
        tree.close()


@pytest.mark.parametrize(
    ("kustomization", "extra", "line", "field", "expected"),
    [
        pytest.param(
            "resources:\n- ok.yaml\n- github.com/org/repo//deploy?ref=v1.0\n",
            {},
            3,
            "resources[1]",
            "remote resources are not allowed",
            id="remote-base-go-getter",
        ),
        pytest.param(
            "resources:\n- ok.yaml\n- https://example.com/app.yaml\n",
            {},
            3,
            "resources[1]",
            "remote resources are not allowed",
            id="remote-url",
        ),
        pytest.param(
            "bases:\n- git@github.com:org/repo.git\n",
            {},
            2,
            "bases[0]",
            "remote resources are not allowed",
            id="remote-scp-base",
        ),
        pytest.param(
            "resources:\n- gitlab.com/org/repo/deploy\n",
            {},
            2,
            "resources[0]",
            "remote resources are not allowed",
            id="remote-host-without-scheme",
        ),
        pytest.param(
            "resources:\n- ok.yaml\nhelmCharts:\n- name: redis\n  repo: https://charts.example\n",
            {},
            3,
            "helmCharts",
            "Helm charts are not supported",
            id="helm-charts",
        ),
        pytest.param(
            "resources:\n- ok.yaml\ngenerators:\n- fn.yaml\n",
            {
                "resources/bad/fn.yaml": (
                    "apiVersion: example.com/v1\nkind: Gen\nmetadata:\n  name: g\n"
                    "  annotations:\n    config.kubernetes.io/function: |\n"
                    "      exec:\n        path: ./plugin.sh\n"
                )
            },
            4,
            "generators[0]",
            "KRM function plugins (exec/container) are not allowed",
            id="exec-plugin",
        ),
        pytest.param(
            "transformers:\n- |\n  apiVersion: builtin\n  kind: PrefixSuffixTransformer\n",
            {},
            2,
            "transformers[0]",
            "inline plugin configuration is not allowed",
            id="inline-transformer",
        ),
        pytest.param(
            "resources:\n- ../../../../etc/passwd\n",
            {},
            2,
            "resources[0]",
            "path escapes the repository",
            id="path-escape",
        ),
        pytest.param(
            "resources:\n- /etc/passwd\n",
            {},
            2,
            "resources[0]",
            "absolute paths are not allowed",
            id="absolute-path",
        ),
        pytest.param(
            "resources:\n- ok.yaml\nopenapi:\n  path: ../../../schema.json\n",
            {},
            4,
            "openapi.path",
            "path escapes the repository",
            id="openapi-outside",
        ),
        pytest.param(
            "resources:\n- ok.yaml\nconfigMapGenerator:\n- name: c\n  files:\n  - key=/etc/hosts\n",
            {},
            6,
            "configMapGenerator[0].files[0]",
            "absolute paths are not allowed",
            id="generator-file-absolute",
        ),
        pytest.param(
            "resources:\n- missing.yaml\n",
            {},
            2,
            "resources[0]",
            "file or directory resources/bad/missing.yaml not found",
            id="missing-file",
        ),
        pytest.param(
            "resources:\n- ../base-with-remote\n",
            {
                "resources/base-with-remote/kustomization.yaml": "resources:\n- https://x.io/a.yaml\n"
            },
            2,
            "resources[0]",
            "remote resources are not allowed",
            id="remote-inside-referenced-base",
        ),
    ],
)
def test_refused_before_kubectl_runs(
    tmp_path: Path,
    kustomization: str,
    extra: dict[str, str],
    line: int,
    field: str,
    expected: str,
) -> None:
    files = {
        **APP,
        BAD: kustomization,
        "resources/bad/ok.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n",
        **extra,
    }
    docs, errors = render(make_tree(tmp_path, files), kubectl=KUBECTL or "/nonexistent/kubectl")
    error = next(e for e in errors if e.field == field)
    assert expected in error.message, messages(errors)
    if error.file == BAD:
        assert error.line == line, str(error)
    assert not any(d.file == BAD for d in docs)
    if KUBECTL is not None:
        assert [d.file for d in docs] == ["resources/web/overlays/prod/kustomization.yaml"]


@needs_kubectl
def test_bad_unit_fails_alone(tmp_path: Path) -> None:
    files = {**APP, BAD: "resources:\n- https://example.com/a.yaml\n"}
    docs, errors = render(make_tree(tmp_path, files))
    assert [e.file for e in errors] == [BAD]
    assert [d.file for d in docs] == ["resources/web/overlays/prod/kustomization.yaml"]


@needs_kubectl
def test_kubectl_failure_is_trimmed_and_relative(tmp_path: Path) -> None:
    files = {**APP, BAD: "resources:\n- ok.yaml\n", "resources/bad/ok.yaml": "a: [unclosed\n"}
    docs, errors = render(make_tree(tmp_path, files))
    error = one_error(errors, BAD)
    assert error.message.startswith(("kustomize build failed:", "kubectl kustomize failed:"))
    assert "gitfleet-kustomize-" not in error.message
    assert "/tmp/" not in error.message
    assert len(docs) == 1


def test_missing_kustomize_and_kubectl_is_an_error_per_unit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    files = {**APP, "resources/other/kustomization.yaml": "resources: []\n"}
    docs, errors = render(make_tree(tmp_path, files))
    assert docs == []
    assert sorted(e.file for e in errors) == [
        "resources/other/kustomization.yaml",
        "resources/web/overlays/prod/kustomization.yaml",
    ]
    assert all("neither kustomize nor kubectl was found" in e.message for e in errors)


KUSTOMIZE = shutil.which("kustomize")


@pytest.mark.skipif(
    KUSTOMIZE is None, reason="kustomize is not installed (hack/tools.sh builds it)"
)
def test_standalone_kustomize_is_preferred_and_gives_the_same_output(tmp_path: Path) -> None:
    tree = make_tree(tmp_path, APP)
    units = [u for u in plan_units(tree, Limits()).units if u.renderer == "kustomize"]
    standalone = KustomizeRenderer(kustomize=KUSTOMIZE).render(units, RenderContext(tree, Limits()))
    check_overlay(standalone)
    if KUBECTL is not None:
        assert standalone == render(tree, kubectl=KUBECTL)


def test_kustomize_failure_names_the_program(tmp_path: Path) -> None:
    fake = write_files(
        tmp_path / "bin", {"kustomize": "#!/bin/sh\necho 'boom: bad input' >&2\nexit 1\n"}
    )
    (fake / "kustomize").chmod(0o755)
    tree = make_tree(tmp_path, APP)
    units = [u for u in plan_units(tree, Limits()).units if u.renderer == "kustomize"]
    docs, errors = KustomizeRenderer(kustomize=str(fake / "kustomize")).render(
        units, RenderContext(tree, Limits())
    )
    assert docs == []
    assert [e.message for e in errors] == ["kustomize build failed: boom: bad input"]

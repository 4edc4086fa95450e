"""Helm renderer: offline `helm template` of chart folders, and what is refused before helm runs."""

from __future__ import annotations

import io
import shutil
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from gitfleet.api.limits import Limits
from gitfleet.repo.tree import Tree
from renderers.base import RenderContext, RenderResult, TemplateContext
from renderers.helm import HelmRenderer
from renderers.registry import plan_units
from tests.unit.renderers.render_helpers import (
    make_git_tree,
    make_tree,
    messages,
    one_error,
    write_files,
)

HELM = shutil.which("helm")
needs_helm = pytest.mark.skipif(
    HELM is None, reason="helm is not installed (hack/tools.sh builds it)"
)
CHART = "resources/web/Chart.yaml"
CM_TEMPLATE = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cfg
  namespace: {{ .Release.Namespace }}
data:
  replicas: {{ .Values.replicas | quote }}
  team: {{ (.Values.fleet | default dict).team | default "none" | quote }}
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
"""
HOOK = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: hook
  annotations: {"helm.sh/hook": pre-install}
"""
CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"""
WEB = {
    CHART: "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    "resources/web/values.yaml": "replicas: 1\n",
    "resources/web/templates/cm.yaml": CM_TEMPLATE,
    "resources/web/templates/hook.yaml": HOOK,
    "resources/web/crds/widgets.yaml": CRD,
}


def render(
    tree: Tree,
    helm: str | None = None,
    limits: Limits | None = None,
    values: dict[str, str] | None = None,
) -> RenderResult:
    limits = limits or Limits()
    units = plan_units(tree, limits).of("helm")
    ctx = RenderContext(tree, limits, TemplateContext(values=values or {}))
    return HelmRenderer(helm).render(units, ctx)


def test_chart_folder_is_one_unit_owning_its_files(tmp_path: Path) -> None:
    files = {
        **WEB,
        "resources/web/charts/sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 1.0.0\n",
    }
    plan = plan_units(make_tree(tmp_path, files), Limits())
    assert [(u.renderer, u.path) for u in plan.units] == [("helm", CHART)]
    assert plan.ignored == ()


def test_chart_and_kustomization_nesting_has_one_owner(tmp_path: Path) -> None:
    files = {
        **WEB,
        "resources/web/extra/kustomization.yaml": "resources: []\n",
        "resources/kz/kustomization.yaml": "resources: []\n",
        "resources/kz/chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    }
    plan = plan_units(make_tree(tmp_path, files), Limits())
    assert [(u.renderer, u.path) for u in plan.units] == [
        ("kustomize", "resources/kz/kustomization.yaml"),
        ("helm", CHART),
    ]


@needs_helm
def test_local_chart_renders_without_hooks_with_crds_and_fleet_values(tmp_path: Path) -> None:
    docs, errors = render(make_tree(tmp_path, WEB), values={"team": "blue"})
    assert errors == [], messages(errors)
    assert {d.file for d in docs} == {CHART} and {d.renderer for d in docs} == {"helm"}
    kinds = {(d.body["kind"], d.body["metadata"]["name"]) for d in docs}
    assert kinds == {("ConfigMap", "web-cfg"), ("CustomResourceDefinition", "widgets.example.com")}
    cm = next(d.body for d in docs if d.body["kind"] == "ConfigMap")
    assert cm["metadata"]["namespace"] == "web"
    assert cm["data"] == {"replicas": "1", "team": "blue", "kube": "v1.36.0"}


@needs_helm
def test_release_file_and_values_precedence(tmp_path: Path) -> None:
    files = {
        **WEB,
        "resources/web/gitfleet-values.yaml": "replicas: 2\n",
        "resources/web/prod.yaml": "replicas: 3\n",
        "resources/web/gitfleet-release.yaml": (
            "apiVersion: gitfleet.io/v1alpha1\nkind: HelmRelease\n"
            "metadata: {name: shop, namespace: shop-prod}\n"
            "spec:\n  valuesFiles: [prod.yaml]\n  fleetValues: site\n  kubeVersion: '1.33'\n"
            "  includeCRDs: false\n"
        ),
    }
    docs, errors = render(make_tree(tmp_path, files), values={"team": "blue"})
    assert errors == [], messages(errors)
    (cm,) = [d.body for d in docs]
    assert cm["metadata"] == {"name": "shop-cfg", "namespace": "shop-prod"}
    assert cm["data"] == {"replicas": "3", "team": "none", "kube": "v1.33"}
    inline = files | {
        "resources/web/gitfleet-release.yaml": (
            "apiVersion: gitfleet.io/v1alpha1\nkind: HelmRelease\nmetadata: {name: shop}\n"
            "spec:\n  valuesFiles: [prod.yaml]\n  values: {replicas: 4}\n"
        )
    }
    docs, errors = render(make_tree(tmp_path / "inline", inline))
    assert errors == [], messages(errors)
    cm = next(d.body for d in docs if d.body["kind"] == "ConfigMap")
    assert cm["metadata"]["namespace"] == "shop" and cm["data"]["replicas"] == "4"


@needs_helm
def test_chart_from_a_git_commit_renders_like_the_working_directory(tmp_path: Path) -> None:
    tree = make_git_tree(tmp_path, WEB)
    try:
        from_git = render(tree)
    finally:
        tree.close()
    from_dir = render(make_tree(tmp_path, WEB))
    assert [d.body for d in from_git[0]] == [d.body for d in from_dir[0]] and from_git[1] == []


@pytest.mark.parametrize(
    ("template", "line", "function"),
    [
        ('{{- $s := lookup "v1" "Secret" "ns" "x" }}\nkind: ConfigMap\n', 1, "lookup"),
        ('a: 1\nb: {{ (lookup "v1" "Namespace" "" "").metadata }}\n', 2, "lookup"),
        ('a: 1\n\nc: {{ getHostByName "example.com" }}\n', 3, "getHostByName"),
    ],
)
def test_lookup_and_dns_are_refused_before_helm_runs(
    tmp_path: Path, template: str, line: int, function: str
) -> None:
    files = {**WEB, "resources/web/templates/bad.yaml": template}
    docs, errors = render(make_tree(tmp_path, files), helm="/nonexistent/helm")
    error = one_error(errors, "resources/web/templates/bad.yaml")
    assert error.line == line and f"calls {function}" in error.message
    assert "offline" in error.message and docs == []


def test_lookup_in_a_string_or_comment_is_not_a_call(tmp_path: Path) -> None:
    text = '{{/* lookup is not used */}}\na: {{ "lookup" | quote }}\nlookup: plain text\n'
    files = {**WEB, "resources/web/templates/ok.yaml": text}
    _, errors = render(make_tree(tmp_path, files), helm="/nonexistent/helm")
    assert [e for e in errors if "lookup" in e.message] == []


def test_lookup_inside_a_vendored_archive_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in {
            "db/Chart.yaml": "apiVersion: v2\nname: db\nversion: 1.2.3\n",
            "db/templates/s.yaml": '{{ lookup "v1" "Secret" "a" "b" }}\n',
        }.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    files: dict[str, str | bytes] = {**WEB, "resources/web/charts/db-1.2.3.tgz": buffer.getvalue()}
    _, errors = render(make_tree(tmp_path, files), helm="/nonexistent/helm")
    error = one_error(errors, "resources/web/charts/db-1.2.3.tgz")
    assert "db/templates/s.yaml line 1" in error.message and "calls lookup" in error.message


@pytest.mark.parametrize(
    ("dependency", "vendored", "refused"),
    [
        ("  - {name: redis, version: 1.0.0, repository: https://charts.example.com}\n", {}, True),
        ("  - {name: redis, version: 1.0.0, repository: oci://registry.example.com/c}\n", {}, True),
        ("  - {name: redis, version: 1.0.0, repository: 'file://../redis'}\n", {}, True),
        (
            "  - {name: redis, version: 1.0.0, repository: https://charts.example.com}\n",
            {
                "resources/web/charts/redis/Chart.yaml": "apiVersion: v2\nname: redis\nversion: 1.0.0\n"
            },
            False,
        ),
    ],
    ids=["https-repo", "oci", "file-outside", "vendored-folder"],
)
def test_remote_dependencies_are_refused_unless_vendored(
    tmp_path: Path, dependency: str, vendored: dict[str, str], refused: bool
) -> None:
    chart = "apiVersion: v2\nname: web\nversion: 0.1.0\ndependencies:\n" + dependency
    files = {**WEB, CHART: chart, **vendored}
    _, errors = render(make_tree(tmp_path, files), helm="/nonexistent/helm")
    dep_errors = [e for e in errors if "not vendored" in e.message]
    assert bool(dep_errors) == refused, messages(errors)
    if refused:
        assert dep_errors[0].file == CHART and dep_errors[0].line == 5
        assert (
            dep_errors[0].field == "dependencies[0]"
            and "'helm dependency build'" in dep_errors[0].message
        )


@needs_helm
def test_vendored_subchart_renders(tmp_path: Path) -> None:
    sub = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: redis-cfg, namespace: web}\n"
    files = {
        **WEB,
        CHART: "apiVersion: v2\nname: web\nversion: 0.1.0\ndependencies:\n"
        "  - {name: redis, version: 1.0.0, repository: https://charts.example.com}\n",
        "resources/web/charts/redis/Chart.yaml": "apiVersion: v2\nname: redis\nversion: 1.0.0\n",
        "resources/web/charts/redis/templates/cm.yaml": sub,
    }
    docs, errors = render(make_tree(tmp_path, files))
    assert errors == [], messages(errors)
    assert "redis-cfg" in {d.body["metadata"]["name"] for d in docs}


@pytest.mark.parametrize(
    ("release", "line", "field", "text"),
    [
        (
            "kind: HelmRelease\napiVersion: gitfleet.io/v1alpha1\nspec:\n  chart: x\n",
            4,
            "spec.chart",
            "unknown field",
        ),
        (
            "kind: HelmRelease\napiVersion: gitfleet.io/v1alpha1\nspec:\n  valuesFiles: [../../x.yaml]\n",
            4,
            "spec.valuesFiles[0]",
            "inside the chart",
        ),
        (
            "kind: HelmRelease\napiVersion: gitfleet.io/v1alpha1\nmetadata:\n  name: Bad_Name\n",
            4,
            "metadata.name",
            "not a valid release name",
        ),
        ("kind: Other\napiVersion: gitfleet.io/v1alpha1\n", 1, "kind", "kind HelmRelease"),
    ],
)
def test_bad_release_file_names_file_line_and_field(
    tmp_path: Path, release: str, line: int, field: str, text: str
) -> None:
    files = {**WEB, "resources/web/gitfleet-release.yaml": release}
    _, errors = render(make_tree(tmp_path, files), helm="/nonexistent/helm")
    error = one_error(errors, "resources/web/gitfleet-release.yaml")
    assert (error.line, error.field) == (line, field) and text in error.message


@needs_helm
def test_helm_failure_names_the_chart_and_helms_message(tmp_path: Path) -> None:
    files = {**WEB, "resources/web/templates/broken.yaml": "a: {{ .Values.x | nosuchfunc }}\n"}
    docs, errors = render(make_tree(tmp_path, files))
    error = one_error(errors, CHART)
    assert error.message.startswith("helm template failed:") and "nosuchfunc" in error.message
    assert "/tmp/" not in error.message and docs == []


@needs_helm
def test_output_cap(tmp_path: Path) -> None:
    limits = replace(Limits(), template_max_output_bytes=200)
    _, errors = render(make_tree(tmp_path, WEB), limits=limits)
    assert (
        "wrote more than limits.templateMaxOutputBytes (200 bytes)"
        in one_error(errors, CHART).message
    )


def test_time_limit_kills_helm(tmp_path: Path) -> None:
    fake = write_files(tmp_path / "bin", {"helm": "#!/bin/sh\nsleep 30\n"}) / "helm"
    fake.chmod(0o755)
    limits = replace(Limits(), max_kustomize_seconds=0.5)
    _, errors = render(make_tree(tmp_path, WEB), helm=str(fake), limits=limits)
    assert "took longer than limits.maxKustomizeSeconds (0.5s)" in one_error(errors, CHART).message


def test_missing_helm_is_an_error_per_chart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    docs, errors = render(make_tree(tmp_path, WEB))
    assert docs == [] and "helm was not found" in one_error(errors, CHART).message

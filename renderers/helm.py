"""Helm renderer: each chart folder is rendered offline with `helm template`.

A chart folder (with `Chart.yaml`) is one unit; `helm_rules` finds them, reads the optional
`gitfleet-release.yaml` (release name and namespace, default: the folder name) and refuses, before
helm runs, unvendored dependencies (no repository or OCI pulls) and templates calling `lookup` or
`getHostByName`. Values, lowest precedence first: the chart's `values.yaml`, the Fleet's
`spec.values` under the key `fleet` (`spec.fleetValues` renames it, '' drops it),
`gitfleet-values.yaml`, the release's `valuesFiles`, its inline `values`. The chart folder is
materialised into a private temporary directory and `helm template --no-hooks` runs there with
private HELM_* homes, no KUBECONFIG, no plugins, `limits.maxKustomizeSeconds` (the external-tool
deadline) and `limits.templateMaxOutputBytes` as its output cap. CRDs in `crds/` are included
unless `includeCRDs: false`; `.Capabilities.KubeVersion` is `spec.kubeVersion` (default v1.36.0,
always passed, so the output does not depend on how helm was built). Output documents are attributed to the chart's `Chart.yaml`; errors
name it and carry helm's message. Called by `load_fleet` through the registry.
"""

from __future__ import annotations

import json
import posixpath
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from gitfleet.api.errors import FleetError
from gitfleet.api.limits import Limits
from gitfleet.load.model import SourceDoc
from gitfleet.load.yamlio import decode_text, parse_documents
from renderers.base import RenderContext, RenderResult, Unit
from renderers.external import Run, materialise, run_tool
from renderers.helm_rules import (
    VALUES_FILE,
    Release,
    chart_dir,
    check_chart,
    find_charts,
    read_release,
)

__all__ = ["HelmRenderer", "find_charts"]


class HelmRenderer:
    """Chart folders rendered offline; `helm` is looked up on PATH unless given."""

    name = "helm"

    def __init__(self, helm: str | None = None) -> None:
        self._helm = helm

    def render(self, units: Sequence[Unit], ctx: RenderContext) -> RenderResult:
        if not units:
            return [], []
        helm = self._helm or shutil.which("helm")
        if helm is None:
            message = "helm was not found on PATH; chart folders are rendered with 'helm template'"
            return [], [FleetError(u.path, None, "", message) for u in units]
        docs: list[SourceDoc] = []
        errors: list[FleetError] = []
        for unit in units:
            release, problems = read_release(ctx.tree, unit, ctx.limits)
            problems.extend(check_chart(ctx.tree, unit, ctx.limits))
            if release is None or problems:
                errors.extend(problems)
                continue
            found, failed = self._render_one(helm, unit, release, ctx)
            docs.extend(found)
            errors.extend(failed)
        return docs, errors

    def _render_one(
        self, helm: str, unit: Unit, release: Release, ctx: RenderContext
    ) -> RenderResult:
        with tempfile.TemporaryDirectory(prefix="gitfleet-helm-") as tmp:
            root, home = Path(tmp) / "repo", Path(tmp) / "home"
            root.mkdir()
            (home / "plugins").mkdir(parents=True)
            materialise(ctx.tree, root, ctx.limits, only=unit.files)
            base = chart_dir(unit)
            argv = [helm, "template", release.name, f"./{base}" if base else "."]
            argv += ["--namespace", release.namespace, "--no-hooks", "--skip-tests"]
            if release.include_crds:
                argv.append("--include-crds")
            argv += ["--kube-version", release.kube_version]
            for values_file in _values_files(unit, release, ctx, root):
                argv += ["--values", values_file]
            run = Run(
                argv,
                cwd=root,
                home=home,
                timeout=ctx.limits.max_kustomize_seconds,
                max_output=ctx.limits.template_max_output_bytes,
                env=_helm_env(home),
            )
            limits = ("limits.maxKustomizeSeconds", "limits.templateMaxOutputBytes")
            out, reason = run_tool(run, "helm template", limits)
        if out is None:
            return [], [FleetError(unit.path, None, "", reason)]
        return self._parse(unit, out, ctx.limits)

    def _parse(self, unit: Unit, out: bytes, limits: Limits) -> RenderResult:
        text, error = decode_text(unit.path, out)
        if text is None:
            return [], [error] if error else []
        return parse_documents(unit.path, text, limits, renderer=self.name)


def _values_files(unit: Unit, release: Release, ctx: RenderContext, root: Path) -> list[str]:
    """The --values arguments, lowest precedence first, relative to the materialised repository
    `root` (generated files go to `root/.gitfleet-helm/`, outside every chart folder)."""
    out: list[str] = []
    generated = root / ".gitfleet-helm"
    generated.mkdir(exist_ok=True)
    if release.fleet_values:
        fleet = generated / "fleet-values.json"
        fleet.write_text(json.dumps({release.fleet_values: dict(ctx.template.values)}))
        out.append("./.gitfleet-helm/fleet-values.json")
    own = posixpath.join(chart_dir(unit), VALUES_FILE)
    if own in unit.files:
        out.append(f"./{own}")
    out.extend(f"./{path}" for path in release.values_files)
    if release.values:
        inline = generated / "release-values.json"
        inline.write_text(json.dumps(dict(release.values)))
        out.append("./.gitfleet-helm/release-values.json")
    return out


def _helm_env(home: Path) -> dict[str, str]:
    """Private helm homes: no repositories, registries, plugins or kubeconfig from the machine."""
    return {
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
        "HELM_PLUGINS": str(home / "plugins"),
        "HELM_REGISTRY_CONFIG": str(home / "registry.json"),
        "HELM_REPOSITORY_CONFIG": str(home / "repositories.yaml"),
        "HELM_REPOSITORY_CACHE": str(home / "repository"),
        "KUBECONFIG": str(home / "no-kubeconfig"),
    }

"""Kustomize renderer: each kustomization directory is built offline with `kustomize build`.

The program is a standalone `kustomize` when one is on PATH, else `kubectl kustomize` (machines
have either; the same kustomize API either way).

Before anything runs, every kustomization file a unit involves is checked (`kustomize_rules`).
The tree's files are then materialised once per batch into a private temporary directory
(`renderers.external`), so a Git commit renders exactly like a working directory; the program
runs there with a minimal environment (PATH, a private HOME, no KUBECONFIG), stdin closed, no
plugin/helm/network flags, `limits.maxKustomizeSeconds` as its deadline and
`limits.maxRenderedBytesPerCluster` as its output cap. The output is
parsed as `<dir>/kustomization.yaml` documents. Called by `load_fleet` through the registry.
"""

from __future__ import annotations

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
from renderers.kustomize_rules import RepoIndex, check_unit, unit_dir


def find_tool(kustomize: str | None, kubectl: str | None) -> list[str] | None:
    """The command that builds a kustomization: an explicit `kubectl` wins (tests), then a
    standalone `kustomize` (`kustomize build`), then `kubectl kustomize`; None when neither."""
    if kubectl is not None:
        return [kubectl, "kustomize"]
    found = kustomize or shutil.which("kustomize")
    if found is not None:
        return [found, "build"]
    found = shutil.which("kubectl")
    return [found, "kustomize"] if found is not None else None


def run_kustomize(
    tool: Sequence[str], root: Path, home: Path, directory: str, limits: Limits
) -> tuple[bytes | None, str]:
    """(stdout, '') on success, (None, reason) on failure."""
    what = " ".join([Path(tool[0]).name, *tool[1:]])
    run = Run(
        [*tool, f"./{directory}" if directory else "."],
        cwd=root,
        home=home,
        timeout=limits.max_kustomize_seconds,
        max_output=limits.max_rendered_bytes_per_cluster,
    )
    return run_tool(run, what, ("limits.maxKustomizeSeconds", "limits.maxRenderedBytesPerCluster"))


class KustomizeRenderer:
    """Kustomization directories, built offline; `kubectl` is looked up on PATH unless given."""

    name = "kustomize"

    def __init__(self, kubectl: str | None = None, kustomize: str | None = None) -> None:
        self._kubectl = kubectl
        self._kustomize = kustomize

    def render(self, units: Sequence[Unit], ctx: RenderContext) -> RenderResult:
        if not units:
            return [], []
        tool = find_tool(self._kustomize, self._kubectl)
        if tool is None:
            message = (
                "neither kustomize nor kubectl was found on PATH; kustomize directories are "
                "built with 'kustomize build' or 'kubectl kustomize' (install one of them)"
            )
            return [], [FleetError(u.path, None, "", message) for u in units]
        index = RepoIndex.of(ctx.tree.files())
        errors: list[FleetError] = []
        ready: list[Unit] = []
        for unit in units:
            problems = check_unit(ctx.tree, unit, index, ctx.limits)
            errors.extend(problems)
            ready.extend([] if problems else [unit])
        docs = self._build(tool, ready, ctx, errors) if ready else []
        return docs, errors

    def _build(
        self, tool: list[str], units: Sequence[Unit], ctx: RenderContext, errors: list[FleetError]
    ) -> list[SourceDoc]:
        docs: list[SourceDoc] = []
        with tempfile.TemporaryDirectory(prefix="gitfleet-kustomize-") as tmp:
            root, home = Path(tmp) / "repo", Path(tmp) / "home"
            root.mkdir()
            home.mkdir()
            materialise(ctx.tree, root, ctx.limits)
            for unit in units:
                out, reason = run_kustomize(tool, root, home, unit_dir(unit), ctx.limits)
                if out is None:
                    errors.append(FleetError(unit.path, None, "", reason))
                    continue
                found, problems = self._parse(unit, out, ctx.limits)
                docs.extend(found)
                errors.extend(problems)
        return docs

    def _parse(self, unit: Unit, out: bytes, limits: Limits) -> RenderResult:
        text, error = decode_text(unit.path, out)
        if text is None:
            return [], [error] if error else []
        docs, problems = parse_documents(unit.path, text, limits, renderer=self.name)
        return docs, problems

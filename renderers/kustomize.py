"""Kustomize renderer: each kustomization directory is built offline with `kubectl kustomize`.

Before anything runs, every kustomization file a unit involves is checked (`kustomize_rules`).
The tree's files are then materialised once per batch into a private temporary directory (only
regular files, containment checked), so a Git commit renders exactly like a working directory;
kubectl runs there with a minimal environment (PATH, a private HOME, no KUBECONFIG), stdin closed,
no plugin/helm/network flags, and `limits.max_kustomize_seconds` as its deadline. The output is
parsed as `<dir>/kustomization.yaml` documents. Called by `load_fleet` through the registry.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from gitfleet.api.errors import FleetError
from gitfleet.api.limits import Limits
from gitfleet.load.model import SourceDoc
from gitfleet.load.yamlio import decode_text, parse_documents
from gitfleet.repo.tree import Tree
from renderers.base import RenderContext, RenderResult, Unit
from renderers.kustomize_rules import RepoIndex, check_unit, unit_dir

STDERR_LIMIT = 2000
"""Characters of kubectl's stderr kept in an error message (the end, where the cause is)."""


def materialise(tree: Tree, root: Path, limits: Limits) -> None:
    """Write the tree's regular files under `root` (files above `limits.max_file_bytes` are
    skipped; `kustomize_rules` reports the ones a kustomization references)."""
    base = root.resolve()
    for path in tree.files():
        target = (base / path).resolve()
        if not target.is_relative_to(base) or target == base or path.startswith("/"):
            continue
        if tree.size(path) > limits.max_file_bytes:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(tree.read(path))


def _trim(stderr: bytes, root: Path) -> str:
    text = stderr.decode("utf-8", "replace")
    for prefix in {str(root.resolve()), str(root)}:
        text = text.replace(prefix + "/", "").replace(prefix, ".")
    text = " ".join(text.split())
    return text if len(text) <= STDERR_LIMIT else "..." + text[-STDERR_LIMIT:]


def run_kustomize(
    kubectl: str, root: Path, home: Path, directory: str, timeout: float
) -> tuple[bytes | None, str]:
    """(stdout, '') on success, (None, reason) on failure."""
    argv = [kubectl, "kustomize", f"./{directory}" if directory else "."]
    env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "HOME": str(home)}
    try:
        done = subprocess.run(
            argv,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return (
            None,
            f"kubectl kustomize took longer than limits.maxKustomizeSeconds ({timeout:g}s)",
        )
    except OSError as exc:
        return None, f"cannot run kubectl: {exc.strerror or exc.__class__.__name__}"
    if done.returncode != 0:
        return None, f"kubectl kustomize failed: {_trim(done.stderr, root) or 'no message'}"
    return done.stdout, ""


class KustomizeRenderer:
    """Kustomization directories, built offline; `kubectl` is looked up on PATH unless given."""

    name = "kustomize"

    def __init__(self, kubectl: str | None = None) -> None:
        self._kubectl = kubectl

    def render(self, units: Sequence[Unit], ctx: RenderContext) -> RenderResult:
        if not units:
            return [], []
        kubectl = self._kubectl or shutil.which("kubectl")
        if kubectl is None:
            message = (
                "kubectl was not found on PATH; kustomize directories are built with "
                "'kubectl kustomize' (install kubectl to render this directory)"
            )
            return [], [FleetError(u.path, None, "", message) for u in units]
        index = RepoIndex.of(ctx.tree.files())
        errors: list[FleetError] = []
        ready: list[Unit] = []
        for unit in units:
            problems = check_unit(ctx.tree, unit, index, ctx.limits)
            errors.extend(problems)
            ready.extend([] if problems else [unit])
        docs = self._build(kubectl, ready, ctx, errors) if ready else []
        return docs, errors

    def _build(
        self, kubectl: str, units: Sequence[Unit], ctx: RenderContext, errors: list[FleetError]
    ) -> list[SourceDoc]:
        docs: list[SourceDoc] = []
        with tempfile.TemporaryDirectory(prefix="gitfleet-kustomize-") as tmp:
            root, home = Path(tmp) / "repo", Path(tmp) / "home"
            root.mkdir()
            home.mkdir()
            materialise(ctx.tree, root, ctx.limits)
            for unit in units:
                timeout = ctx.limits.max_kustomize_seconds
                out, reason = run_kustomize(kubectl, root, home, unit_dir(unit), timeout)
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

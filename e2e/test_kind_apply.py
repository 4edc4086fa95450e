"""End-to-end on kind: render the quickstart, apply one cluster's directory, see it running.

Needs a Docker engine and the `kind` binary; skipped with the reason where they are missing (as
on the development machines, which have only the Docker client). Until the member agent lands,
the test applies the cluster directory with `kubectl apply`, exactly what the agent will do.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _docker_engine_reason() -> str | None:
    if shutil.which("kind") is None:
        return "kind is not installed"
    if shutil.which("docker") is None:
        return "docker is not installed"
    probe = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return "no Docker engine is reachable (docker info failed)"
    return None


SKIP_REASON = _docker_engine_reason()
pytestmark = pytest.mark.skipif(SKIP_REASON is not None, reason=f"e2e on kind: {SKIP_REASON}")


def test_quickstart_cluster_directory_applies_on_kind(tmp_path: Path) -> None:
    out = tmp_path / "out"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "gitfleet",
            "render",
            str(ROOT / "examples/quickstart"),
            "--out",
            str(out),
        ],
        check=True,
    )
    name = f"gitfleet-e2e-{uuid.uuid4().hex[:6]}"
    subprocess.run(["kind", "create", "cluster", "--name", name, "--wait", "120s"], check=True)
    try:
        context = ["--context", f"kind-{name}"]
        for placement_dir in sorted((out / "clusters/eu-1").iterdir()):
            if placement_dir.is_dir():  # every file but the placement's index.yaml
                objects = [str(f) for f in sorted(placement_dir.glob("*_*.yaml"))]
                subprocess.run(
                    ["kubectl", *context, "apply", *(a for f in objects for a in ("-f", f))],
                    check=True,
                )
        subprocess.run(
            [
                "kubectl",
                *context,
                "-n",
                "web",
                "rollout",
                "status",
                "deployment/frontend",
                "--timeout=180s",
            ],
            check=True,
        )
    finally:
        subprocess.run(["kind", "delete", "cluster", "--name", name], check=False)

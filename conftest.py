"""Test session set-up: put the binaries `hack/tools.sh` built (helm, kustomize, kubectl, etcd,
kube-apiserver) first on PATH, so the renderer, golden and real-API tests use the pinned versions.

The bin directory is `GITFLEET_TOOLS_BIN` when set, else what `hack/tools.sh --bin` prints (the
cache under ~/.cache/gitfleet-tools). Nothing is built here: without the cache the tests that need
a binary skip with the reason, and the rest run as before.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def tools_bin() -> Path | None:
    """The directory of the pinned tool binaries, when it exists."""
    configured = os.environ.get("GITFLEET_TOOLS_BIN")
    if configured:
        return Path(configured) if Path(configured).is_dir() else None
    try:
        out = subprocess.run(
            ["bash", str(ROOT / "hack/tools.sh"), "--bin"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(out) if out and Path(out).is_dir() else None


_BIN = tools_bin()
if _BIN is not None and str(_BIN) not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = f"{_BIN}{os.pathsep}{os.environ.get('PATH', '')}"

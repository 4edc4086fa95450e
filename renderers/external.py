"""Running an external renderer program (kustomize, kubectl, helm) safely on a fleet tree.

`materialise` writes the tree's regular files into a private temporary directory (containment
checked), so a Git commit renders exactly like a working directory. `run_tool` runs a program
there with a minimal environment (PATH, a private HOME, no KUBECONFIG), stdin closed, a wall-clock
deadline and an output cap (stdout is read in chunks; the child is killed as soon as it passes the
cap or the deadline, so a runaway program cannot fill memory). `trim` makes a program's stderr short and free of the
temporary paths. Used by `renderers.kustomize` and `renderers.helm` (which stay independent).
"""

from __future__ import annotations

import os
import selectors
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitfleet.api.limits import Limits
from gitfleet.repo.tree import Tree

STDERR_LIMIT = 2000
"""Characters of a program's stderr kept in an error message (the end, where the cause is)."""


def materialise(tree: Tree, root: Path, limits: Limits, only: Sequence[str] | None = None) -> None:
    """Write the tree's regular files (or just `only`) under `root`; files above
    `limits.max_file_bytes` are skipped (the renderer's checks report the ones it needs)."""
    base = root.resolve()
    for path in tree.files() if only is None else only:
        target = (base / path).resolve()
        if not target.is_relative_to(base) or target == base or path.startswith("/"):
            continue
        if tree.size(path) > limits.max_file_bytes:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(tree.read(path))


def trim(stderr: bytes, root: Path) -> str:
    """`stderr` on one line, temp paths made relative, at most `STDERR_LIMIT` characters."""
    text = stderr.decode("utf-8", "replace")
    for prefix in sorted({str(root.resolve()), str(root)}, key=len, reverse=True):
        text = text.replace(prefix + "/", "").replace(prefix, ".")
    text = " ".join(text.split())
    return text if len(text) <= STDERR_LIMIT else "..." + text[-STDERR_LIMIT:]


@dataclass(frozen=True)
class Run:
    """How to run one program: argv, working directory, deadline, output cap, extra env."""

    argv: Sequence[str]
    cwd: Path
    home: Path
    timeout: float
    max_output: int
    env: Mapping[str, str] | None = None


def run_tool(run: Run, what: str, limit_names: tuple[str, str]) -> tuple[bytes | None, str]:
    """(stdout, '') on success, (None, reason) on failure; `what` names the program in messages,
    `limit_names` the (time, output) limits as fleet.yaml spells them."""
    env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "HOME": str(run.home)}
    env.update(run.env or {})
    with tempfile.TemporaryFile(dir=run.home) as err:
        try:
            proc = subprocess.Popen(
                list(run.argv),
                cwd=run.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
            )
        except OSError as exc:
            return None, f"cannot run {what}: {exc.strerror or exc.__class__.__name__}"
        try:
            out, problem = _collect(proc, time.monotonic() + run.timeout, run.max_output)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        if problem == "timeout":
            return None, f"{what} took longer than {limit_names[0]} ({run.timeout:g}s)"
        if problem == "output":
            return None, f"{what} wrote more than {limit_names[1]} ({run.max_output} bytes)"
        if proc.returncode != 0:
            err.seek(0)
            return None, f"{what} failed: {trim(err.read(), run.cwd) or 'no message'}"
        return out, ""


def _collect(proc: subprocess.Popen[bytes], deadline: float, cap: int) -> tuple[bytes, str]:
    """The child's stdout until EOF and exit: (output, '' | 'timeout' | 'output')."""
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = 0
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return b"", "timeout"
            if not selector.select(left):
                continue
            data = os.read(proc.stdout.fileno(), 1 << 16)
            if not data:
                break
            size += len(data)
            if size > cap:
                return b"", "output"
            chunks.append(data)
    try:
        proc.wait(max(deadline - time.monotonic(), 0.001))
    except subprocess.TimeoutExpired:
        return b"", "timeout"
    return b"".join(chunks), ""

"""Git helpers and check 1 of the Git scenario benchmark (`benchmarks/bench_hub.py`).

`git`/`resolve`/`repo_bytes`/`changed_files`/`written_bytes` read the bare repositories the
benchmark creates (object bytes from `git count-objects -v`, changed files from `git diff
--name-only`, the new objects of an output commit by part of the output tree from `git rev-list
--objects`);
`check_incremental` compares the `clusters/` subtree of the incremental output with a fresh
full render of the same source: identical tree ids, or differences only in the snapshot
counters of a cluster's `clusters/<c>/index.yaml` (they count history, so an incremental run and
a fresh one legitimately differ there; a placement's `clusters/<c>/<p>/index.yaml` must be equal). Anything else raises `CheckFailed`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from benchmarks.bench_shape import category

OUTPUT_REF = "refs/heads/gitfleet/rendered"
IDENTITY = ("-c", "user.name=bench", "-c", "user.email=bench@example.invalid")
HISTORY_FIELDS = ("resourceSnapshotIndex", "policySnapshotIndex")
"""index.yaml fields that count snapshots, so they depend on history, not on the input."""


class CheckFailed(RuntimeError):
    """One of the three checks did not hold: the run does not count."""


def git(repo: Path, *args: str, bare: bool = True, stdin: bytes | None = None) -> str:
    """Run git on `repo` (a bare repository, or a work tree with bare=False), `stdin` on its
    standard input; stdout."""
    where = ["--git-dir", str(repo)] if bare else ["-C", str(repo)]
    done = subprocess.run(
        ["git", *IDENTITY, *where, *args], input=stdin, capture_output=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace')}")
    return done.stdout.decode()


def resolve(repo: Path, ref: str) -> str | None:
    """The commit `ref` names in `repo`, or None."""
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", ref).strip()
    except RuntimeError:
        return None


def repo_bytes(repo: Path) -> int:
    """Loose plus packed object bytes (`git count-objects -v`, KiB)."""
    fields = dict(line.split(": ") for line in git(repo, "count-objects", "-v").splitlines())
    return (int(fields["size"]) + int(fields["size-pack"])) * 1024


def changed_files(repo: Path, before: str | None, after: str | None) -> int:
    """Files that differ between two output commits (all files when there was none before)."""
    if after is None or before == after:
        return 0
    if before is None:
        return len(git(repo, "ls-tree", "-r", "--name-only", after).splitlines())
    return len(git(repo, "diff", "--name-only", before, after).splitlines())


PARTS = (
    "manifests",
    "clusterIndex",
    "placementIndex",
    "placementStatus",
    "status",
    "state",
    "decisions",
    "trees",
)
"""The parts of the output tree `written_bytes` sums, in table order (`bench_shape.category`
names them; any other top-level directory is a part of its own), and its trees."""


def written_bytes(repo: Path, before: str, after: str) -> dict[str, int]:
    """What the output commit `after` adds to its parent `before`: the bytes of its new
    objects (each once, as git stores them before compression: the work of the commit and of
    the push), blobs by part of the output tree of a path that names them
    (`bench_shape.category`), trees apart."""
    listed = git(repo, "rev-list", "--objects", after, "--not", before)
    named = [line for line in listed.splitlines() if " " in line]  # commits name no path
    found = git(
        repo,
        "cat-file",
        "--batch-check=%(objecttype) %(objectsize) %(rest)",
        stdin="".join(f"{line}\n" for line in named).encode(),
    )
    parts: dict[str, int] = {}
    for line in found.splitlines():
        kind, size, *path = line.split(" ", 2)  # the root tree names no path
        part = "trees" if kind == "tree" else category(path[0])
        parts[part] = parts.get(part, 0) + int(size)
    return parts


def _history_only(remote: Path, ours: str, theirs: str) -> list[str]:
    """Paths under clusters/ that differ between two output commits; raises CheckFailed unless
    every difference is an index.yaml differing only in HISTORY_FIELDS."""
    paths = git(remote, "diff", "--name-only", ours, theirs, "--", "clusters").splitlines()
    for path in paths:
        if not path.endswith("/index.yaml") or _normal(remote, ours, path) != _normal(
            remote, theirs, path
        ):
            diff = git(remote, "diff", "--unified=1", ours, theirs, "--", path).splitlines()
            raise CheckFailed(
                f"check 1: {path} differs between the incremental output {ours[:12]} and the "
                f"full render {theirs[:12]} ({len(paths)} paths differ under clusters/):\n"
                + "\n".join(diff[:40])
            )
    return paths


def _normal(remote: Path, commit: str, path: str) -> Any:
    """An index.yaml without its history-dependent snapshot counters."""
    doc = yaml.safe_load(git(remote, "show", f"{commit}:{path}"))
    for entry in doc.get("placements") or []:
        for key in HISTORY_FIELDS:
            entry.pop(key, None)
    return doc


def check_incremental(remote: Path, inc: str, fresh: dict[str, Any]) -> dict[str, Any]:
    """Check 1: the incremental clusters/ tree equals the fresh full render's (exactly, or up to
    the snapshot counters in index.yaml, which count history)."""
    ours = resolve(remote, f"{inc}:clusters")
    if ours == fresh["clusters"]:
        return {"clustersTree": ours, "identical": True, "historyOnlyIndexes": 0}
    git(remote, "fetch", "--quiet", fresh["remote"], f"{OUTPUT_REF}:refs/bench/fresh")
    paths = _history_only(remote, inc, "refs/bench/fresh")
    return {
        "clustersTree": ours,
        "freshTree": fresh["clusters"],
        "identical": False,
        "historyOnlyIndexes": len(paths),
    }

"""What the Git server spends accepting one output commit, by output layout (issue 18, item 8).

A server receiving a push checks that the new objects connect to what it has: `receive-pack`
runs `git rev-list --objects --stdin --not --all` on the pushed tips. For a commit on the one
output branch, git first marks every object of the parent commit's tree as uninteresting
(`mark_edges_uninteresting`), so the check costs in proportion to the whole output tree (~470k
entries at fleet-1k), whatever the commit changed. This script measures that check for the
output commit of one benchmark scenario in two layouts made of the same two commits:

- `one branch`: today's: the commit on `gitfleet/rendered`, the branch at its parent;
- `per-cluster refs`: each `clusters/<name>/` tree in a commit of its own on
  `refs/heads/gitfleet/clusters/<name>` and everything else (status, state, decisions) on one
  more ref; the pushed tips are the changed clusters' commits and the rest's, each on its old
  commit, whose tree is one cluster's (or the rest's).

Both send the same blobs and cluster trees (checked: the run fails otherwise). Each layout is
measured without and with a commit-graph (a maintained server has one; without it the check
reads the commit of every ref from the packs on every push, ~35 ms per 1,000 refs here).

    python benchmarks/push_layout.py --size fleet-1k --scenario "edit one resource" --trials 7

Prints a markdown table (CPU ms of the check, median, min and max of `--trials` runs) and the
counts behind it; `--json` writes them too. Called from the command line;
`tests/unit/bench/test_push_layout.py` runs `measure_layouts` on a small repository.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.generate import add_size_options, build_fleet, resolve_size
from benchmarks.hub_checks import OUTPUT_REF, git
from benchmarks.hub_scenarios import scenarios
from benchmarks.hub_trials import DEFAULT_NOW, new_source, push_source

CLUSTER_REFS = "refs/heads/gitfleet/clusters/"
REST_REF = "refs/heads/gitfleet/rest"
CHECK = ("rev-list", "--objects", "--stdin", "--not", "--all", "--quiet")
"""The connectivity check `receive-pack` runs (git 2.39 adds only `--alternate-refs`)."""
_COMMIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": "1767225600 +0000",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_DATE": "1767225600 +0000",
}


@dataclass(frozen=True)
class Figures:
    """The check's CPU ms for one layout, with or without a commit-graph."""

    layout: str
    graph: bool
    median_ms: float
    min_ms: float
    max_ms: float
    tips: int
    refs: int


def cluster_trees(repo: Path, commit: str) -> dict[str, str]:
    """Cluster name -> the id of its `clusters/<name>/` tree in `commit`."""
    out = {}
    for line in git(repo, "ls-tree", f"{commit}:clusters").splitlines():
        meta, name = line.split("\t", 1)
        out[name] = meta.split()[2]
    return out


def rest_tree(repo: Path, commit: str) -> str:
    """The root tree of `commit` without `clusters/` (written)."""
    lines = [
        ln for ln in git(repo, "ls-tree", commit).splitlines() if not ln.endswith("\tclusters")
    ]
    return git(repo, "mktree", stdin=("\n".join(lines) + "\n").encode()).strip()


def commit_tree(repo: Path, tree: str, parent: str | None) -> str:
    """A commit of `tree` (on `parent`) with a fixed author and date."""
    args = ["git", "--git-dir", str(repo), "commit-tree", tree, "-m", "layout"]
    args += ["-p", parent] if parent else []
    env = {**os.environ, **_COMMIT_ENV}
    done = subprocess.run(args, env=env, capture_output=True, check=True)
    return done.stdout.decode().strip()


def new_objects(repo: Path, tips: list[str], nots: list[str]) -> set[str]:
    """The ids `rev-list --objects` lists for `tips` not reachable from `nots`."""
    args = ["rev-list", "--objects", "--stdin", "--not", *nots]
    listed = git(repo, *args, stdin=("\n".join(tips) + "\n").encode())
    return {line.split(" ", 1)[0] for line in listed.splitlines() if line}


def check_ms(repo: Path, tips: list[str], trials: int) -> list[float]:
    """CPU ms (user + system) of each of `trials` runs of the connectivity check."""
    stdin = ("\n".join(tips) + "\n").encode()
    out = []
    for _ in range(trials):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        git(repo, *CHECK, stdin=stdin)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        out.append(round(used * 1000, 2))
    return out


def one_branch(repo: Path, new: str, old: str) -> list[str]:
    """Today's layout as the server sees the push: the branch at `old`; the pushed tips."""
    git(repo, "update-ref", OUTPUT_REF, old)
    return [new]


def per_cluster(repo: Path, new: str, old: str) -> list[str]:
    """The per-cluster-ref layout of the same two commits as the server sees the push: its
    refs at `old`'s content (the one output branch gone); the new commits of the changed
    clusters and of the rest, on their old ones, are the pushed tips (no ref names them, so a
    commit-graph written next does not hold them, as on a server before the push)."""
    before, after = cluster_trees(repo, old), cluster_trees(repo, new)
    commits = {name: commit_tree(repo, tree, None) for name, tree in sorted(before.items())}
    rest = commit_tree(repo, rest_tree(repo, old), None)
    lines = [f"update {CLUSTER_REFS}{name} {oid}" for name, oid in commits.items()]
    lines += [f"update {REST_REF} {rest}", f"delete {OUTPUT_REF}"]
    git(repo, "update-ref", "--stdin", stdin=("\n".join(lines) + "\n").encode())
    git(repo, "pack-refs", "--all")
    changed = sorted(name for name, tree in after.items() if before.get(name) != tree)
    return [commit_tree(repo, after[name], commits.get(name)) for name in changed] + [
        commit_tree(repo, rest_tree(repo, new), rest)
    ]


def same_content(repo: Path, new: str, old: str, tips: list[str], olds: list[str]) -> None:
    """Both layouts send the same blobs and trees but for their commits and root trees
    (ValueError otherwise)."""
    branch = new_objects(repo, [new], [old])
    branch -= {new, git(repo, "rev-parse", f"{new}^{{tree}}").strip()}
    branch.discard(git(repo, "rev-parse", f"{new}:clusters").strip())
    refs = new_objects(repo, tips, olds) - set(tips)
    refs.discard(git(repo, "rev-parse", f"{tips[-1]}^{{tree}}").strip())
    if branch != refs:
        raise ValueError(
            f"the layouts differ in what they send: {len(branch ^ refs)} objects "
            f"({len(branch)} on one branch, {len(refs)} with per-cluster refs)"
        )


def measure_layouts(bare: Path, work: Path, trials: int) -> dict[str, object]:
    """Figures of both layouts, without and with a commit-graph, for the last commit of the
    output branch of `bare` (copied into `work`, left as it is)."""
    new = git(bare, "rev-parse", OUTPUT_REF).strip()
    old = git(bare, "rev-parse", f"{new}~1").strip()
    figures: list[Figures] = []
    counts: dict[str, int] = {}
    for layout, make in (("one branch", one_branch), ("per-cluster refs", per_cluster)):
        repo = work / f"{layout.replace(' ', '-')}.git"
        shutil.copytree(bare, repo, symlinks=True)
        tips = make(repo, new, old)
        refs = len(git(repo, "for-each-ref", "--format=%(refname)").splitlines())
        if layout != "one branch":
            olds = [ln.split()[0] for ln in git(repo, "show-ref").splitlines()]
            same_content(repo, new, old, tips, olds)
            counts["changedClusters"] = len(tips) - 1
        for graph in (False, True):  # the same refs, then with a commit-graph of them
            if graph:
                git(repo, "commit-graph", "write", "--reachable")
            ms = check_ms(repo, tips, trials)
            figures.append(
                Figures(layout, graph, statistics.median(ms), min(ms), max(ms), len(tips), refs)
            )
        shutil.rmtree(repo)
    counts["clusters"] = len(cluster_trees(bare, new))
    counts["entries"] = len(git(bare, "ls-tree", "-r", "--name-only", old).splitlines())
    return {"figures": [asdict(f) for f in figures], **counts}


def scenario_output(args: argparse.Namespace, work: Path) -> Path:
    """A remote whose output branch ends with the first pass after `args.scenario`'s edit of
    the generated fleet (the hub settled before it)."""
    from benchmarks.bench_hub import make_hub

    fleet = build_fleet(resolve_size(args), args.seed)
    clone, remote = work / "clone", work / "remote.git"
    new_source(fleet, clone, remote)
    hub = make_hub(remote, work / "cache", DEFAULT_NOW)
    for _ in range(30):  # the cold pass, then until a pass commits nothing
        if hub.run_once().outcome != "committed":
            break
    edit = dict(scenarios(fleet)).get(args.scenario)
    if edit is None:
        raise SystemExit(f"push_layout: {args.scenario!r} is not a source edit of this fleet")
    push_source(clone, edit(clone, 0) or args.scenario)
    outcome = hub.run_once().outcome
    if outcome != "committed":
        raise SystemExit(f"push_layout: the pass after {args.scenario!r} was {outcome}")
    return remote


def render(result: dict[str, object], label: str) -> str:
    """The markdown table of `measure_layouts`' result."""
    rows = [
        f"{label}: {result['changedClusters']} of {result['clusters']} clusters changed; the "
        f"parent's tree has {result['entries']:,} files",
        "",
        "| layout | commit-graph | pushed tips | refs | check CPU ms (median) | min | max |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in result["figures"]:  # type: ignore[attr-defined]
        rows.append(
            f"| {f['layout']} | {'yes' if f['graph'] else 'no'} | {f['tips']} | {f['refs']} | "
            f"{f['median_ms']:.1f} | {f['min_ms']:.1f} | {f['max_ms']:.1f} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_size_options(p)
    p.add_argument("--scenario", default="edit one resource")
    p.add_argument("--trials", type=int, default=7)
    p.add_argument("--json", type=Path)
    p.add_argument("--workdir", type=Path, help="parent of the temp dir (default: system temp)")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="gitfleet-layout-", dir=args.workdir))
    try:
        remote = scenario_output(args, work)
        result = measure_layouts(remote, work, args.trials)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    size = resolve_size(args)
    print(render(result, f"{size.clusters} clusters, {args.scenario}"))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

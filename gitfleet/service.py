"""Operations behind the hub commands of the CLI: plan, status, history and the reconcile loop.

Each function takes plain arguments, does the Git and file work through `gitfleet.repo`, calls the
pure reconciler, and returns data or text for `gitfleet.cli` to print. Repositories are given as a
local path or a URL; URLs (and, for `status`/`history`, paths too) are read through a private bare
mirror in the cache directory, so the user's checkout is never touched.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from gitfleet.api.hubstatus import HUB_STATUS_PATH
from gitfleet.api.output import cluster_index_path
from gitfleet.load.model import FleetSnapshot
from gitfleet.outputread import hub_note, run_files, status_files, status_from_files
from gitfleet.repo.branches import approved_deletions
from gitfleet.repo.gitcmd import GitError
from gitfleet.repo.gitread import GitTree
from gitfleet.repo.mirror import LogEntry, Mirror
from gitfleet.repo.outputview import DirOutputView, GitOutputView, OutputView
from gitfleet.repo.signatures import CommitFiles
from gitfleet.repo.treefiles import TreeFiles
from gitfleet.repo.trust import verify_source
from gitfleet.repo.userrepo import is_repository, origin_url
from reconciler.describe import describe_cluster, describe_group_upgrade, describe_placement
from reconciler.history import (
    NO_HISTORY,
    HistoricalSources,
    SourceUnavailable,
    collect_sources,
    needed_snapshots,
)
from reconciler.pass_ import PassResult, reconcile
from reconciler.plan import Plan, plan_changes
from reconciler.priorparse import load_bounded
from reconciler.sourcepolicy import PolicyError, SourcePolicies
from reconciler.state import State, read_state
from renderers import load_fleet


def cache_dir(url: str, base: Path | None = None) -> Path:
    """A per-repository mirror directory under `base` or the user's cache directory."""
    root = base or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gitfleet"
    return root / "mirrors" / hashlib.sha256(url.encode()).hexdigest()[:16]


def open_mirror(url: str, branches: list[str], cache: Path | None = None) -> Mirror:
    """A mirror of `url` with `branches` fetched to `refs/remotes/origin/<branch>`."""
    mirror = Mirror.open(cache_dir(url, cache), url)
    mirror.fetch([f"+refs/heads/{b}:refs/remotes/origin/{b}" for b in branches])
    return mirror


def revision_history(repo: Path, fleet: FleetSnapshot, prior: State) -> HistoricalSources:
    """Older resource snapshots the pass may render (rollback, pins), read from `repo` at
    their recorded commits; a commit that is not there is that snapshot's error only."""
    needed = needed_snapshots(fleet, prior)
    if not needed:
        return NO_HISTORY

    def open_at(commit: str) -> FleetSnapshot:
        try:
            tree = GitTree.open(repo, commit)
        except GitError:
            raise SourceUnavailable("is not in this repository") from None
        with tree:
            return load_fleet(tree)

    return collect_sources(needed, open_at, current=fleet)


def render_revision(
    repo: Path, ref: str, prior: State, now: datetime, since: str | None = None
) -> PassResult:
    """The pure pass over the fleet as committed at `ref` (read from Git objects). With
    `since` (the base of a change), only the change's own commits approve held deletions."""
    return render_fleet(repo, load_revision(repo, ref, since), prior, now)


def load_revision(repo: Path, ref: str, since: str | None = None) -> FleetSnapshot:
    """The fleet as committed at `ref`; with `since`, its deletion approvals those of the
    change's own commits only."""
    with GitTree.open(repo, ref) as tree:
        fleet = load_fleet(tree)
        commit = tree.commit
    if since is not None and commit is not None:
        approved = approved_deletions(repo, since, commit, fleet.approval_files())
        fleet = replace(fleet, allowed_deletions=approved)
    return fleet


def render_fleet(repo: Path, fleet: FleetSnapshot, prior: State, now: datetime) -> PassResult:
    """The pure pass over a loaded fleet of `repo` (older snapshots read from its history)."""
    return reconcile(fleet, prior, None, now, history=revision_history(repo, fleet, prior))


@dataclass(frozen=True)
class PlanResult:
    plan: Plan
    base: str
    head: str
    waves: tuple[str, ...] = ()
    """Per placement that rolls in waves: `<key>: wave 1: 2 of 8 clusters (maxUnavailable 25%)`."""
    signatures: str = ""
    """What the hub would say about the head's new commits when the base asks for signed
    commits ("" when it does not)."""


MAX_WAVES = 100


def _waves(before: PassResult, first: PassResult) -> tuple[str, ...]:
    """Which clusters each placement's change reaches in the first pass (the rollout's wave 1)."""
    out = []
    for key, plan in sorted(first.plans.items()):
        live = set(plan.live_clusters())  # a new list each call: asked once, not per cluster
        changing = [c for c in plan.bound_clusters() if c in live]
        reached = [
            c
            for c in changing
            if before.files.get(cluster_index_path(c)) != first.files.get(cluster_index_path(c))
        ]
        waiting = [c for c, w in plan.waits.items() if w.startswith("waiting: maxUnavailable")]
        if waiting:
            total = len(reached) + len(waiting)
            out.append(
                f"{key}: wave 1: {len(reached)} of {total} clusters "
                f"(maxUnavailable {plan.rolling.max_unavailable})"
            )
        elif plan.rollout_note:
            out.append(f"{key}: {plan.rollout_note}")
    return tuple(out)


def plan_revisions(
    repo: Path,
    base: str,
    head: str,
    now: datetime,
    stage: Callable[[str], None] = lambda _name: None,
    state_from: str | None = None,
) -> PlanResult:
    """Render `base`, then `head` continuing from base's state, and compare the two outputs.
    No cluster credentials are used: cluster status is assumed joined and healthy. `stage` is
    told when each step starts (progress display). `state_from`: a revision of the output
    branch whose tree the base render continues from (its snapshot history: what a rollback
    needs), instead of a fresh start."""
    with ExitStack() as stack:
        start = State()
        if state_from is not None:
            stage(f"read the reconciler's state at {state_from}")
            out = stack.enter_context(GitTree.open(repo, state_from, sizes=False))
            start, _ = read_state(TreeFiles(out))  # blobs read when the pass asks, as the hub
        return _plan_from(repo, base, head, now, stage, start)


def _plan_from(
    repo: Path, base: str, head: str, now: datetime, stage: Callable[[str], None], start: State
) -> PlanResult:
    """`plan_revisions` once the state the base render continues from is known."""
    stage(f"load, schedule and render the base ({base})")
    before = render_revision(repo, base, start, now)
    prior, _ = read_state(before.files)
    stage(f"load, schedule and render the head ({head})")
    fleet = load_revision(repo, head, before_commit(repo, base))  # once: every wave reads it
    first = render_fleet(repo, fleet, State(prior.placements, before.files, prior.overrides), now)
    after = first
    for wave in range(MAX_WAVES):  # assumed-ready dry run: step the rollout to its end
        stage(f"step the rollout of the head (wave {wave + 2})")
        state, _ = read_state(after.files)
        step = render_fleet(repo, fleet, state, now)
        if step.files == after.files:
            break
        after = step
    stage("compare")
    errors = tuple(str(e) for e in after.errors)
    with GitTree.open(repo, base) as b, GitTree.open(repo, head) as h:
        base_id, head_id = b.commit or base, h.commit or head
    plan = plan_changes(before.files, after.files, errors, after.deletion_holds)
    return PlanResult(
        plan, base_id, head_id, _waves(before, first), signature_note(repo, base_id, head_id)
    )


def before_commit(repo: Path, ref: str) -> str | None:
    """The commit id of `ref` (None when it names none)."""
    with GitTree.open(repo, ref) as tree:
        return tree.commit


def signature_note(repo: Path, base: str, head: str) -> str:
    """The hub's verdict on `head`'s commits if `base` were the last reconciled commit ("" when
    base does not ask for signed commits). Under `commits: FirstParent` a pull request's own
    commits are on its first-parent chain: they count as they are, before any merge."""
    with CommitFiles(repo) as files:
        policies = SourcePolicies(files.read)
        try:
            if policies.policy_of(base) is None:
                return ""
            verdict = verify_source(repo, base, head, policies.policy_of)
        except (PolicyError, GitError) as exc:
            return f"SourceVerificationFailed: {exc}"
    if not verdict.ok:
        return f"{verdict.message} (the hub would hold this change)"
    return f"{verdict.checked} new commit(s) verified"


_TRACKING = "refs/gitfleet/tracking/"
"""Where a mirror of a local clone keeps the clone's `origin/<branch>` (remote-tracking) ref."""


class OutputBranchMissing(LookupError):
    """The output branch is not in the repository: a one-line reason and a hint for the user."""


def output_source(repo: str, fetch: bool) -> Path | str:
    """What `status`/`history` read for `--repo REPO`: a render directory (Path), a URL, or a
    local repository made absolute. With `fetch`, a clone is read through its `origin` URL so
    the newest output is seen. LookupError with a hint when REPO is none of these."""
    path = Path(repo)
    if not path.exists():
        return repo
    if (path / ".gitfleet-output").is_file():
        return path
    if not is_repository(path):
        raise OutputBranchMissing(
            f"{repo} is neither a git repository nor a `gitfleet render --out` directory"
        )
    if fetch:
        url = origin_url(path)
        if url is None:
            raise OutputBranchMissing(f"--fetch: {repo} has no `origin` remote to fetch from")
        local = Path(url) if Path(url).is_absolute() else path / url  # git's relative remotes
        return str(local.resolve()) if local.exists() else url
    return str(path.resolve())


def open_output(source: str, branch: str, cache: Path | None) -> tuple[Mirror, str]:
    """A mirror of `source` and the ref in it holding the output branch: the repository's own
    `refs/heads/<branch>`, or for a local clone its remote-tracking `origin/<branch>` (which
    the reconciler's pushes reach; preferred when both exist)."""
    local = Path(source).exists()
    specs = [f"+refs/heads/{branch}:refs/remotes/origin/{branch}"]
    if local:
        specs.append(f"+refs/remotes/origin/{branch}:{_TRACKING}{branch}")
    mirror = Mirror.open(cache_dir(source, cache), source)
    mirror.fetch(specs)
    for ref in ([f"{_TRACKING}{branch}"] if local else []) + [f"refs/remotes/origin/{branch}"]:
        if mirror.resolve(ref) is not None:
            return mirror, ref
    where = "a branch or origin/" + branch if local else "a branch"
    hint = (
        "pass --fetch to read it from the clone's origin, or --repo <the fleet's URL>"
        if local
        else "has the reconciler run yet? (`gitfleet reconcile --repo ... --once`)"
    )
    raise OutputBranchMissing(
        f"the output branch {branch} is not in {mirror.url} (looked for {where}); hint: {hint}"
    )


def _output_files(source: Path | str, branch: str, cache: Path | None) -> Mapping[str, bytes]:
    """The output tree from a render directory or from the output branch of a repository."""
    if isinstance(source, Path):
        return {
            p.relative_to(source).as_posix(): p.read_bytes()
            for p in source.rglob("*.yaml")
            if p.is_file()
        }
    mirror, ref = open_output(source, branch, cache)
    tree = GitTree.open(mirror.path, ref, sizes=False)
    try:
        return {p: tree.read(p) for p in tree.files() if p.startswith(("status/", "clusters/"))}
    finally:
        tree.close()


def output_files(source: Path | str, branch: str, cache: Path | None) -> Mapping[str, bytes]:
    """The status and cluster files of the output (a render directory or the output branch)."""
    return _output_files(source, branch, cache)


@contextmanager
def open_view(source: Path | str, branch: str, cache: Path | None) -> Iterator[OutputView]:
    """Named files of the output (a render directory, or the output branch's newest commit)."""
    if isinstance(source, Path):
        yield DirOutputView(source)
        return
    mirror, ref = open_output(source, branch, cache)
    commit = mirror.resolve(ref)
    if commit is None:
        raise OutputBranchMissing(f"the output branch {branch} is not in {mirror.url}")
    yield GitOutputView(mirror.path, commit)


def updaterun_files(
    source: Path | str, branch: str, cache: Path | None, name: str, namespace: str
) -> dict[str, bytes]:
    """The output files `gitfleet status updaterun NAME` shows (`outputread.run_files`)."""
    with open_view(source, branch, cache) as view:
        return run_files(view, name, namespace)


def status_document(
    what: str, name: str, namespace: str, source: Path | str, branch: str, cache: Path | None
) -> dict[str, Any]:
    """The output documents behind `gitfleet status placement|cluster|cgu NAME`, as data:
    `{"status": <the status document>}` (a placement's grouped per-cluster statuses expanded
    into one entry a cluster, as KubeFleet shows them), plus `"index"` (the cluster's index, each
    placement with its `objects`) for a cluster."""
    with open_view(source, branch, cache) as view:
        files = status_files(view, what, name, namespace)
    return status_from_files(files, what, name, namespace)


def describe(
    what: str, name: str, namespace: str, source: Path | str, branch: str, cache: Path | None
) -> str:
    """`gitfleet status placement|cluster|cgu NAME`: a describe-style view, or a clear error."""
    doc = status_document(what, name, namespace, source, branch, cache)
    note = hub_note(doc)
    if what == "cgu":
        return note + describe_group_upgrade(doc["status"])
    if what == "placement":
        return note + describe_placement(doc["status"])
    return note + describe_cluster(doc["status"], doc["index"])


def hub_document(source: Path | str, branch: str, cache: Path | None) -> dict[str, Any]:
    """`gitfleet status hub`: `{"status": <status/hub.yaml>}`, `{"status": None}` when the hub
    records no refusal of the source (the file exists only while it holds the source)."""
    with open_view(source, branch, cache) as view:
        files = view.read_many([HUB_STATUS_PATH])
    return {"status": load_bounded(files[HUB_STATUS_PATH]) if files else None}


def history_json(entries: list[LogEntry]) -> list[dict[str, Any]]:
    """`gitfleet history --output json`: one object per reconciler commit, newest first."""
    return [
        {
            "commit": e.commit,
            "parents": list(e.parents),
            "author": {"name": e.author_name, "email": e.author_email, "date": e.author_date},
            "subject": e.subject,
            "message": e.message,
            "trailers": {k: list(v) for k, v in sorted(e.trailers.items())},
        }
        for e in entries
    ]


def history(
    source: str,
    branch: str,
    placement: str | None,
    cluster: str | None,
    limit: int,
    cache: Path | None,
) -> list[LogEntry]:
    """Reconciler commits on the output branch, newest first, optionally filtered."""
    mirror, ref = open_output(source, branch, cache)
    paths = [f"clusters/{cluster}"] if cluster else []
    entries = mirror.log(ref, paths=paths, max_count=None if placement else limit)
    if placement:
        entries = [e for e in entries if placement in e.trailers.get("Gitfleet-Placement", [])]
    return entries[:limit]


def format_history(entries: list[LogEntry]) -> str:
    lines = []
    for e in entries:
        t = e.trailers
        source = (t.get("Gitfleet-Source") or ["-"])[-1][:12]
        who = (t.get("Gitfleet-Source-Author") or ["-"])[-1]
        lines.append(f"{e.commit[:12]}  {e.author_date}  source {source} by {who}")
        lines.append(f"    {e.subject}")
        requests = t.get("Gitfleet-Approval") or []
        if requests:
            who = ", ".join(t.get("Gitfleet-Approved-By") or ["(unknown)"])
            commits = ", ".join(c[:12] for c in t.get("Gitfleet-Approval-Commit") or [])
            lines.append(f"    approved {', '.join(requests)} by {who} (commit {commits or '-'})")
        for line in e.message.splitlines()[1:]:
            if line.strip() and not line.startswith("Gitfleet-"):
                lines.append(f"    {line}")
    return "\n".join(lines) + ("\n" if lines else "no reconciler commits found\n")

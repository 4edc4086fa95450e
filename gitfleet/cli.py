"""The `gitfleet` command: parse arguments, call the library, print results. Nothing else.

Commands: `init` (copy the starter fleet repository), `validate` (run the pass, write nothing,
list every error), `render` (run the pass offline and write the output tree to a directory),
`reconcile` (the hub loop on Git), `plan` (what a change does), `status` (describe a placement or
cluster), `history` (the audit trail).
Exit code 0 when there is no error, 1 when the fleet has user errors, 2 for bad usage.
"""

from __future__ import annotations

import json
import shutil
import sys
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click

from gitfleet import service
from gitfleet.api import MemberCluster, parse_duration, parse_time
from gitfleet.api.errors import FleetError
from gitfleet.load.model import FleetSnapshot
from gitfleet.load.statusdir import read_cluster_statuses
from gitfleet.repo.gitcmd import GitError
from gitfleet.repo.gitread import open_fleet_at
from gitfleet.repo.outdir import OutputError, read_output, write_output
from gitfleet.repo.tree import Tree
from gitfleet.repo.workdir import WorkdirTree
from gitfleet.watch import start_watcher
from reconciler import describe, planreport
from reconciler.loop import Hub, HubConfig, PassReport
from reconciler.output import placement_key
from reconciler.pass_ import PassResult, reconcile
from reconciler.state import State, read_state
from renderers import load_fleet

TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "fleet-repo-template"


@dataclass(frozen=True)
class Run:
    """One pass as the CLI ran it."""

    fleet: FleetSnapshot
    result: PassResult
    errors: tuple[FleetError, ...]


def _now(value: str | None) -> datetime:
    if value is None:
        return datetime.now(UTC).replace(microsecond=0)
    try:
        return parse_time(value)
    except ValueError as exc:
        raise click.BadParameter(
            f"not an RFC 3339 time: {value!r} ({exc})", param_hint="--now"
        ) from None


def _open_tree(fleet_dir: Path, ref: str | None) -> Tree:
    if ref is None:
        return WorkdirTree(fleet_dir)
    try:
        return open_fleet_at(fleet_dir, ref)
    except (GitError, ValueError, OSError) as exc:
        raise click.ClickException(f"cannot read the fleet at --ref {ref}: {exc}") from None


def _statuses(status_dir: Path | None) -> tuple[dict[str, MemberCluster] | None, list[FleetError]]:
    if status_dir is None:
        return None, []
    if not status_dir.is_dir():
        raise click.BadParameter(f"{status_dir} is not a directory", param_hint="--cluster-status")
    statuses, errors = read_cluster_statuses(WorkdirTree(status_dir))
    prefixed = [
        FleetError(f"{status_dir}/{e.file}", e.line, e.field, e.message, e.doc) for e in errors
    ]
    return statuses, prefixed


def run_pass(
    fleet_dir: Path, ref: str | None, status_dir: Path | None, prior: State, now: datetime
) -> Run:
    tree = _open_tree(fleet_dir, ref)
    try:
        fleet = load_fleet(tree)
    finally:
        close = getattr(tree, "close", None)
        if close is not None:
            close()
    statuses, status_errors = _statuses(status_dir)
    result = reconcile(fleet, prior, statuses, now)
    return Run(fleet, result, tuple(sorted(set(result.errors) | set(status_errors))))


def _print_errors(errors: tuple[FleetError, ...]) -> None:
    for err in errors:
        click.echo(str(err), err=True)


def _summary(run: Run) -> dict[str, object]:
    clusters = sorted({p.split("/")[1] for p in run.result.files if p.startswith("clusters/")})
    return {
        "commit": run.fleet.commit,
        "clusters": len(run.fleet.clusters),
        "clustersWithObjects": len(clusters),
        "placements": len(run.fleet.placements) + len(run.fleet.resource_placements),
        "resources": len(run.fleet.resources),
        "files": len(run.result.files),
        "errors": [str(e) for e in run.errors],
    }


fleet_argument = click.argument(
    "fleet",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=".",
    required=False,
)
ref_option = click.option(
    "--ref", help="Read the fleet at this Git revision (no checkout) instead of the working tree."
)
status_option = click.option(
    "--cluster-status",
    "status_dir",
    type=click.Path(path_type=Path),
    help="Folder of <cluster>.yaml MemberClusters with status (as in status/clusters/).",
)
now_option = click.option("--now", help="The pass's clock, RFC 3339 (makes output reproducible).")
output_option = click.option(
    "--output", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gitfleet")
def main() -> None:
    """Multi-cluster placement for Kubernetes with Git as the hub."""


@main.command()
@click.argument("directory", type=click.Path(path_type=Path))
def init(directory: Path) -> None:
    """Create a starter fleet repository in DIRECTORY (copied from fleet-repo-template/)."""
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise click.ClickException(f"{directory} exists and is not an empty directory")
    if not TEMPLATE_DIR.is_dir():
        raise click.ClickException(f"the fleet repository template is missing at {TEMPLATE_DIR}")
    shutil.copytree(TEMPLATE_DIR, directory, dirs_exist_ok=True, symlinks=False)
    click.echo(
        f"created {directory}: edit clusters/, resources/ and placements/, then `gitfleet validate {directory}`"
    )


@main.command()
@fleet_argument
@ref_option
@status_option
@now_option
@output_option
def validate(
    fleet: Path, ref: str | None, status_dir: Path | None, now: str | None, fmt: str
) -> None:
    """Load FLEET and run the full pass without writing; list every error as FILE:LINE: field: message."""
    run = run_pass(fleet, ref, status_dir, State(), _now(now))
    _report(run, fmt, "valid")


@main.command()
@fleet_argument
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory to write the output tree to.",
)
@ref_option
@status_option
@now_option
@output_option
@click.option("--fresh", is_flag=True, help="Ignore the state/ a previous render left in --out.")
def render(
    fleet: Path,
    out_dir: Path,
    ref: str | None,
    status_dir: Path | None,
    now: str | None,
    fmt: str,
    fresh: bool,
) -> None:
    """Render FLEET offline into OUT: clusters/, status/ and state/ as on the output branch."""
    prior = State()
    if not fresh and out_dir.is_dir():
        prior, problems = read_state(read_output(out_dir, ""))
        for problem in problems:
            click.echo(f"warning: {problem}", err=True)
    run = run_pass(fleet, ref, status_dir, prior, _now(now))
    try:
        written = write_output(out_dir, run.result.files)
    except (OutputError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    if fmt == "text":
        click.echo(
            f"wrote {out_dir}: {len(written.written)} changed, {len(written.unchanged)} unchanged, {len(written.removed)} removed"
        )
    _report(run, fmt, "rendered")


def _report(run: Run, fmt: str, verb: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(_summary(run), indent=2, sort_keys=True))
    else:
        _print_errors(run.errors)
        s = _summary(run)
        click.echo(
            f"{verb if not run.errors else 'errors found'}: {s['clusters']} cluster(s), "
            f"{s['placements']} placement(s), {s['resources']} resource(s), {len(run.errors)} error(s)"
        )
    sys.exit(1 if run.errors else 0)


def _repo_url(repo: str) -> str:
    """`--repo` as the mirror sees it: an existing local path made absolute, else the URL."""
    return str(Path(repo).resolve()) if Path(repo).exists() else repo


def _duration_seconds(text: str) -> float:
    try:
        return parse_duration(text).total_seconds()
    except ValueError as exc:
        raise click.BadParameter(
            f"not a duration like 30s or 2m: {text!r} ({exc})", param_hint="--interval"
        ) from None


def _hub_config(
    repo: str, source_branch: str, output_branch: str, cache: Path | None, accept: bool
) -> HubConfig:
    url = _repo_url(repo)
    return HubConfig(
        url=url,
        cache_dir=service.cache_dir(url, cache),
        source_branch=source_branch,
        output_branch=output_branch,
        accept_source_rewrite=accept,
    )


def _print_pass(report: PassReport) -> None:
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    output = f" output {report.output[:12]}" if report.output else ""
    click.echo(f"{stamp} {report.outcome}{output}: {report.message}")
    _print_errors(report.errors)


cache_option = click.option(
    "--cache-dir",
    "cache",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where private mirrors live (default: ~/.cache/gitfleet).",
)
output_branch_option = click.option(
    "--output-branch",
    default="gitfleet/rendered",
    show_default=True,
    help="The branch the reconciler writes.",
)


@main.command("reconcile")
@click.option(
    "--repo",
    required=True,
    help="The fleet repository: a URL (https, ssh, git://127.0.0.1) or a local path.",
)
@click.option("--source-branch", default="main", show_default=True)
@output_branch_option
@click.option(
    "--once", is_flag=True, help="Run one pass and exit (exit 1 if the fleet has errors)."
)
@click.option(
    "--interval", default="30s", show_default=True, help="Time between polls (Go duration)."
)
@click.option(
    "--accept-source-rewrite",
    is_flag=True,
    help="Continue after the source branch was force-pushed.",
)
@cache_option
def reconcile_cmd(
    repo: str,
    source_branch: str,
    output_branch: str,
    once: bool,
    interval: str,
    accept_source_rewrite: bool,
    cache: Path | None,
) -> None:
    """Keep OUTPUT-BRANCH equal to what the pass computes from SOURCE-BRANCH: one commit per
    pass that changed something, pushed fast-forward only."""
    seconds = _duration_seconds(interval)
    try:
        hub = Hub(_hub_config(repo, source_branch, output_branch, cache, accept_source_rewrite))
    except (GitError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    if once:
        report = hub.run_once()
        _print_pass(report)
        failed = report.outcome in (
            "source-unavailable",
            "rejected",
            "source-rewritten",
            "no-source",
        )
        sys.exit(1 if failed or report.errors else 0)
    stop, trigger = threading.Event(), threading.Event()
    watcher = start_watcher(Path(repo), trigger, stop) if Path(repo).exists() else None
    try:
        hub.run(seconds, trigger, stop, _print_pass)
    except KeyboardInterrupt:
        stop.set()
    finally:
        if watcher is not None:
            watcher.join(timeout=2)


@main.command()
@click.option(
    "--repo",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=".",
    show_default=True,
)
@click.option("--base", required=True, help="The revision the change starts from (e.g. main).")
@click.option("--head", required=True, help="The revision with the change (e.g. a PR branch).")
@click.option("--now", help="The pass's clock, RFC 3339.")
@click.option(
    "--output",
    "fmt",
    type=click.Choice(["markdown", "json", "text"]),
    default="text",
    show_default=True,
)
def plan(repo: Path, base: str, head: str, now: str | None, fmt: str) -> None:
    """Show which clusters gain or lose what between two revisions, without cluster credentials."""
    try:
        result = service.plan_revisions(repo, base, head, _now(now))
    except (GitError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    render = {
        "markdown": planreport.to_markdown,
        "json": planreport.to_json,
        "text": planreport.to_text,
    }[fmt]
    click.echo(render(result.plan, result.base, result.head), nl=False)
    sys.exit(1 if result.plan.errors else 0)


@main.command()
@click.argument("what", type=click.Choice(["placement", "cluster"]))
@click.argument("name")
@click.option("--namespace", "-n", default="", help="The namespace of a ResourcePlacement.")
@click.option(
    "--repo",
    default=".",
    show_default=True,
    help="Repository (path or URL) whose output branch to read, or a `render --out` directory.",
)
@output_branch_option
@cache_option
def status(
    what: str, name: str, namespace: str, repo: str, output_branch: str, cache: Path | None
) -> None:
    """Describe a placement or a cluster from the output branch, like `kubectl describe`."""
    source: Path | str = Path(repo) if Path(repo).exists() else repo
    if isinstance(source, Path) and not (source / ".gitfleet-output").is_file():
        source = str(source.resolve())
    try:
        click.echo(service.describe(what, name, namespace, source, output_branch, cache), nl=False)
    except (GitError, LookupError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


@main.command()
@click.option("--placement", help="Only commits that changed this placement.")
@click.option("--cluster", help="Only commits that changed this cluster's directory.")
@click.option("--repo", default=".", show_default=True, help="Repository (path or URL).")
@click.option("--max", "limit", default=50, show_default=True, type=int)
@output_branch_option
@cache_option
def history(
    placement: str | None,
    cluster: str | None,
    repo: str,
    limit: int,
    output_branch: str,
    cache: Path | None,
) -> None:
    """The audit trail: reconciler commits with their source commit and what changed."""
    url = _repo_url(repo)
    try:
        entries = service.history(url, output_branch, placement, cluster, limit, cache)
    except (GitError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(service.format_history(entries), nl=False)


@main.command("agent")
@click.option(
    "--repo",
    required=True,
    help="The fleet repository (URL or local path) holding the output branch.",
)
@click.option(
    "--cluster", required=True, help="This member cluster's name (its directory clusters/<name>/)."
)
@click.option(
    "--kubeconfig",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Kubeconfig file; without it the in-cluster service account is used.",
)
@click.option("--context", help="Kubeconfig context.")
@output_branch_option
@click.option("--once", is_flag=True, help="Run one pass and exit.")
@click.option(
    "--interval", default="30s", show_default=True, help="Time between passes (Go duration)."
)
@click.option(
    "--heartbeat",
    default="60s",
    show_default=True,
    help="Push a report at least this often (Go duration).",
)
@cache_option
def agent_cmd(
    repo: str,
    cluster: str,
    kubeconfig: Path | None,
    context: str | None,
    output_branch: str,
    once: bool,
    interval: str,
    heartbeat: str,
    cache: Path | None,
) -> None:
    """Apply clusters/CLUSTER/ of the output branch to this cluster and push a status report to
    gitfleet/status/CLUSTER."""
    from gitfleet.agent.gitloop import Agent, AgentConfig
    from gitfleet.agent.kube import KubeClusterClient

    url = _repo_url(repo)
    try:
        client = (
            KubeClusterClient.from_kubeconfig(str(kubeconfig), context)
            if kubeconfig
            else KubeClusterClient.in_cluster()
        )
        config = AgentConfig(
            url,
            cluster,
            service.cache_dir(f"agent:{cluster}:{url}", cache),
            output_branch,
            timedelta(seconds=_duration_seconds(heartbeat)),
        )
        agent = Agent(config, client)
    except (GitError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None

    def show(result: Any) -> None:
        click.echo(
            f"{datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')} {result.outcome}: {result.message}"
        )

    if once:
        result = agent.run_once()
        show(result)
        sys.exit(0 if result.outcome in ("pushed", "unchanged") else 1)
    stop = threading.Event()
    try:
        agent.run(_duration_seconds(interval), stop.is_set, show)
    except KeyboardInterrupt:
        stop.set()


@main.command()
@click.argument("what", type=click.Choice(["placement"]))
@click.argument("name")
@click.argument(
    "fleet",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=".",
    required=False,
)
@click.option("--namespace", "-n", default="", help="The namespace of a ResourcePlacement.")
@click.option("--cluster", help="Explain only this cluster.")
@ref_option
@status_option
@now_option
@click.option(
    "--output", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def explain(
    what: str,
    name: str,
    fleet: Path,
    namespace: str,
    cluster: str | None,
    ref: str | None,
    status_dir: Path | None,
    now: str | None,
    fmt: str,
) -> None:
    """Why each cluster was or was not picked: the first filter that rejected it (KubeFleet's
    reason strings), its scores and its rank."""
    run = run_pass(fleet, ref, status_dir, State(), _now(now))
    key = placement_key(name, namespace)
    if key not in run.result.explanations:
        raise click.ClickException(
            f"placement {key} is not in the fleet (or failed to load: run `gitfleet validate`)"
        )
    rows = describe.explanation_rows(run.result.explanations[key], cluster)
    if cluster is not None and not rows:
        raise click.ClickException(f"cluster {cluster} is not a member of the fleet")
    click.echo(
        json.dumps({"placement": key, "clusters": rows}, indent=2, sort_keys=True)
        if fmt == "json"
        else describe.describe_explanations(key, rows),
        nl=False,
    )

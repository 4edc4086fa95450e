"""Shared parts of the `gitfleet` command: the click group, common options, running one pass
and printing its errors. The command modules (`fleet`, `hub`, `agent`) register on `main`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import ParamSpec, TypeVar

import click

from gitfleet import __version__, service
from gitfleet.api import MemberCluster, parse_duration, parse_time
from gitfleet.api.errors import FleetError
from gitfleet.api.fleet import branch_problem
from gitfleet.api.names import is_dns1123_label
from gitfleet.api.report import AgentReport
from gitfleet.cli.progress import quiet_option, stages
from gitfleet.load.model import FleetSnapshot
from gitfleet.load.report import REPORT_FILE, read_agent_report
from gitfleet.load.statusdir import read_cluster_statuses
from gitfleet.repo.gitcmd import GitError
from gitfleet.repo.subtree import open_fleet_at
from gitfleet.repo.tree import Tree
from gitfleet.repo.userrepo import is_repository
from gitfleet.repo.workdir import WorkdirTree
from reconciler.heap import one_pass_heap
from reconciler.history import (
    NO_HISTORY,
    HistoricalSources,
    SourceUnavailable,
    collect_sources,
    needed_snapshots,
)
from reconciler.loop import HubConfig, PassReport
from reconciler.pass_ import PassResult, reconcile
from reconciler.stagememo import single_pass
from reconciler.state import State
from renderers import load_fleet

DISTRIBUTION = "gitfleet-k8s"
"""The name gitfleet is installed under (`pip install gitfleet-k8s`); the import package and the
command stay `gitfleet`. `gitfleet` on PyPI is an unrelated project."""


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


def read_reports_dir(
    reports_dir: Path | None,
) -> tuple[dict[str, AgentReport] | None, list[FleetError]]:
    """Agent reports as agents push them: `DIR/<cluster>.yaml` or `DIR/<cluster>/report.yaml`."""
    if reports_dir is None:
        return None, []
    if not reports_dir.is_dir():
        raise click.BadParameter(f"{reports_dir} is not a directory", param_hint="--reports")
    reports: dict[str, AgentReport] = {}
    errors: list[FleetError] = []
    for path in sorted(reports_dir.glob("*.yaml")) + sorted(reports_dir.glob(f"*/{REPORT_FILE}")):
        cluster = path.stem if path.parent == reports_dir else path.parent.name
        report, problems = read_agent_report(path.read_bytes(), cluster, file=str(path))
        errors += problems
        if report is not None:
            reports[cluster] = report
    return reports, errors


def fleet_history(fleet_dir: Path, fleet: FleetSnapshot, prior: State) -> HistoricalSources:
    """Older resource snapshots the pass may render (rollback, pins), read from the Git
    repository the fleet directory is in at their recorded commits; a commit that cannot be
    read is that snapshot's error only."""
    needed = needed_snapshots(fleet, prior)
    if not needed:
        return NO_HISTORY

    def open_at(commit: str) -> FleetSnapshot:
        try:
            tree = open_fleet_at(fleet_dir, commit)
        except (GitError, ValueError, OSError):
            if not is_repository(fleet_dir):
                raise SourceUnavailable(
                    f"cannot be read: {fleet_dir} is not inside a Git repository"
                ) from None
            raise SourceUnavailable("is not in this repository") from None
        try:
            return load_fleet(tree)
        finally:
            tree.close()

    return collect_sources(needed, open_at, current=fleet)


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _passes(remember: bool) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Run a command under the collector policy of one pass (`reconciler.heap.one_pass_heap`:
    the oldest generation is not walked again and again); unless it `remember`s, with stage
    memos that keep nothing (`reconciler.stagememo.single_pass`: no later pass reads them)."""

    def decorate(command: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(command)
        def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            with one_pass_heap(), contextlib.nullcontext() if remember else single_pass():
                return command(*args, **kwargs)

        return run

    return decorate


one_pass = _passes(remember=False)
"""A command that runs one pass and exits (`validate`, `render`, `explain`)."""
few_passes = _passes(remember=True)
"""A command that runs some passes and exits (`plan`: the head's pass reuses what the base's
pass remembered)."""


def run_pass(
    fleet_dir: Path,
    ref: str | None,
    status_dir: Path | None,
    prior: State,
    now: datetime,
    reports_dir: Path | None = None,
    *,
    lint: bool = False,
) -> Run:
    with stages() as stage:
        stage("load")
        tree = _open_tree(fleet_dir, ref)
        try:
            fleet = load_fleet(tree, lint=lint)
        finally:
            close = getattr(tree, "close", None)
            if close is not None:
                close()
        statuses, status_errors = _statuses(status_dir)
        reports, report_errors = read_reports_dir(reports_dir)
        history = fleet_history(fleet_dir, fleet, prior)
        stage("schedule and render")
        result = reconcile(fleet, prior, statuses, now, reports, history=history)
    errors = set(result.errors) | set(status_errors) | set(report_errors)
    return Run(fleet, result, tuple(sorted(errors)))


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
    } | _deletion_summary(run)


def _deletion_summary(run: Run) -> dict[str, object]:
    """`deletionsHeld` (only when the mass-deletion guard holds something)."""
    holds = [
        {
            "placement": h.key,
            "removedObjects": h.removed_objects,
            "totalObjects": h.total_objects,
            "removedClusters": h.removed_clusters,
            "totalClusters": h.total_clusters,
            "deletionBudget": h.budget,
            "message": h.message(),
        }
        for h in run.result.deletion_holds
    ]
    return {"deletionsHeld": holds} if holds else {}


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
reports_option = click.option(
    "--reports",
    "reports_dir",
    type=click.Path(path_type=Path),
    help="Folder of agent reports (<cluster>.yaml or <cluster>/report.yaml, as agents push "
    "them): they count as the agents' Applied/Available, so a dry run can step a rollout.",
)
now_option = click.option("--now", help="The pass's clock, RFC 3339 (makes output reproducible).")
output_option = click.option(
    "--output", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)


def _set_hub_key(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    """`--age-key-file` is the hub's SOPS key: sops and the loader read SOPS_AGE_KEY_FILE."""
    if value is not None:
        os.environ["SOPS_AGE_KEY_FILE"] = str(value.resolve())


hub_key_option = click.option(
    "--age-key-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    callback=_set_hub_key,
    expose_value=False,
    help="The hub's age key file: decrypts SOPS files and re-encrypts each Secret per cluster "
    "(default: $SOPS_AGE_KEY_FILE).",
)


STATUS_NAMESPACE = "gitfleet/status/"
"""Where agents push their reports; no other branch option may point there."""


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    version=__version__, package_name=DISTRIBUTION, message="%(prog)s %(version)s (%(package)s)"
)
@quiet_option
def main() -> None:
    """Multi-cluster placement for Kubernetes with Git as the hub."""


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
    if output_branch == source_branch:
        raise click.BadParameter(
            f"the output branch must differ from the source branch ({source_branch})",
            param_hint="--output-branch",
        )
    return HubConfig(
        url=url,
        cache_dir=service.cache_dir(url, cache),
        source_branch=source_branch,
        output_branch=output_branch,
        accept_source_rewrite=accept,
    )


def _print_pass(report: PassReport, fmt: str = "text") -> None:
    """One hub pass: a line (text), or one JSON object per line (`--output json`)."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if fmt == "json":
        doc = {
            "time": stamp,
            "outcome": report.outcome,
            "source": report.source,
            "output": report.output,
            "message": report.message,
            "errors": [str(e) for e in report.errors],
            "steps": _steps(report),
        }
        click.echo(json.dumps(doc, sort_keys=True))
        return
    output = f" output {report.output[:12]}" if report.output else ""
    click.echo(f"{stamp} {report.outcome}{output}: {report.message}")
    _print_errors(report.errors)


def _steps(report: PassReport) -> list[dict[str, object]]:
    """The pass's steps in order, each with its wall and CPU seconds (ms resolution); the
    `pass` step also with its stages (`reconciler.pass_.STAGES`)."""
    steps = _timed("step", report.timings, report.cpu_timings)
    for step in steps:
        if step["step"] == "pass" and report.stage_timings:
            step["stages"] = _timed("stage", report.stage_timings, report.stage_cpu_timings)
    return steps


def _timed(
    kind: str, timings: Sequence[tuple[str, float]], cpu_timings: Sequence[tuple[str, float]]
) -> list[dict[str, object]]:
    cpu = dict(cpu_timings)
    return [
        {kind: name, "seconds": round(seconds, 3), "cpuSeconds": round(cpu.get(name, 0.0), 3)}
        for name, seconds in timings
    ]


cache_option = click.option(
    "--cache-dir",
    "cache",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where private mirrors live (default: ~/.cache/gitfleet).",
)


def checked_branch(_ctx: click.Context, param: click.Parameter, value: str) -> str:
    """A branch option is refused unless it is a valid branch name outside the agents'
    `gitfleet/status/` namespace (it becomes `refs/heads/<value>`)."""
    problem = branch_problem(value)
    if problem is None and value.startswith(STATUS_NAMESPACE):
        problem = f"must not be under {STATUS_NAMESPACE} (the agents' status branches): {value}"
    if problem is not None:
        raise click.BadParameter(problem, param=param)
    return value


def checked_cluster(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A cluster name becomes a directory (`clusters/<name>/`) and a branch
    (`gitfleet/status/<name>`): it must be a DNS-1123 label, like a MemberCluster's name."""
    if value is None:
        return None
    problems = is_dns1123_label(value)
    if problems:
        raise click.BadParameter(f"{value!r}: {problems[0]}", param=param)
    return value


output_branch_option = click.option(
    "--output-branch",
    default="gitfleet/rendered",
    show_default=True,
    callback=checked_branch,
    help="The branch the reconciler writes.",
)

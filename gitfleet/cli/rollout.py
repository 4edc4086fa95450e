"""Commands for staged rollouts: `approve`, `updaterun stop|run` and `status updaterun`.
Registered on `gitfleet.cli.app.main` (`status updaterun` is a choice of the `status` command)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gitfleet import rolloutops, service
from gitfleet.cli.app import _now, cache_option, main, output_branch_option
from gitfleet.load.yamledit import EditError
from gitfleet.repo.gitcmd import GitError

repo_path_option = click.option(
    "--repo",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="Your clone of the fleet repository.",
)


@main.command()
@click.argument("run")
@click.argument("stage")
@repo_path_option
@click.option("--branch", help="Name of the new branch (default: approve/<request>).")
@click.option("--message", "-m", help="Why you approve (the Approved condition's message).")
@click.option(
    "--after/--before",
    "after",
    default=None,
    help="Which gate of the stage (default: the pending one).",
)
@click.option("--namespace", "-n", default="", help="The namespace of a StagedUpdateRun.")
@click.option("--base", default="main", show_default=True, help="The source branch the PR targets.")
@output_branch_option
@click.option("--now", help="Time of the approval, RFC 3339 (default: now).")
def approve(
    run: str,
    stage: str,
    repo: Path,
    branch: str | None,
    message: str | None,
    after: bool | None,
    namespace: str,
    base: str,
    output_branch: str,
    now: str | None,
) -> None:
    """Approve a waiting stage: commit approvals/<request>.yaml on a new branch (never pushed);
    merging the pull request is the approval."""
    when = None if after is None else ("after" if after else "before")
    try:
        done = rolloutops.approve(
            repo,
            run,
            stage,
            namespace=namespace,
            when=when,
            branch=branch,
            message=message,
            output_branch=output_branch,
            base=base,
            now=_now(now),
        )
    except (GitError, LookupError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"committed {done.path} on new branch {done.branch} ({done.commit[:12]})")
    click.echo(
        f"approval request {done.request}: open a pull request to {done.base}; merging it approves:"
    )
    for command in done.commands:
        click.echo(f"  {command}")


@main.group()
def updaterun() -> None:
    """Change a staged update run's spec.state in your source file (then commit and push)."""


def _set_state(repo: Path, name: str, namespace: str, state: str) -> None:
    try:
        file, old = rolloutops.set_run_state(repo, name, namespace, state)
    except (LookupError, EditError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    if old == state:
        click.echo(f"{file}: spec.state is already {state}")
    else:
        click.echo(f"{file}: spec.state {old} -> {state} (commit and open a pull request)")


@updaterun.command("stop")
@click.argument("name")
@repo_path_option
@click.option("--namespace", "-n", default="", help="The namespace of a StagedUpdateRun.")
def stop(name: str, repo: Path, namespace: str) -> None:
    """Set spec.state: Stop (in-flight clusters finish, no new ones start)."""
    _set_state(repo, name, namespace, "Stop")


@updaterun.command("run")
@click.argument("name")
@repo_path_option
@click.option("--namespace", "-n", default="", help="The namespace of a StagedUpdateRun.")
def run_cmd(name: str, repo: Path, namespace: str) -> None:
    """Set spec.state: Run (start, or resume a stopped run)."""
    _set_state(repo, name, namespace, "Run")


def describe_updaterun(
    name: str, namespace: str, repo: str, branch: str, cache: Path | None, fetch: bool = False
) -> str:
    """The text of `gitfleet status updaterun NAME` (called by the `status` command)."""
    source = service.output_source(repo, fetch)
    files = service.updaterun_files(source, branch, cache, name, namespace)
    return rolloutops.describe_run(files, name, namespace)


def updaterun_document(
    name: str, namespace: str, repo: str, branch: str, cache: Path | None, fetch: bool = False
) -> dict[str, Any]:
    """The data of `gitfleet status updaterun NAME --output json` (see `rolloutops.run_document`)."""
    source = service.output_source(repo, fetch)
    files = service.updaterun_files(source, branch, cache, name, namespace)
    return rolloutops.run_document(files, name, namespace)


__all__ = ["approve", "cache_option", "describe_updaterun", "updaterun", "updaterun_document"]

"""Commands on a fleet repository and its output branch: `reconcile`, `plan`, `status`, `history`. Registered on `gitfleet.cli.app.main`."""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import replace
from functools import partial
from pathlib import Path

import click

from gitfleet import service
from gitfleet.cli import rollout
from gitfleet.cli.app import (
    _duration_seconds,
    _hub_config,
    _now,
    _print_pass,
    cache_option,
    checked_branch,
    few_passes,
    hub_key_option,
    main,
    output_branch_option,
    output_option,
)
from gitfleet.cli.progress import quiet_option, stages
from gitfleet.outputread import hub_refusal
from gitfleet.repo.gitcmd import GitError
from gitfleet.watch import start_watcher
from reconciler import planreport
from reconciler.heap import one_pass_heap
from reconciler.loop import Hub
from reconciler.stagememo import single_pass


@main.group("reconcile", invoke_without_command=True)
@click.option(
    "--repo",
    help="The fleet repository: a URL (https, ssh, git://127.0.0.1) or a local path. Required.",
)
@click.option("--source-branch", default="main", show_default=True, callback=checked_branch)
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
@click.option(
    "--allowed-signers",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Reconcile only source commits signed by these keys (SSH allowed-signers file, or "
    "ASCII-armored GPG keys); replaces the fleet's spec.verification keys.",
)
@click.option(
    "--sign-key",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Sign every output commit with this SSH private key file (no passphrase).",
)
@cache_option
@output_option
@click.pass_context
@hub_key_option
def reconcile_cmd(
    ctx: click.Context,
    repo: str | None,
    source_branch: str,
    output_branch: str,
    once: bool,
    interval: str,
    accept_source_rewrite: bool,
    allowed_signers: Path | None,
    sign_key: Path | None,
    cache: Path | None,
    fmt: str,
) -> None:
    """Keep OUTPUT-BRANCH equal to what the pass computes from SOURCE-BRANCH: one commit per
    pass that changed something, pushed fast-forward only. `gitfleet reconcile manifests` prints
    a Deployment that runs it."""
    if ctx.invoked_subcommand is not None:
        return
    if not repo:
        raise click.UsageError("Missing option '--repo'.")
    seconds = _duration_seconds(interval)
    try:
        config = _hub_config(repo, source_branch, output_branch, cache, accept_source_rewrite)
        hub = Hub(
            replace(
                config, allowed_signers=allowed_signers, sign_key=sign_key, manage_heap=not once
            )
        )
    except (GitError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    if once:
        with one_pass_heap(), single_pass():
            report = hub.run_once()
        _print_pass(report, fmt)
        failed = report.outcome in (
            "source-unavailable",
            "rejected",
            "source-rewritten",
            "source-verification-failed",
            "no-source",
        )
        sys.exit(1 if failed or report.errors else 0)
    stop, trigger = threading.Event(), threading.Event()
    watcher = start_watcher(Path(repo), trigger, stop) if Path(repo).exists() else None
    try:
        hub.run(seconds, trigger, stop, partial(_print_pass, fmt=fmt))
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
@click.option(
    "--max-chars",
    type=click.IntRange(min=0),
    default=planreport.MAX_MARKDOWN_CHARS,
    show_default=True,
    help="Markdown: cut between sections to stay under this size (GitHub comments); 0: no limit.",
)
@click.option(
    "--state-from",
    help="Continue from the reconciler's state on this output revision (e.g. "
    "origin/gitfleet/rendered): the plan then knows the resource snapshot history, so it can "
    "preview a rollback to an older snapshot.",
)
@quiet_option
@hub_key_option
@few_passes
def plan(
    repo: Path,
    base: str,
    head: str,
    now: str | None,
    fmt: str,
    max_chars: int,
    state_from: str | None,
) -> None:
    """Show which clusters gain or lose what between two revisions, without cluster credentials."""
    try:
        with stages() as stage:
            result = service.plan_revisions(repo, base, head, _now(now), stage, state_from)
    except (GitError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    render = {
        "markdown": lambda p, b, h: planreport.to_markdown(
            p, b, h, max_chars or None, result.waves
        ),
        "json": planreport.to_json,
        "text": planreport.to_text,
    }[fmt]
    text = render(result.plan, result.base, result.head)
    if fmt == "json" and result.signatures:
        text = json.dumps(
            {**json.loads(text), "signatures": result.signatures}, indent=2, sort_keys=True
        )
    click.echo(text, nl=False)
    if fmt == "text" and result.waves:
        click.echo("\nRollout (the change reaches these clusters first):")
        for line in result.waves:
            click.echo(line)
    if fmt == "markdown" and result.signatures:
        click.echo(f"\n**Signed commits:** {result.signatures}")
    if fmt == "text" and result.signatures:
        click.echo(f"\nSigned commits: {result.signatures}")
    sys.exit(1 if result.plan.errors else 0)


fetch_option = click.option(
    "--fetch",
    is_flag=True,
    help="In a clone, read the output branch fresh from its origin remote.",
)


@main.command()
@click.argument("what", type=click.Choice(["placement", "cluster", "cgu", "updaterun", "hub"]))
@click.argument("name", required=False)
@click.option(
    "--namespace",
    "-n",
    default="",
    help="The namespace of a ResourcePlacement or ClusterGroupUpgrade (cgu: default `default`).",
)
@click.option(
    "--repo",
    default=".",
    show_default=True,
    help="Repository (path or URL) whose output branch to read, or a `render --out` directory.",
)
@output_branch_option
@fetch_option
@cache_option
@output_option
def status(
    what: str,
    name: str | None,
    namespace: str,
    repo: str,
    output_branch: str,
    fetch: bool,
    cache: Path | None,
    fmt: str,
) -> None:
    """Describe a placement, a cluster, a ClusterGroupUpgrade (cgu) or a staged update run from
    the output branch, like `kubectl describe` (`updaterun`: stages, gates, clusters, progress);
    `hub` (no NAME): whether the hub refuses the source branch's tip, and why."""
    if what == "hub":
        _hub_status(repo, output_branch, fetch, cache, fmt)
        return
    if not name:
        raise click.UsageError("Missing argument 'NAME'.")
    if what == "updaterun":
        try:
            if fmt == "json":
                doc = rollout.updaterun_document(name, namespace, repo, output_branch, cache, fetch)
                click.echo(json.dumps(doc, indent=2, sort_keys=True))
                return
            text = rollout.describe_updaterun(name, namespace, repo, output_branch, cache, fetch)
        except (GitError, LookupError, ValueError) as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(text, nl=False)
        return
    try:
        source = service.output_source(repo, fetch)
        if fmt == "json":
            doc = service.status_document(what, name, namespace, source, output_branch, cache)
            click.echo(json.dumps(doc, indent=2, sort_keys=True))
        else:
            text = service.describe(what, name, namespace, source, output_branch, cache)
            click.echo(text, nl=False)
    except (GitError, LookupError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


def _hub_status(repo: str, branch: str, fetch: bool, cache: Path | None, fmt: str) -> None:
    """`gitfleet status hub`: the HubStatus document, or that the hub refuses nothing."""
    try:
        doc = service.hub_document(service.output_source(repo, fetch), branch, cache)
    except (GitError, LookupError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    if fmt == "json":
        click.echo(json.dumps(doc, indent=2, sort_keys=True))
        return
    text = hub_refusal(doc["status"]) if doc["status"] is not None else ""
    click.echo(text or "Hub: no refused source commit recorded on the output branch\n", nl=False)


@main.command()
@click.option("--placement", help="Only commits that changed this placement.")
@click.option("--cluster", help="Only commits that changed this cluster's directory.")
@click.option("--repo", default=".", show_default=True, help="Repository (path or URL).")
@click.option("--max", "limit", default=50, show_default=True, type=int)
@output_branch_option
@fetch_option
@cache_option
@output_option
def history(
    placement: str | None,
    cluster: str | None,
    repo: str,
    limit: int,
    output_branch: str,
    fetch: bool,
    cache: Path | None,
    fmt: str,
) -> None:
    """The audit trail: reconciler commits with their source commit and what changed."""
    try:
        source = service.output_source(repo, fetch)
        if isinstance(source, Path):
            raise click.UsageError("history needs a git repository, not a render directory")
        entries = service.history(source, output_branch, placement, cluster, limit, cache)
    except (GitError, LookupError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    if fmt == "json":
        click.echo(json.dumps(service.history_json(entries), indent=2, sort_keys=True))
    else:
        click.echo(service.format_history(entries), nl=False)

"""The `agent` command: run the member agent for one cluster. Registered on `gitfleet.cli.app.main`."""

from __future__ import annotations

import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click

from gitfleet import service
from gitfleet.cli.app import (
    _duration_seconds,
    _repo_url,
    cache_option,
    checked_cluster,
    main,
    output_branch_option,
)
from gitfleet.repo.gitcmd import GitError


@main.command("agent")
@click.option(
    "--repo",
    required=True,
    help="The fleet repository (URL or local path) holding the output branch.",
)
@click.option(
    "--cluster",
    required=True,
    callback=checked_cluster,
    help="This member cluster's name (its directory clusters/<name>/).",
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

"""The `agent` command: run the member agent for one cluster. Registered on `gitfleet.cli.app.main`."""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click

from gitfleet import service
from gitfleet.agent.client import ClusterClient, ClusterError, Retryable
from gitfleet.cli.app import (
    DISTRIBUTION,
    _duration_seconds,
    _repo_url,
    cache_option,
    checked_cluster,
    main,
    output_branch_option,
    output_option,
)
from gitfleet.load.agecrypt import AgeKeyError, read_key
from gitfleet.repo.gitcmd import GitError

ONCE_ATTEMPTS = 3
"""Tries to reach the API server with `--once` before giving up (a long-running agent never
gives up)."""
RETRY_CAP = 60.0
"""Longest wait (seconds) between two tries to reach the API server at start-up."""


def client_factory(kubeconfig: Path | None, context: str | None) -> Callable[[], ClusterClient]:
    """How to build the Kubernetes client; a one-line error when the `[agent]` extra (the
    `kubernetes` package) is not installed."""
    try:
        from gitfleet.agent.kube import KubeClusterClient
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in ("kubernetes", "urllib3"):
            raise
        raise click.ClickException(
            "the agent needs the Kubernetes client, which is not installed: "
            f"pip install '{DISTRIBUTION}[agent]'"
        ) from None
    if kubeconfig is not None:
        return lambda: KubeClusterClient.from_kubeconfig(str(kubeconfig), context)
    return KubeClusterClient.in_cluster


def connect(factory: Callable[[], ClusterClient], once: bool) -> ClusterClient:
    """Build the client, retrying an unreachable API server with capped, jittered exponential
    backoff and saying so on stderr; a configuration problem is a one-line error."""
    rng = random.Random()
    attempt = 0
    while True:
        try:
            return factory()
        except Retryable as exc:
            attempt += 1
            if once and attempt >= ONCE_ATTEMPTS:
                raise click.ClickException(
                    f"{exc.message} (gave up after {attempt} tries)"
                ) from None
            delay = min(RETRY_CAP, 2.0 ** (attempt - 1)) * rng.uniform(0.5, 1.0)
            click.echo(f"{_stamp()} unavailable: {exc.message}; retrying in {delay:.1f}s", err=True)
            time.sleep(delay)
        except ClusterError as exc:
            raise click.ClickException(exc.message) from None


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@main.group("agent", invoke_without_command=True)
@click.option(
    "--repo",
    help="The fleet repository (URL or local path) holding the output branch. Required.",
)
@click.option(
    "--cluster",
    callback=checked_cluster,
    help="This member cluster's name (its directory clusters/<name>/). Required.",
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
@click.option(
    "--require-signed-output",
    is_flag=True,
    help="Apply only output commits signed by a key of --allowed-signers (the hub's --sign-key).",
)
@click.option(
    "--allowed-signers",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="SSH allowed-signers file (or ASCII-armored GPG keys) for --require-signed-output.",
)
@click.option(
    "--age-key-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="This cluster's age key file: decrypts the Secrets the hub encrypted for it "
    "(its public key goes on the MemberCluster annotation gitfleet.io/age-recipient).",
)
@cache_option
@output_option
@click.pass_context
def agent_cmd(
    ctx: click.Context,
    repo: str | None,
    cluster: str | None,
    kubeconfig: Path | None,
    context: str | None,
    output_branch: str,
    once: bool,
    interval: str,
    heartbeat: str,
    require_signed_output: bool,
    allowed_signers: Path | None,
    age_key_file: Path | None,
    cache: Path | None,
    fmt: str,
) -> None:
    """Apply clusters/CLUSTER/ of the output branch to this cluster and push a status report to
    gitfleet/status/CLUSTER. `gitfleet agent manifests` prints what installs it in a cluster."""
    if ctx.invoked_subcommand is not None:
        return
    if not repo or not cluster:
        raise click.UsageError(f"Missing option '{'--repo' if not repo else '--cluster'}'.")
    if require_signed_output != (allowed_signers is not None):
        raise click.UsageError("--require-signed-output and --allowed-signers go together.")
    from gitfleet.agent.gitloop import Agent, AgentConfig
    from gitfleet.agent.run import AgentOptions

    url = _repo_url(repo)
    client = connect(client_factory(kubeconfig, context), once)
    try:
        config = AgentConfig(
            url,
            cluster,
            service.cache_dir(f"agent:{cluster}:{url}", cache),
            output_branch,
            timedelta(seconds=_duration_seconds(heartbeat)),
            require_signed_output=require_signed_output,
            allowed_signers=allowed_signers,
        )
        key = read_key(age_key_file) if age_key_file is not None else None
        agent = Agent(config, client, options=AgentOptions(age_key=key))
    except (GitError, ValueError, OSError, AgeKeyError) as exc:
        raise click.ClickException(str(exc)) from None

    def show(result: Any) -> None:
        if fmt == "json":
            doc = {"time": _stamp(), "outcome": result.outcome, "message": result.message}
            click.echo(json.dumps(doc, sort_keys=True))
        else:
            click.echo(f"{_stamp()} {result.outcome}: {result.message}")

    if once:
        result = agent.run_once()
        show(result)
        sys.exit(0 if result.outcome in ("pushed", "unchanged") else 1)
    stop = threading.Event()
    try:
        agent.run(_duration_seconds(interval), stop.is_set, show)
    except KeyboardInterrupt:
        stop.set()

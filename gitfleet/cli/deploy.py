"""`gitfleet agent manifests` and `gitfleet reconcile manifests`: print the Kubernetes objects
that run the agent in a member cluster or the hub reconciler (`gitfleet.deploy`), as YAML
documents or a JSON `List`. Registered on the `agent` and `reconcile` groups.
"""

from __future__ import annotations

import json
from typing import Any

import click

from gitfleet.cli.agent import agent_cmd
from gitfleet.cli.app import output_branch_option
from gitfleet.cli.hub import reconcile_cmd
from gitfleet.deploy import DEFAULT_IMAGE, DEFAULT_RESOURCES, agent_manifests, hub_manifests
from gitfleet.load.yamlio import dump_yaml

image_option = click.option(
    "--image",
    default=DEFAULT_IMAGE,
    show_default=True,
    help="The gitfleet image (built from the Dockerfile, pushed to your registry).",
)
secret_option = click.option(
    "--secret",
    default="gitfleet-git",
    show_default=True,
    help="Secret with the Git credentials (ssh-privatekey + known_hosts, or username + password).",
)
format_option = click.option(
    "--output", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True
)


def _print(docs: list[dict[str, Any]], fmt: str) -> None:
    if fmt == "json":
        doc = {"apiVersion": "v1", "kind": "List", "items": docs}
        click.echo(json.dumps(doc, indent=2, sort_keys=True))
    else:
        click.echo("".join(f"---\n{dump_yaml(d)}" for d in docs), nl=False)


@agent_cmd.command("manifests")
@click.option("--cluster", required=True, help="The member cluster's name.")
@click.option("--repo", required=True, help="The fleet repository URL (ssh:// or https://).")
@image_option
@secret_option
@click.option(
    "--resource",
    "resources",
    multiple=True,
    help="[group/]resource the agent may apply and prune (repeat; default: common kinds).",
)
@output_branch_option
@format_option
def agent_manifests_cmd(
    cluster: str,
    repo: str,
    image: str,
    secret: str,
    resources: tuple[str, ...],
    output_branch: str,
    fmt: str,
) -> None:
    """Print the Namespace, ServiceAccount, RBAC and Deployment of CLUSTER's agent
    (`| kubectl apply -f -`). Create the Git credentials Secret first (see deploy/README.md)."""
    docs = agent_manifests(
        cluster,
        repo,
        image=image,
        secret=secret,
        output_branch=output_branch,
        resources=resources or DEFAULT_RESOURCES,
    )
    _print(docs, fmt)


@reconcile_cmd.command("manifests")
@click.option("--repo", required=True, help="The fleet repository URL (ssh:// or https://).")
@image_option
@secret_option
@click.option("--namespace", default="gitfleet-system", show_default=True)
@click.option("--source-branch", default="main", show_default=True)
@output_branch_option
@click.option("--interval", default="30s", show_default=True)
@format_option
def reconcile_manifests_cmd(
    repo: str,
    image: str,
    secret: str,
    namespace: str,
    source_branch: str,
    output_branch: str,
    interval: str,
    fmt: str,
) -> None:
    """Print the Namespace, ServiceAccount (no API access) and Deployment of the hub
    (`| kubectl apply -f -`). Create the Git credentials Secret first (see deploy/README.md)."""
    docs = hub_manifests(
        repo,
        image=image,
        secret=secret,
        namespace=namespace,
        source_branch=source_branch,
        output_branch=output_branch,
        interval=interval,
    )
    _print(docs, fmt)

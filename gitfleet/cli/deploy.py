"""`gitfleet agent manifests` and `gitfleet reconcile manifests`: print the Kubernetes objects
that run the agent in a member cluster or the hub reconciler (`gitfleet.deploy`), as YAML
documents or a JSON `List`. Keys are passed by the name of the Secret or ConfigMap holding them
(`gitfleet.deploy.KeyRefs`), never by value. Registered on the `agent` and `reconcile` groups.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

from gitfleet.api import is_dns1123_subdomain
from gitfleet.cli.agent import agent_cmd
from gitfleet.cli.app import output_branch_option
from gitfleet.cli.hub import reconcile_cmd
from gitfleet.deploy import (
    DEFAULT_IMAGE,
    DEFAULT_RESOURCES,
    KeyRefs,
    agent_manifests,
    hub_manifests,
)
from gitfleet.load.yamlio import dump_yaml

image_option = click.option(
    "--image",
    default=DEFAULT_IMAGE,
    show_default=True,
    help="The gitfleet image (built from the Dockerfile, pushed to your registry).",
)
F = TypeVar("F", bound=Callable[..., Any])


def _object_name(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A Secret or ConfigMap name: an RFC 1123 subdomain (usage error otherwise)."""
    if value is not None:
        problems = is_dns1123_subdomain(value)
        if problems:
            raise click.BadParameter(f"{value!r}: {problems[0]}", param=param)
    return value


secret_option = click.option(
    "--secret",
    default="gitfleet-git",
    show_default=True,
    callback=_object_name,
    help="Secret with the Git credentials (ssh-privatekey + known_hosts, or username + password).",
)


def age_key_secret_option(what: str) -> Callable[[F], F]:
    """`--age-key-secret`: the Secret holding an age identity (`what`)."""
    return click.option(
        "--age-key-secret",
        callback=_object_name,
        help=f"Secret holding {what} under the key `age.key`; mounted read-only and passed as "
        "--age-key-file.",
    )


def allowed_signers_option(what: str) -> Callable[[F], F]:
    """`--allowed-signers-configmap`: the ConfigMap holding public keys (`what`)."""
    return click.option(
        "--allowed-signers-configmap",
        callback=_object_name,
        help=f"ConfigMap holding {what} under the key `allowed_signers` (SSH allowed-signers "
        "lines or ASCII-armored GPG keys); mounted read-only and passed as --allowed-signers.",
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
@age_key_secret_option("this cluster's age identity (it decrypts the Secrets the hub sealed)")
@allowed_signers_option("the hub's public signing key (the agent then applies signed output only)")
@output_branch_option
@format_option
def agent_manifests_cmd(
    cluster: str,
    repo: str,
    image: str,
    secret: str,
    resources: tuple[str, ...],
    age_key_secret: str | None,
    allowed_signers_configmap: str | None,
    output_branch: str,
    fmt: str,
) -> None:
    """Print the Namespace, ServiceAccount, RBAC and Deployment of CLUSTER's agent
    (`| kubectl apply -f -`). Create the Git credentials Secret (and the key objects named)
    first (see deploy/README.md)."""
    docs = agent_manifests(
        cluster,
        repo,
        image=image,
        secret=secret,
        output_branch=output_branch,
        resources=resources or DEFAULT_RESOURCES,
        keys=KeyRefs(
            age_key_secret=age_key_secret, allowed_signers_configmap=allowed_signers_configmap
        ),
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
@age_key_secret_option("the hub's age identity (it decrypts SOPS files)")
@click.option(
    "--sign-key-secret",
    callback=_object_name,
    help="Secret holding the hub's SSH signing key under the key `ssh-privatekey` (no "
    "passphrase); mounted read-only and passed as --sign-key.",
)
@allowed_signers_option("the keys allowed to sign source commits")
@format_option
def reconcile_manifests_cmd(
    repo: str,
    image: str,
    secret: str,
    namespace: str,
    source_branch: str,
    output_branch: str,
    interval: str,
    age_key_secret: str | None,
    sign_key_secret: str | None,
    allowed_signers_configmap: str | None,
    fmt: str,
) -> None:
    """Print the Namespace, ServiceAccount (no API access) and Deployment of the hub
    (`| kubectl apply -f -`). Create the Git credentials Secret (and the key objects named)
    first (see deploy/README.md)."""
    keys = KeyRefs(age_key_secret, sign_key_secret, allowed_signers_configmap)
    docs = hub_manifests(
        repo,
        image=image,
        secret=secret,
        namespace=namespace,
        source_branch=source_branch,
        output_branch=output_branch,
        interval=interval,
        keys=keys,
    )
    _print(docs, fmt)

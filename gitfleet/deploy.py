"""Kubernetes manifests that install gitfleet: the member agent in one cluster
(`gitfleet agent manifests`) and the hub reconciler (`gitfleet reconcile manifests`).

`agent_manifests` returns the Namespace, ServiceAccount, least-privilege RBAC, the askpass
ConfigMap and the Deployment of one cluster's agent; `hub_manifests` the hub's. Git credentials
are never in the output: both reference a Secret the operator creates (`ssh-privatekey` and
`known_hosts` for ssh URLs, `username` and `password` for https URLs). Keys are referenced the
same way (`KeyRefs`): an age identity Secret (the hub's SOPS key, or a cluster's key), the hub's
SSH signing key Secret and an allowed-signers ConfigMap are mounted read-only and their paths
passed as `--age-key-file`, `--sign-key` and `--allowed-signers` (the agent adds
`--require-signed-output`). Pure: plain dicts; the CLI prints them as YAML. Documented in
deploy/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gitfleet import __version__

NAMESPACE = "gitfleet-system"
"""Where the agent runs and keeps its inventory ConfigMap."""
DEFAULT_IMAGE = f"gitfleet:{__version__}"
"""The image built from the repository's Dockerfile (push it to your registry)."""

READ_WRITE = ["get", "list", "watch", "create", "patch", "update", "delete"]
DEFAULT_RESOURCES = (
    "namespaces",
    "configmaps",
    "secrets",
    "services",
    "serviceaccounts",
    "apps/deployments",
    "apps/statefulsets",
    "apps/daemonsets",
    "batch/jobs",
    "batch/cronjobs",
    "networking.k8s.io/ingresses",
    "networking.k8s.io/networkpolicies",
    "policy/poddisruptionbudgets",
    "autoscaling/horizontalpodautoscalers",
)
"""Kinds the agent may apply, prune and check unless `--resource` says otherwise."""

SELF_RESOURCES = ("namespaces", "configmaps")
"""Always granted: the agent creates `gitfleet-system` and keeps its inventory ConfigMap there."""

AGE_KEY = "age.key"
"""The key of the age identity Secret (`--from-file=age.key=./hub.key`)."""
SIGN_KEY = "ssh-privatekey"
"""The key of the signing key Secret (as in a `kubernetes.io/ssh-auth` Secret)."""
ALLOWED_SIGNERS = "allowed_signers"
"""The key of the allowed-signers ConfigMap (public keys only: not a Secret)."""


@dataclass(frozen=True)
class KeyRefs:
    """Kubernetes objects, by name only, that hold the keys the hub or an agent uses."""

    age_key_secret: str | None = None
    """Secret with `age.key`: the hub's SOPS identity, or the cluster's own age identity."""
    sign_key_secret: str | None = None
    """Secret with `ssh-privatekey`: the hub signs its output commits with it (hub only)."""
    allowed_signers_configmap: str | None = None
    """ConfigMap with `allowed_signers`: the hub reconciles only source commits signed by these
    keys; an agent applies only output commits signed by them (the hub's signing key)."""


NO_KEYS = KeyRefs()

_MOUNTS = (
    ("age_key_secret", "age-key", "/etc/gitfleet/age", AGE_KEY, "--age-key-file"),
    ("sign_key_secret", "sign-key", "/etc/gitfleet/sign", SIGN_KEY, "--sign-key"),
    (
        "allowed_signers_configmap",
        "allowed-signers",
        "/etc/gitfleet/signers",
        ALLOWED_SIGNERS,
        "--allowed-signers",
    ),
)
"""(field of KeyRefs, volume, mount directory, key in the object, flag given the file)."""

_ASKPASS = """#!/bin/sh
# git asks for the username, then the password of an https remote: answer from the Secret.
case "$1" in
  Username*) cat /etc/gitfleet/git/username ;;
  *) cat /etc/gitfleet/git/password ;;
esac
"""


def _meta(name: str, namespace: str | None, component: str) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "labels": {"app.kubernetes.io/name": "gitfleet", "app.kubernetes.io/component": component},
    }
    if namespace:
        meta["namespace"] = namespace
    return meta


def _rules(resources: tuple[str, ...]) -> list[dict[str, Any]]:
    """One rule per API group for the placed kinds, plus what the agent itself reads."""
    groups: dict[str, list[str]] = {}
    for spec in (*SELF_RESOURCES, *resources):
        group, _, resource = spec.rpartition("/")
        groups.setdefault(group, []).append(resource)
    rules = [
        {"apiGroups": [g], "resources": sorted(set(r)), "verbs": READ_WRITE}
        for g, r in sorted(groups.items())
    ]
    rules += [
        {"apiGroups": [""], "resources": ["nodes", "pods"], "verbs": ["get", "list"]},
        {
            "apiGroups": ["apiextensions.k8s.io"],
            "resources": ["customresourcedefinitions"],
            "verbs": ["get", "list"],
        },
    ]
    return rules


def _git_auth(
    url: str, secret: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(env, volumes, mounts) that give git the credentials of `secret` for `url`."""
    if url.startswith("https://"):
        env = [{"name": "GIT_ASKPASS", "value": "/etc/gitfleet/askpass/askpass"}]
        volumes = [
            {"name": "git", "secret": {"secretName": secret, "defaultMode": 0o440}},
            {"name": "askpass", "configMap": {"name": "gitfleet-askpass", "defaultMode": 0o555}},
        ]
        mounts = [
            {"name": "git", "mountPath": "/etc/gitfleet/git", "readOnly": True},
            {"name": "askpass", "mountPath": "/etc/gitfleet/askpass", "readOnly": True},
        ]
        return env, volumes, mounts
    ssh = (
        "ssh -i /etc/gitfleet/git/ssh-privatekey -o IdentitiesOnly=yes "
        "-o UserKnownHostsFile=/etc/gitfleet/git/known_hosts -o StrictHostKeyChecking=yes"
    )
    env = [{"name": "GIT_SSH_COMMAND", "value": ssh}]
    volumes = [{"name": "git", "secret": {"secretName": secret, "defaultMode": 0o440}}]
    return env, volumes, [{"name": "git", "mountPath": "/etc/gitfleet/git", "readOnly": True}]


def _key_mounts(
    keys: KeyRefs,
) -> tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]]:
    """(args, volumes, mounts) for the referenced keys: each object mounted read-only with only
    its one key, and the file's path passed with the flag the command reads."""
    args: list[str] = []
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    for field_name, volume, directory, key, flag in _MOUNTS:
        name = getattr(keys, field_name)
        if name is None:
            continue
        items = [{"key": key, "path": key}]
        if field_name.endswith("_configmap"):
            source = {"configMap": {"name": name, "items": items, "defaultMode": 0o444}}
        else:
            source = {"secret": {"secretName": name, "items": items, "defaultMode": 0o440}}
        volumes.append({"name": volume, **source})
        mounts.append({"name": volume, "mountPath": directory, "readOnly": True})
        args += [flag, f"{directory}/{key}"]
    return args, volumes, mounts


def _deployment(
    name: str,
    namespace: str,
    component: str,
    image: str,
    args: list[str],
    url: str,
    secret: str,
    keys: KeyRefs,
) -> dict[str, Any]:
    env, volumes, mounts = _git_auth(url, secret)
    key_args, key_volumes, key_mounts = _key_mounts(keys)
    args = [*args, *key_args]
    volumes += key_volumes
    mounts += key_mounts
    env.append({"name": "XDG_CACHE_HOME", "value": "/cache"})
    # the root filesystem is read-only: git (signing, verification), helm, kustomize and sops
    # need a writable temporary directory
    volumes += [{"name": "cache", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}]
    mounts += [{"name": "cache", "mountPath": "/cache"}, {"name": "tmp", "mountPath": "/tmp"}]
    labels = {"app.kubernetes.io/name": "gitfleet", "app.kubernetes.io/component": component}
    container = {
        "name": component,
        "image": image,
        "args": args,
        "env": env,
        "volumeMounts": mounts,
        "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "runAsUser": 10001,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(name, namespace, component),
        "spec": {
            "replicas": 1,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": name,
                    "automountServiceAccountToken": component == "agent",
                    # fsGroup makes the mounted Secret readable by the non-root user
                    "securityContext": {"runAsNonRoot": True, "fsGroup": 10001},
                    "containers": [container],
                    "volumes": volumes,
                },
            },
        },
    }


def _common(name: str, namespace: str, component: str, url: str) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(namespace, None, component)},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": _meta(name, namespace, component),
            "automountServiceAccountToken": component == "agent",
        },
    ]
    if url.startswith("https://"):
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": _meta("gitfleet-askpass", namespace, component),
                "data": {"askpass": _ASKPASS},
            }
        )
    return docs


def agent_manifests(
    cluster: str,
    url: str,
    *,
    image: str = DEFAULT_IMAGE,
    secret: str = "gitfleet-git",
    output_branch: str = "gitfleet/rendered",
    resources: tuple[str, ...] = DEFAULT_RESOURCES,
    keys: KeyRefs = NO_KEYS,
) -> list[dict[str, Any]]:
    """Everything one member cluster's agent needs, except the Git credentials Secret and the
    key objects `keys` names. The hub's signing key is refused here: an agent never signs."""
    if keys.sign_key_secret is not None:
        raise ValueError("an agent signs nothing: a signing key Secret is for the hub only")
    name = "gitfleet-agent"
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": _meta(name, None, "agent"),
        "rules": _rules(resources),
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": _meta(name, None, "agent"),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": NAMESPACE}],
    }
    args = ["agent", "--repo", url, "--cluster", cluster, "--output-branch", output_branch]
    if keys.allowed_signers_configmap is not None:
        args.append("--require-signed-output")
    deployment = _deployment(name, NAMESPACE, "agent", image, args, url, secret, keys)
    return [*_common(name, NAMESPACE, "agent", url), role, binding, deployment]


def hub_manifests(
    url: str,
    *,
    image: str = DEFAULT_IMAGE,
    secret: str = "gitfleet-git",
    namespace: str = NAMESPACE,
    source_branch: str = "main",
    output_branch: str = "gitfleet/rendered",
    interval: str = "30s",
    keys: KeyRefs = NO_KEYS,
) -> list[dict[str, Any]]:
    """The hub reconciler: it needs no Kubernetes API access at all (no RBAC, no token). `keys`:
    its SOPS age identity, its output signing key and the allowed signers of source commits."""
    name = "gitfleet-hub"
    args = ["reconcile", "--repo", url, "--source-branch", source_branch]
    args += ["--output-branch", output_branch, "--interval", interval]
    deployment = _deployment(name, namespace, "hub", image, args, url, secret, keys)
    return [*_common(name, namespace, "hub", url), deployment]

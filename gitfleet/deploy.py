"""Kubernetes manifests that install gitfleet: the member agent in one cluster
(`gitfleet agent manifests`) and the hub reconciler (`gitfleet reconcile manifests`).

`agent_manifests` returns the Namespace, ServiceAccount, least-privilege RBAC, the askpass
ConfigMap and the Deployment of one cluster's agent; `hub_manifests` the hub's. Git credentials
are never in the output: both reference a Secret the operator creates (`ssh-privatekey` and
`known_hosts` for ssh URLs, `username` and `password` for https URLs). Pure: plain dicts; the
CLI prints them as YAML. Documented in deploy/README.md.
"""

from __future__ import annotations

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


def _deployment(
    name: str, namespace: str, component: str, image: str, args: list[str], url: str, secret: str
) -> dict[str, Any]:
    env, volumes, mounts = _git_auth(url, secret)
    env.append({"name": "XDG_CACHE_HOME", "value": "/cache"})
    volumes.append({"name": "cache", "emptyDir": {}})
    mounts.append({"name": "cache", "mountPath": "/cache"})
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
) -> list[dict[str, Any]]:
    """Everything one member cluster's agent needs, except the Git credentials Secret."""
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
    deployment = _deployment(name, NAMESPACE, "agent", image, args, url, secret)
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
) -> list[dict[str, Any]]:
    """The hub reconciler: it needs no Kubernetes API access at all (no RBAC, no token)."""
    name = "gitfleet-hub"
    args = ["reconcile", "--repo", url, "--source-branch", source_branch]
    args += ["--output-branch", output_branch, "--interval", interval]
    deployment = _deployment(name, namespace, "hub", image, args, url, secret)
    return [*_common(name, namespace, "hub", url), deployment]

"""What no placement may ever reach on a member cluster: reserved namespaces and the agent's own
objects.

Reserved namespaces are KubeFleet's (`kube-*`, `fleet-*`, `default`) plus gitfleet's own
`gitfleet-system`, where the agent keeps its inventory. The agent's own objects are everything
in `gitfleet-system`, that Namespace itself, and its cluster-scoped RBAC (`ClusterRole` /
`ClusterRoleBinding` named `gitfleet-agent*`). The hub refuses them in every placement's output
whatever path produced them (selection, a ResourcePlacement living in one, an object's
`metadata.namespace`, an override, a template), and the agent refuses them again (defence in
depth) and never prunes them. Called by `reconciler.select.policy`, `reconciler.assemble` and
`gitfleet.agent.apply` / `gitfleet.agent.inventory`.
"""

from __future__ import annotations

RESERVED_PREFIXES = ("fleet-", "kube-")
AGENT_NAMESPACE = "gitfleet-system"
RESERVED_NAMES = frozenset({"default", AGENT_NAMESPACE})
AGENT_RBAC_PREFIX = "gitfleet-agent"
_RBAC_GROUP = "rbac.authorization.k8s.io"
_CLUSTER_RBAC = frozenset({"ClusterRole", "ClusterRoleBinding"})


def is_reserved_namespace(name: str, skipped: frozenset[str] = frozenset()) -> bool:
    """`fleet-*`, `kube-*`, `default`, `gitfleet-system` and operator-configured ones."""
    return name.startswith(RESERVED_PREFIXES) or name in RESERVED_NAMES or name in skipped


def refused_object(api_version: str, kind: str, namespace: str, name: str) -> str | None:
    """Why a placement may not place, patch or prune this object; None when it may."""
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    if namespace and is_reserved_namespace(namespace):
        return f"namespace {namespace} is reserved: no placement may place objects in it"
    if not namespace and group == "" and kind == "Namespace" and is_reserved_namespace(name):
        return f"namespace {name} is reserved: no placement may place it"
    if group == _RBAC_GROUP and kind in _CLUSTER_RBAC and name.startswith(AGENT_RBAC_PREFIX):
        return f"{kind} {name} is the gitfleet agent's own RBAC: no placement may place it"
    return None

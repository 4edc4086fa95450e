"""The narrow protocol through which the agent talks to a Kubernetes API server.

`ClusterClient` is everything the agent needs: discovery (apiVersion/kind -> resource and scope),
get, list by label selector, server-side apply (field manager, force, dry-run), merge patch and
delete. Failures are typed (`NotFound`, `Conflict`, `Invalid`, `Throttled`, `ServerError`) so
the apply pipeline can decide what to report and what to retry. Implemented by
`gitfleet.agent.memory.InMemoryCluster` (tests) and `gitfleet.agent.kube.KubeClusterClient`
(a real cluster); wrapped by `gitfleet.agent.retry.RetryingClient`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

FIELD_MANAGER = "gitfleet"
"""The field manager every gitfleet write uses."""

Propagation = Literal["Background", "Foreground", "Orphan"]
Obj = dict[str, Any]


@dataclass(frozen=True)
class ResourceInfo:
    """What discovery says about one kind: its REST resource and whether it is namespaced."""

    api_version: str
    kind: str
    resource: str
    namespaced: bool


class ClusterError(Exception):
    """Base of every typed API failure; `message` is safe to report (no Secret values)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(ClusterError):
    """The object, its namespace or its resource type does not exist (HTTP 404)."""


class Conflict(ClusterError):
    """Server-side apply field conflicts (names the other managers) or a stale resourceVersion."""

    def __init__(self, message: str, managers: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.managers = managers


class Invalid(ClusterError):
    """The API server rejected the object (HTTP 422 / 400); never retried."""


class Retryable(ClusterError):
    """A failure worth retrying with backoff."""


class Throttled(Retryable):
    """HTTP 429 Too Many Requests."""


class ServerError(Retryable):
    """HTTP 5xx, or the server could not be reached."""


class ClusterClient(Protocol):
    """The operations the agent performs on a member cluster."""

    def discover(self, api_version: str, kind: str) -> ResourceInfo:
        """The resource of a kind; `NotFound` when the server does not serve it."""
        ...

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> Obj | None:
        """The live object, or None when it does not exist."""
        ...

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[Obj]:
        """Objects of a kind (in `namespace`, or everywhere) whose labels include `labels`."""
        ...

    def apply(
        self, obj: Mapping[str, Any], *, field_manager: str, force: bool, dry_run: bool
    ) -> Obj:
        """Server-side apply; returns the resulting object (not stored when `dry_run`)."""
        ...

    def patch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        patch: Mapping[str, Any],
        *,
        field_manager: str,
    ) -> Obj:
        """JSON merge patch (RFC 7386) of the main resource; `NotFound` when absent."""
        ...

    def delete(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        propagation: Propagation = "Background",
    ) -> None:
        """Delete (objects with finalizers only get a deletionTimestamp); `NotFound` when absent."""
        ...


def identity_of(obj: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """(apiVersion, kind, namespace or '', name) of an object."""
    meta = obj.get("metadata") or {}
    return (
        str(obj.get("apiVersion", "")),
        str(obj.get("kind", "")),
        str(meta.get("namespace") or ""),
        str(meta.get("name", "")),
    )

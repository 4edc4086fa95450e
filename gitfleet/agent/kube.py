"""`KubeClusterClient`: the `ClusterClient` on the official `kubernetes` client (dynamic client).

The only module that imports `kubernetes`. Server-side apply is a PATCH with content type
`application/apply-patch+yaml` (field manager `gitfleet` unless told otherwise); API errors map
to the typed errors of `gitfleet.agent.client` (404 NotFound, 409 Conflict with the conflicting
managers, 400/422 Invalid, 429 Throttled, 5xx and connection failures ServerError). Discovery is
cached and refreshed once when a kind is not found (a CRD may have just been established).
Exercised by the e2e tests on kind, not by unit tests (there is no API server there).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from kubernetes import config as kube_config
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ResourceNotFoundError
from urllib3.exceptions import HTTPError

from gitfleet.agent.client import (
    ClusterError,
    Conflict,
    Invalid,
    NotFound,
    Obj,
    Propagation,
    ResourceInfo,
    ServerError,
    Throttled,
)
from gitfleet.repo.gitcmd import redact_url

T = TypeVar("T")
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\")]+)")
_MANAGER = re.compile(r'conflict with "([^"]+)"')


class KubeClusterClient:
    """A `ClusterClient` talking to a real API server."""

    def __init__(self, api_client: ApiClient) -> None:
        self._dyn: Any = cast(Any, DynamicClient)(api_client)

    @classmethod
    def from_kubeconfig(
        cls, path: str | None = None, context: str | None = None
    ) -> KubeClusterClient:
        """A client from a kubeconfig file (default location when `path` is None).
        `ClusterError` for an unusable kubeconfig, `ServerError` for an unreachable server."""
        try:
            api_client = cast(Any, kube_config).new_client_from_config(
                config_file=path, context=context
            )
        except (kube_config.ConfigException, OSError, ValueError, KeyError, TypeError) as exc:
            raise ClusterError(f"cannot use kubeconfig {path or '(default)'}: {exc}") from None
        return cls._connect(api_client)

    @classmethod
    def in_cluster(cls) -> KubeClusterClient:
        """A client from the pod's service account. `ClusterError` when not running in a pod,
        `ServerError` for an unreachable server."""
        try:
            cast(Any, kube_config).load_incluster_config()
        except (kube_config.ConfigException, OSError) as exc:
            raise ClusterError(
                f"no in-cluster configuration ({exc}); outside a pod pass --kubeconfig PATH"
            ) from None
        return cls._connect(ApiClient())

    @classmethod
    def _connect(cls, api_client: ApiClient) -> KubeClusterClient:
        """The client; discovery runs now, so an unreachable server is a `ServerError`."""
        host = redact_url(str(getattr(api_client.configuration, "host", "") or "?"))
        try:
            return cls(api_client)
        except ApiException as exc:
            raise _typed(int(exc.status or 0), f"{host}: {_message(exc)}") from None
        except (HTTPError, OSError) as exc:
            raise ServerError(f"the API server {host} is unreachable: {_reason(exc)}") from None

    def _resource(self, api_version: str, kind: str) -> Any:
        try:
            return self._dyn.resources.get(api_version=api_version, kind=kind)
        except ResourceNotFoundError:
            self._dyn.resources.invalidate_cache()
        try:
            return self._dyn.resources.get(api_version=api_version, kind=kind)
        except ResourceNotFoundError:
            raise NotFound(f'the server does not serve {api_version} "{kind}"') from None

    def discover(self, api_version: str, kind: str) -> ResourceInfo:
        res = _call(lambda: self._resource(api_version, kind))
        return ResourceInfo(api_version, kind, str(res.name), bool(res.namespaced))

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> Obj | None:
        res = _call(lambda: self._resource(api_version, kind))
        try:
            return _call(lambda: _plain(self._dyn.get(res, name=name, namespace=namespace)))
        except NotFound:
            return None

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[Obj]:
        res = _call(lambda: self._resource(api_version, kind))
        selector = ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or None
        result = _call(
            lambda: _plain(self._dyn.get(res, namespace=namespace, label_selector=selector))
        )
        return [dict(item) for item in result.get("items") or []]

    def apply(
        self, obj: Mapping[str, Any], *, field_manager: str, force: bool, dry_run: bool
    ) -> Obj:
        res = _call(lambda: self._resource(str(obj.get("apiVersion")), str(obj.get("kind"))))
        meta = obj.get("metadata") or {}
        return _call(
            lambda: _plain(
                self._dyn.server_side_apply(
                    res,
                    body=dict(obj),
                    name=meta.get("name"),
                    namespace=meta.get("namespace"),
                    field_manager=field_manager,
                    force_conflicts=force,
                    dry_run="All" if dry_run else None,
                )
            )
        )

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
        res = _call(lambda: self._resource(api_version, kind))
        return _call(
            lambda: _plain(
                self._dyn.patch(
                    res,
                    body=dict(patch),
                    name=name,
                    namespace=namespace,
                    content_type="application/merge-patch+json",
                    field_manager=field_manager,
                )
            )
        )

    def delete(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        propagation: Propagation = "Background",
    ) -> None:
        res = _call(lambda: self._resource(api_version, kind))
        _call(
            lambda: self._dyn.delete(
                res, name=name, namespace=namespace, propagation_policy=propagation
            )
        )


def _plain(result: Any) -> Obj:
    """A ResourceInstance (or dict) as plain JSON data."""
    data = result.to_dict() if hasattr(result, "to_dict") else result
    return dict(json.loads(json.dumps(data)))


def _call(fn: Callable[[], T]) -> T:
    """Run `fn`, mapping API and transport failures to the typed errors."""
    try:
        return fn()
    except ClusterError:
        raise
    except ApiException as exc:
        raise _typed(int(exc.status or 0), _message(exc)) from None
    except (HTTPError, OSError) as exc:
        raise ServerError(f"the API server is unreachable: {type(exc).__name__}") from None


def _reason(exc: Exception) -> str:
    """Why a connection failed, in words (`Connection refused`), else the exception's type."""
    found = _ERRNO.search(str(getattr(exc, "reason", None) or exc))
    return found.group(1).strip() if found else type(exc).__name__


def _message(exc: ApiException) -> str:
    try:
        body = json.loads(exc.body or "{}")
    except (TypeError, ValueError):
        return f"HTTP {exc.status} {exc.reason}"
    return str(body.get("message") or f"HTTP {exc.status} {exc.reason}")


def _typed(status: int, message: str) -> ClusterError:
    if status == 404:
        return NotFound(message)
    if status == 409:
        return Conflict(message, tuple(sorted(set(_MANAGER.findall(message)))))
    if status in (400, 422):
        return Invalid(message)
    if status == 429:
        return Throttled(message)
    if status >= 500 or status == 0:
        return ServerError(message)
    return ClusterError(f"HTTP {status}: {message}")

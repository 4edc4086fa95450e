"""Availability of an applied object per kind, exactly KubeFleet's availability tracker (§2.5).

`availability(obj)` -> (state, message) with state Available / NotYetAvailable / NotTrackable
(Job, CronJob, custom resources and any unknown kind; reported as available-but-untrackable).
Data-only kinds are available at once. Called by `gitfleet.agent.apply` after a successful apply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from gitfleet.agent.builtin import group_of

State = Literal["Available", "NotYetAvailable", "NotTrackable"]
Obj = Mapping[str, Any]

DATA_KINDS = frozenset(
    {
        "Namespace",
        "Secret",
        "ConfigMap",
        "Role",
        "ClusterRole",
        "RoleBinding",
        "ClusterRoleBinding",
        "ServiceAccount",
        "NetworkPolicy",
        "CSIDriver",
        "CSINode",
        "StorageClass",
        "CSIStorageCapacity",
        "ControllerRevision",
        "IngressClass",
        "LimitRange",
        "ResourceQuota",
        "PriorityClass",
    }
)
_CORE_GROUPS = frozenset(
    {
        "",
        "apps",
        "batch",
        "rbac.authorization.k8s.io",
        "networking.k8s.io",
        "storage.k8s.io",
        "scheduling.k8s.io",
        "policy",
        "apiextensions.k8s.io",
    }
)


def availability(obj: Obj) -> tuple[State, str]:
    """(state, message) of one live object."""
    kind = str(obj.get("kind", ""))
    if group_of(str(obj.get("apiVersion", ""))) not in _CORE_GROUPS:
        return "NotTrackable", f"{kind} is a custom resource; its availability cannot be tracked"
    if kind in DATA_KINDS:
        return "Available", f"{kind} is available once applied"
    check = _CHECKS.get(kind)
    if check is None:
        return "NotTrackable", f"the availability of {kind} cannot be tracked"
    return check(obj)


def _status(obj: Obj) -> Mapping[str, Any]:
    return obj.get("status") or {}


def _current_generation(obj: Obj) -> bool:
    generation = (obj.get("metadata") or {}).get("generation")
    return _status(obj).get("observedGeneration") == generation


def _replicas(obj: Obj) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def _verdict(ok: bool, kind: str, detail: str) -> tuple[State, str]:
    if ok:
        return "Available", f"{kind} is available"
    return "NotYetAvailable", f"{kind} is not available yet: {detail}"


def _deployment(obj: Obj) -> tuple[State, str]:
    status, required = _status(obj), _replicas(obj)
    ok = (
        _current_generation(obj)
        and status.get("availableReplicas", 0) == required
        and status.get("updatedReplicas", 0) == required
        and status.get("unavailableReplicas", 0) == 0
    )
    detail = f"{status.get('availableReplicas', 0)}/{required} replicas available and updated"
    return _verdict(ok, "Deployment", detail)


def _statefulset(obj: Obj) -> tuple[State, str]:
    status, required = _status(obj), _replicas(obj)
    ok = (
        _current_generation(obj)
        and status.get("availableReplicas", 0) == required
        and status.get("currentReplicas", 0) == status.get("updatedReplicas", 0)
        and status.get("currentRevision", "") == status.get("updateRevision", "")
    )
    detail = f"{status.get('availableReplicas', 0)}/{required} replicas available, revision rolling"
    return _verdict(ok, "StatefulSet", detail)


def _daemonset(obj: Obj) -> tuple[State, str]:
    status = _status(obj)
    ok = (
        _current_generation(obj)
        and status.get("numberAvailable", 0) == status.get("desiredNumberScheduled", 0)
        and status.get("currentNumberScheduled", 0) == status.get("updatedNumberScheduled", 0)
    )
    detail = f"{status.get('numberAvailable', 0)}/{status.get('desiredNumberScheduled', 0)} pods available"
    return _verdict(ok, "DaemonSet", detail)


def _service(obj: Obj) -> tuple[State, str]:
    spec = obj.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    if kind in ("ClusterIP", "NodePort"):
        ips = spec.get("clusterIPs") or []
        return _verdict(bool(ips) and bool(ips[0]), "Service", "no cluster IP allocated")
    if kind == "LoadBalancer":
        ingress = (_status(obj).get("loadBalancer") or {}).get("ingress") or []
        first = ingress[0] if ingress and isinstance(ingress[0], Mapping) else {}
        ok = bool(first.get("ip") or first.get("hostname"))
        return _verdict(ok, "Service", "no load balancer ingress yet")
    return "NotTrackable", f"the availability of a {kind} Service cannot be tracked"


def _condition(obj: Obj, type_: str) -> Mapping[str, Any] | None:
    for cond in _status(obj).get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == type_:
            return cond
    return None


def _crd(obj: Obj) -> tuple[State, str]:
    ok = all(
        (c := _condition(obj, t)) is not None and c.get("status") == "True"
        for t in ("Established", "NamesAccepted")
    )
    return _verdict(ok, "CustomResourceDefinition", "not Established with names accepted")


def _pdb(obj: Obj) -> tuple[State, str]:
    cond = _condition(obj, "DisruptionAllowed")
    if cond is None or not _current_generation(obj):
        return "NotYetAvailable", "PodDisruptionBudget is not available yet: not observed"
    if int(_status(obj).get("disruptionsAllowed", 0)) > 0:
        ok = cond.get("status") == "True" and cond.get("reason") == "SufficientPods"
    else:
        ok = cond.get("status") == "False" and cond.get("reason") == "InsufficientPods"
    return _verdict(
        ok, "PodDisruptionBudget", "DisruptionAllowed does not match disruptionsAllowed"
    )


_CHECKS: dict[str, Callable[[Obj], tuple[State, str]]] = {
    "Deployment": _deployment,
    "StatefulSet": _statefulset,
    "DaemonSet": _daemonset,
    "Service": _service,
    "CustomResourceDefinition": _crd,
    "PodDisruptionBudget": _pdb,
}

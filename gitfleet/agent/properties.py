"""Cluster properties and resource usage from Node and Pod objects.

As KubeFleet's built-in property collection: `kubernetes-fleet.io/node-count` is the number of
Nodes; capacity and allocatable are the sums of the Nodes' `status.capacity` /
`status.allocatable` for `cpu` and `memory`; available = allocatable minus the sum of the
container requests of every pod bound to a node that is not terminated (phase neither Succeeded
nor Failed), floored at zero. Only regular containers' requests are summed (init containers and
pod overhead are not: a documented simplification). Quantities are rendered canonically (`4`, `3500m`, `16Gi`,
`1000Ki`, plain bytes). Called by `gitfleet.agent.run.run_once`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from fractions import Fraction
from typing import Any

from gitfleet.agent.client import ClusterClient
from gitfleet.api import PropertyValue, ResourceUsage, format_time
from gitfleet.api.quantity import QuantityError, parse_quantity

NODE_COUNT = "kubernetes-fleet.io/node-count"
RESOURCES = ("cpu", "memory")


def collect_properties(
    client: ClusterClient, now: datetime
) -> tuple[dict[str, PropertyValue], ResourceUsage]:
    """(properties, resourceUsage) observed at `now`."""
    nodes = client.list("v1", "Node")
    pods = client.list("v1", "Pod")
    stamp = format_time(now)
    capacity = _sum(n.get("status", {}).get("capacity") or {} for n in nodes)
    allocatable = _sum(n.get("status", {}).get("allocatable") or {} for n in nodes)
    requested = _sum(_pod_requests(p) for p in pods if _running(p))
    available = {r: max(Fraction(0), allocatable[r] - requested[r]) for r in RESOURCES}
    usage = ResourceUsage(
        capacity=_render(capacity),
        allocatable=_render(allocatable),
        available=_render(available),
        observation_time=stamp,
    )
    return {NODE_COUNT: PropertyValue(value=str(len(nodes)), observation_time=stamp)}, usage


def _running(pod: Mapping[str, Any]) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return bool((pod.get("spec") or {}).get("nodeName")) and phase not in ("Succeeded", "Failed")


def _pod_requests(pod: Mapping[str, Any]) -> dict[str, str]:
    total = {r: Fraction(0) for r in RESOURCES}
    for container in (pod.get("spec") or {}).get("containers") or []:
        requests = (container.get("resources") or {}).get("requests") or {}
        for name, value in _sum([requests]).items():
            total[name] += value
    return {name: _plain(value) for name, value in total.items()}


def _sum(items: Iterable[Mapping[str, Any]]) -> dict[str, Fraction]:
    total = {r: Fraction(0) for r in RESOURCES}
    for item in items:
        for name in RESOURCES:
            if name in item:
                try:
                    total[name] += parse_quantity(str(item[name])).value
                except QuantityError:
                    continue
    return total


def _plain(value: Fraction) -> str:
    """Exact decimal text of a quantity value (milli precision is enough for requests)."""
    return f"{value.numerator * 1000 // value.denominator}m"


def _render(values: Mapping[str, Fraction]) -> dict[str, str]:
    return {"cpu": format_cpu(values["cpu"]), "memory": format_memory(values["memory"])}


def format_cpu(value: Fraction) -> str:
    """Whole cores as `4`, otherwise millicores rounded down (`3500m`)."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator * 1000 // value.denominator}m"


def format_memory(value: Fraction) -> str:
    """Bytes with the largest binary suffix that divides them exactly (`16Gi`, `1000Ki`)."""
    whole = value.numerator // value.denominator
    for suffix, size in (
        ("Ei", 2**60),
        ("Pi", 2**50),
        ("Ti", 2**40),
        ("Gi", 2**30),
        ("Mi", 2**20),
        ("Ki", 2**10),
    ):
        if whole and whole % size == 0:
            return f"{whole // size}{suffix}"
    return str(whole)

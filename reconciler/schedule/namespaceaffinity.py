"""NamespaceAffinity plugin: a ResourcePlacement needs its namespace on the cluster (§1.3.3).

Skipped for ClusterResourcePlacements. A cluster whose status carries the
`NamespaceCollectionSucceeded` condition (any status) must report `status.namespaces` and list the
placement's namespace there; clusters that do not collect namespaces pass.
Registered in `profile`.
"""

from __future__ import annotations

from .clusters import ClusterView
from .framework import SUCCESS, CycleState, Plugin, Status, skip, unschedulable

NAME = "NamespaceAffinity"
COLLECTION_CONDITION = "NamespaceCollectionSucceeded"
NO_INFORMATION = "cluster has no namespace information available"
NO_NAMESPACE = "target namespace does not exist on cluster"


class NamespaceAffinityPlugin(Plugin):
    """Filter: the ResourcePlacement's namespace exists on the cluster."""

    name = NAME
    static = True

    def pre_filter(self, state: CycleState) -> Status:
        if state.placement.namespace is None:
            return skip(NAME, "cluster-scoped placement does not require namespace affinity")
        return SUCCESS

    def filter(self, state: CycleState, view: ClusterView) -> Status:
        status = view.cluster.status
        if status is None or not any(
            c.type == COLLECTION_CONDITION for c in status.conditions or []
        ):
            return SUCCESS
        if status.namespaces is None:
            return unschedulable(NAME, NO_INFORMATION)
        if state.placement.namespace not in status.namespaces:
            return unschedulable(NAME, NO_NAMESPACE)
        return SUCCESS

"""ReplicaDistribution (gitfleet.io/v1alpha1): split one placed workload's replicas over subsets
of member clusters with UnitedDeployment's allocator (spec/replica-distribution.md §2).

The model checks shapes and types only (plus name rules); the allocation rules whose failure
makes the distribution `InvalidSpec` while it keeps its last good result (§8) are checked by
`reconciler.distribute.validate`, so an invalid distribution still reaches the pass and reports.
Called by the loader (`parse_object`) and `reconciler.distribute`.
"""

from __future__ import annotations

from typing import Any, Literal

from gitfleet.api.base import KubeModel, check_namespace, check_object_name, prefix
from gitfleet.api.errors import FieldIssue
from gitfleet.api.meta import KubeObject
from gitfleet.api.selectors import LabelSelector, LabelSelectorRequirement


class WorkloadReference(KubeModel):
    """The workload a placement already places: apiVersion, kind, name (namespace = the RD's)."""

    api_version: str
    kind: str
    name: str


class NodeSelectorTerm(KubeModel):
    """A node selector term; only matchExpressions act (matchFields is an InvalidSpec)."""

    match_expressions: list[LabelSelectorRequirement] | None = None
    match_fields: list[dict[str, Any]] | None = None


class Subset(KubeModel):
    """One group of member clusters and its share of the replicas."""

    name: str = ""
    cluster_selector: LabelSelector | None = None
    cluster_names: list[str] | None = None
    replicas: int | str | None = None
    min_replicas: int | str | None = None
    max_replicas: int | str | None = None
    node_selector_term: NodeSelectorTerm | None = None
    tolerations: list[dict[str, Any]] | None = None
    patch: dict[str, Any] | None = None


class ScheduleStrategy(KubeModel):
    """Only `Fixed` (or empty) is supported; checked by the distribute validation."""

    type: str = ""
    adaptive: dict[str, Any] | None = None


class Topology(KubeModel):
    subsets: list[Subset] | None = None
    schedule_strategy: ScheduleStrategy | None = None


class ManualUpdate(KubeModel):
    partitions: dict[str, int] | None = None


class DistributionUpdateStrategy(KubeModel):
    type: str = ""
    manual_update: ManualUpdate | None = None


class ReplicaDistributionSpec(KubeModel):
    workload: WorkloadReference
    replicas: int | None = None
    topology: Topology = Topology()
    update_strategy: DistributionUpdateStrategy | None = None


class ReplicaDistribution(KubeObject):
    """Namespaced: the workload's namespace."""

    api_version: Literal["gitfleet.io/v1alpha1"]
    kind: Literal["ReplicaDistribution"]
    spec: ReplicaDistributionSpec
    status: dict[str, Any] | None = None

    def validate_rules(self) -> list[FieldIssue]:
        issues = super().validate_rules()
        issues += check_object_name(self.name, file_name=True)
        issues += check_namespace(self.namespace)
        for i, subset in enumerate(self.spec.topology.subsets or []):
            if subset.cluster_selector is not None:
                where = f"spec.topology.subsets[{i}].clusterSelector"
                issues += prefix(where, subset.cluster_selector.validate_rules())
        return issues

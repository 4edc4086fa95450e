"""Which kinds are cluster-scoped, decided without an API server.

The rule, in order:
1. a CustomResourceDefinition among the payload resources decides its own group/kind
   (`spec.scope`); the operator may add cluster-scoped kinds (CRDs installed outside the fleet);
2. a built-in table names the cluster-scoped kinds of Kubernetes' own API groups and of
   well-known add-ons (Kueue, cert-manager, Gateway API, Karpenter, Kyverno, ...); any other kind
   of those groups is namespaced;
3. a kind of any other group (a custom resource whose CRD is not in the repository) is decided
   from its objects: cluster-scoped when none of them sets `metadata.namespace`, else
   namespaced (and an object of it without a namespace is an error, never dropped).
Built once per pass by `reconciler.select.index.build_index`; read by the selector and the
envelope checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from gitfleet.api.errors import FieldIssue

if TYPE_CHECKING:
    from gitfleet.load.model import Resource

GroupKind = tuple[str, str]

_BUILTIN: dict[str, tuple[str, ...]] = {
    "": ("Namespace", "Node", "PersistentVolume", "ComponentStatus"),
    "rbac.authorization.k8s.io": ("ClusterRole", "ClusterRoleBinding"),
    "apiextensions.k8s.io": ("CustomResourceDefinition",),
    "storage.k8s.io": (
        "StorageClass",
        "CSIDriver",
        "CSINode",
        "VolumeAttachment",
        "VolumeAttributesClass",
    ),
    "scheduling.k8s.io": ("PriorityClass",),
    "networking.k8s.io": ("IngressClass", "IPAddress", "ServiceCIDR"),
    "node.k8s.io": ("RuntimeClass",),
    "apiregistration.k8s.io": ("APIService",),
    "admissionregistration.k8s.io": (
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
    ),
    "flowcontrol.apiserver.k8s.io": ("FlowSchema", "PriorityLevelConfiguration"),
    "certificates.k8s.io": ("CertificateSigningRequest", "ClusterTrustBundle"),
    "resource.k8s.io": ("DeviceClass", "ResourceSlice"),
    "storagemigration.k8s.io": ("StorageVersionMigration",),
    "internal.apiserver.k8s.io": ("StorageVersion",),
    "authentication.k8s.io": ("TokenReview", "SelfSubjectReview"),
    "authorization.k8s.io": (
        "SubjectAccessReview",
        "SelfSubjectAccessReview",
        "SelfSubjectRulesReview",
    ),
    "placement.kubernetes-fleet.io": (
        "ClusterResourceEnvelope",
        "ClusterResourcePlacement",
        "ClusterResourceBinding",
        "ClusterResourceSnapshot",
        "ClusterSchedulingPolicySnapshot",
        "ClusterStagedUpdateRun",
        "ClusterStagedUpdateStrategy",
        "ClusterApprovalRequest",
        "ClusterResourcePlacementEviction",
        "ClusterResourcePlacementDisruptionBudget",
        "ClusterResourceOverride",
        "ClusterResourceOverrideSnapshot",
    ),
    "cluster.kubernetes-fleet.io": ("MemberCluster", "InternalMemberCluster"),
    "kueue.x-k8s.io": (
        "ResourceFlavor",
        "ClusterQueue",
        "Cohort",
        "WorkloadPriorityClass",
        "AdmissionCheck",
        "MultiKueueCluster",
        "MultiKueueConfig",
        "ProvisioningRequestConfig",
        "Topology",
    ),
    "cert-manager.io": ("ClusterIssuer",),
    "trust.cert-manager.io": ("Bundle",),
    "gateway.networking.k8s.io": ("GatewayClass",),
    "karpenter.sh": ("NodePool", "NodeClaim"),
    "karpenter.k8s.aws": ("EC2NodeClass",),
    "kyverno.io": ("ClusterPolicy", "ClusterCleanupPolicy"),
    "templates.gatekeeper.sh": ("ConstraintTemplate",),
    "snapshot.storage.k8s.io": ("VolumeSnapshotClass", "VolumeSnapshotContent"),
    "external-secrets.io": ("ClusterSecretStore", "ClusterExternalSecret"),
    "keda.sh": ("ClusterTriggerAuthentication",),
    "argoproj.io": ("ClusterWorkflowTemplate",),
}
_NAMESPACED_ONLY_GROUPS = (
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "extensions",
    "multicluster.x-k8s.io",
    "monitoring.coreos.com",
    "networking.istio.io",
    "security.istio.io",
    "cluster.x-k8s.io",
    "ray.io",
)
KNOWN_GROUPS: frozenset[str] = frozenset(_BUILTIN) | frozenset(_NAMESPACED_ONLY_GROUPS)
"""Groups whose scopes the built-in table decides (kinds not listed as cluster-scoped are
namespaced); kinds of other groups without a CRD are decided from their objects."""
BUILTIN_CLUSTER_SCOPED: frozenset[GroupKind] = frozenset(
    (group, kind) for group, kinds in _BUILTIN.items() for kind in kinds
)

CRD_GROUP = "apiextensions.k8s.io"
CRD_KIND = "CustomResourceDefinition"


@dataclass(frozen=True, eq=False)
class ScopeTable:
    """Cluster-scoped and CRD-declared kinds, plus CRD plurals (for KubeFleet-style messages)."""

    cluster: frozenset[GroupKind] = BUILTIN_CLUSTER_SCOPED
    plurals: Mapping[GroupKind, str] = field(default_factory=dict)

    def is_cluster_scoped(self, group: str, kind: str) -> bool:
        return (group, kind) in self.cluster

    @cached_property
    def content(self) -> tuple[Any, ...]:
        """The table as a comparable value (tables compare by identity; a stage that reuses a
        result across passes compares this)."""
        return (tuple(sorted(self.cluster)), tuple(sorted(self.plurals.items())))

    def resource_string(self, group: str, version: str, kind: str) -> str:
        """Go's `GroupVersionResource.String()`: `group/version, Resource=plural`."""
        plural = self.plurals.get((group, kind)) or guess_plural(kind)
        return f"{group}/{version}, Resource={plural}"


BUILTIN_SCOPES = ScopeTable()


def guess_plural(kind: str) -> str:
    """kubectl's `UnsafeGuessKindToResource`: lower-case, then s / es / ies."""
    singular = kind.lower()
    if not singular or singular.endswith("endpoints"):
        return singular
    if singular.endswith("s"):
        return singular + "es"
    if singular.endswith("y"):
        return singular[:-1] + "ies"
    return singular + "s"


def crd_declaration(obj: Mapping[str, Any]) -> tuple[GroupKind, str, str] | FieldIssue:
    """`((group, kind), scope, plural)` declared by a CRD manifest, or what is wrong with it."""
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return FieldIssue("spec", "a CustomResourceDefinition needs a spec")
    names = spec.get("names")
    names = names if isinstance(names, Mapping) else {}
    group, kind, plural = spec.get("group"), names.get("kind"), names.get("plural")
    if not isinstance(group, str) or not group:
        return FieldIssue("spec.group", "must be a non-empty string")
    if not isinstance(kind, str) or not kind:
        return FieldIssue("spec.names.kind", "must be a non-empty string")
    scope = spec.get("scope")
    if scope not in ("Namespaced", "Cluster"):
        return FieldIssue("spec.scope", "must be Namespaced or Cluster")
    return (group, kind), str(scope), plural if isinstance(plural, str) else ""


def build_scope_table(
    resources: Sequence[Resource], extra_cluster_scoped: Iterable[GroupKind] = ()
) -> tuple[ScopeTable, dict[int, FieldIssue]]:
    """The pass's scope table; issues are keyed by the position of the bad CRD in `resources`.

    A CRD overrides the built-in table for its group/kind. Two CRDs declaring the same
    group/kind with different scopes: the first (in resource order) wins, the other is an error.
    """
    cluster = set(BUILTIN_CLUSTER_SCOPED) | set(extra_cluster_scoped)
    plurals: dict[GroupKind, str] = {}
    declared: dict[GroupKind, str] = {}
    issues: dict[int, FieldIssue] = {}
    for pos, res in enumerate(resources):
        if (res.group, res.kind) != (CRD_GROUP, CRD_KIND):
            continue
        decl = crd_declaration(res.obj)
        if isinstance(decl, FieldIssue):
            issues[pos] = decl
            continue
        group_kind, scope, plural = decl
        if declared.get(group_kind, scope) != scope:
            issues[pos] = FieldIssue(
                "spec.scope",
                f"{group_kind[1]}.{group_kind[0]} is declared by another CRD with "
                f"scope {declared[group_kind]}",
            )
            continue
        declared[group_kind] = scope
        if plural:
            plurals[group_kind] = plural
        if scope == "Cluster":
            cluster.add(group_kind)
        else:
            cluster.discard(group_kind)
    cluster |= infer_cluster_scoped(resources, declared.keys() | set(extra_cluster_scoped))
    return ScopeTable(frozenset(cluster), plurals), issues


def infer_cluster_scoped(
    resources: Sequence[Resource], decided: Iterable[GroupKind]
) -> set[GroupKind]:
    """Kinds of unknown groups, without a CRD, none of whose objects sets a namespace."""
    skip = set(decided)
    namespaced: dict[GroupKind, bool] = {}
    for res in resources:
        group_kind = (res.group, res.kind)
        if res.group in KNOWN_GROUPS or group_kind in skip:
            continue
        namespaced[group_kind] = namespaced.get(group_kind, False) or bool(res.namespace)
    return {group_kind for group_kind, has_ns in namespaced.items() if not has_ns}

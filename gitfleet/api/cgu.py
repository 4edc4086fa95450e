"""ClusterGroupUpgrade (ran.openshift.io/v1alpha1): TALM's batch upgrade, driving External
placements in gitfleet (spec/cluster-group-upgrade.md §3).

Same apiVersion, kind and field names as TALM, so existing YAML loads. Shape and type errors
are load errors; `batchTimeoutAction` values and the unsupported upstream fields (`backup`,
`preCaching`, `manifestWorkTemplates`) are judged by the driver (`reconciler.rollout.cgu`),
which reports them as `Validated=False` (InvalidSpec / UnsupportedField). A `status` stanza in
the source file is accepted and ignored (the hub writes status to the output branch).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from gitfleet.api.base import KubeModel, check_namespace, check_object_name
from gitfleet.api.errors import FieldIssue
from gitfleet.api.meta import KubeObject, key_path
from gitfleet.api.names import is_label_value, is_qualified_name
from gitfleet.api.selectors import LabelSelector

BLOCKING_MODE_ANNOTATION = "ran.openshift.io/blocking-cgu-completion-mode"
CLUSTER_FILTERING_ANNOTATION = "ran.openshift.io/blocking-cgu-cluster-filtering"
SOAK_ANNOTATION = "ran.openshift.io/soak-seconds"
BATCH_TIMEOUT_ACTIONS = ("", "Continue", "Abort")


class RemediationStrategy(KubeModel):
    max_concurrency: int
    timeout: int = 240
    """Minutes; 0 or negative times out at once."""
    canaries: list[str] | None = None


class BlockingCR(KubeModel):
    name: str
    namespace: str = ""


class ClusterActions(KubeModel):
    add_cluster_labels: dict[str, str] | None = None
    delete_cluster_labels: dict[str, str] | None = None
    remove_cluster_labels: list[str] | None = None
    add_cluster_annotations: dict[str, str] | None = None
    remove_cluster_annotations: list[str] | None = None
    delete_objects: bool | None = None
    """afterCompletion only upstream; accepted, no effect (nothing to delete in gitfleet)."""

    def issues(self, where: str) -> list[FieldIssue]:
        out: list[FieldIssue] = []
        for field in ("addClusterLabels", "deleteClusterLabels"):
            labels = getattr(
                self, "add_cluster_labels" if field[0] == "a" else "delete_cluster_labels"
            )
            for key, value in sorted((labels or {}).items()):
                path = f"{where}.{field}{key_path(key)}"
                out += [FieldIssue(path, f"key {msg}") for msg in is_qualified_name(key)]
                if field == "addClusterLabels":
                    out += [FieldIssue(path, msg) for msg in is_label_value(value)]
        for i, key in enumerate(self.remove_cluster_labels or []):
            path = f"{where}.removeClusterLabels[{i}]"
            out += [FieldIssue(path, f"key {msg}") for msg in is_qualified_name(key)]
        return out


class Actions(KubeModel):
    before_enable: ClusterActions | None = None
    after_completion: ClusterActions | None = None


class ClusterGroupUpgradeSpec(KubeModel):
    clusters: list[str] | None = None
    cluster_label_selectors: list[LabelSelector] | None = None
    cluster_selector: list[str] | None = None
    remediation_strategy: RemediationStrategy
    enable: bool = True
    managed_policies: list[str] | None = None
    blocking_c_rs: list[BlockingCR] | None = Field(default=None, alias="blockingCRs")
    batch_timeout_action: str = ""
    actions: Actions | None = None
    manifest_work_templates: list[str] | None = None
    backup: bool = False
    pre_caching: bool = False
    pre_caching_config_ref: dict[str, Any] | None = None
    """Ignored, as upstream unless preCaching is true (which is refused)."""

    def unsupported(self) -> list[str]:
        """Paths of the upstream fields gitfleet refuses, in the fixed order of §8.1."""
        out = []
        if self.backup:
            out.append("spec.backup")
        if self.pre_caching:
            out.append("spec.preCaching")
        if self.manifest_work_templates:
            out.append("spec.manifestWorkTemplates")
        return out


class ClusterGroupUpgrade(KubeObject):
    """Namespaced; `metadata.namespace` defaults to `default`."""

    api_version: Literal["ran.openshift.io/v1alpha1"]
    kind: Literal["ClusterGroupUpgrade"]
    spec: ClusterGroupUpgradeSpec
    status: dict[str, Any] | None = None

    @property
    def cgu_namespace(self) -> str:
        return self.metadata.namespace or "default"

    def validate_rules(self) -> list[FieldIssue]:
        issues = super().validate_rules()
        issues += check_object_name(self.name, file_name=True)
        if self.metadata.namespace:
            issues += check_namespace(self.metadata.namespace)
        for i, sel in enumerate(self.spec.cluster_label_selectors or []):
            for key, value in sorted((sel.match_labels or {}).items()):
                path = f"spec.clusterLabelSelectors[{i}].matchLabels{key_path(key)}"
                issues += [FieldIssue(path, f"key {msg}") for msg in is_qualified_name(key)]
                issues += [FieldIssue(path, msg) for msg in is_label_value(value)]
        actions = self.spec.actions
        if actions is not None:
            for name, action in (
                ("beforeEnable", actions.before_enable),
                ("afterCompletion", actions.after_completion),
            ):
                if action is not None:
                    issues += action.issues(f"spec.actions.{name}")
        return issues

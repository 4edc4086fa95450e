"""ClusterResourceOverride and ResourceOverride (§3.1) with KubeFleet's webhook rules (§3.5).

Rules: CRO selectors name-only and unique; override rules use label-only cluster selectors;
Delete rules carry no patches, JSONPatch rules at least one; `remove` has no value; patch paths
may not touch apiVersion/kind, status or metadata other than labels/annotations.
`check_override_conflicts` is the cross-object "one override per resource" rule. The override
engine (`reconciler.override`) consumes these models.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from gitfleet.api.base import KubeModel, check_namespace, check_object_name, prefix
from gitfleet.api.errors import FieldIssue
from gitfleet.api.meta import KubeObject
from gitfleet.api.placement import ResourceSelectorTerm
from gitfleet.api.selectors import ClusterSelector

OverrideType = Literal["JSONPatch", "Delete"]
PatchOp = Literal["add", "remove", "replace"]


class JSONPatchOverride(KubeModel):
    """One RFC 6902 operation; `value` is any JSON (variables substituted in strings)."""

    op: PatchOp
    path: str
    value: Any = None

    def go_repr(self) -> str:
        """Compact rendering for messages."""
        return f"{{op:{self.op} path:{self.path}}}"


class OverrideRule(KubeModel):
    """Cluster selector + Delete or JSON patches."""

    cluster_selector: ClusterSelector | None = None
    override_type: OverrideType = "JSONPatch"
    json_patch_overrides: list[JSONPatchOverride] | None = Field(default=None, max_length=20)


class OverridePolicy(KubeModel):
    """Ordered override rules (later rules win)."""

    override_rules: list[OverrideRule] = Field(min_length=1, max_length=20)


class PlacementRef(KubeModel):
    """Restricts an override to one placement."""

    name: str
    scope: Literal["Cluster", "Namespaced"] = "Cluster"


class ResourceSelector(KubeModel):
    """Name-only selector of a namespaced resource in the override's namespace."""

    group: str
    version: str
    kind: str
    name: str

    def go_repr(self) -> str:
        """Compact Go-style rendering used in messages."""
        return f"{{Group:{self.group} Version:{self.version} Kind:{self.kind} Name:{self.name}}}"


class ClusterResourceOverrideSpec(KubeModel):
    """Spec of a ClusterResourceOverride."""

    placement: PlacementRef | None = None
    cluster_resource_selectors: list[ResourceSelectorTerm] = Field(min_length=1, max_length=20)
    policy: OverridePolicy


class ResourceOverrideSpec(KubeModel):
    """Spec of a ResourceOverride."""

    placement: PlacementRef | None = None
    resource_selectors: list[ResourceSelector] = Field(min_length=1, max_length=20)
    policy: OverridePolicy


def path_problem(path: str) -> str | None:
    """KubeFleet's validateJSONPatchOverridePath; None when the path is allowed."""
    if path == "":
        return "path cannot be empty"
    if not path.startswith("/"):
        return "path must start with /"
    parts = path.split("/")[1:]
    if parts[0] in ("kind", "apiVersion"):
        return "cannot override typeMeta fields"
    if parts[0] == "metadata":
        if len(parts) == 1:
            return "cannot override field metadata"
        if parts[1] not in ("annotations", "labels"):
            return "cannot override metadata fields except annotations and labels"
    if parts[0] == "status":
        return "cannot override status fields"
    if any(not part.strip() for part in parts):
        return "path cannot contain empty string"
    return None


def _selector_rules(selector: ClusterSelector) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    for i, term in enumerate(selector.cluster_selector_terms):
        where = f"clusterSelectorTerms[{i}]"
        if term.property_selector is not None or term.property_sorter is not None:
            issues.append(
                FieldIssue(where, "invalid clusterSelector: only labelSelector is supported")
            )
        elif term.label_selector is None:
            issues.append(FieldIssue(where, "invalid clusterSelector: labelSelector is required"))
        else:
            issues += prefix(f"{where}.labelSelector", term.label_selector.validate_rules())
    return issues


def _patch_rules(patches: list[JSONPatchOverride]) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    for i, patch in enumerate(patches):
        problem = path_problem(patch.path)
        if problem:
            issues.append(
                FieldIssue(f"[{i}].path", f"invalid JSONPatchOverride {patch.go_repr()}: {problem}")
            )
        if patch.op == "remove" and patch.is_set("value"):
            issues.append(
                FieldIssue(
                    f"[{i}].value",
                    f"invalid JSONPatchOverride "
                    f"{patch.go_repr()}: remove operation cannot have value",
                )
            )
    return issues


def validate_policy(policy: OverridePolicy) -> list[FieldIssue]:
    """Rule checks; paths relative to `spec.policy`."""
    issues: list[FieldIssue] = []
    for i, rule in enumerate(policy.override_rules):
        where = f"overrideRules[{i}]"
        if rule.cluster_selector is not None:
            issues += prefix(f"{where}.clusterSelector", _selector_rules(rule.cluster_selector))
        patches = rule.json_patch_overrides or []
        if rule.override_type == "Delete" and patches:
            issues.append(
                FieldIssue(
                    f"{where}.jsonPatchOverrides",
                    "invalid JSONPatchOverrides: "
                    "JSONPatchOverrides cannot be set when the override type is "
                    "Delete",
                )
            )
        if rule.override_type == "JSONPatch" and not patches:
            issues.append(
                FieldIssue(
                    f"{where}.jsonPatchOverrides",
                    "invalid JSONPatchOverrides: JSONPatchOverrides cannot be empty",
                )
            )
        if rule.override_type == "JSONPatch":
            issues += prefix(f"{where}.jsonPatchOverrides", _patch_rules(patches))
    return issues


def _cro_selector_rules(selectors: list[ResourceSelectorTerm]) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    seen: set[tuple[str, str, str, str]] = set()
    for i, sel in enumerate(selectors):
        where = f"[{i}]"
        if sel.label_selector is not None:
            issues.append(
                FieldIssue(
                    where, f"label selector is not supported for resource selection {sel.go_repr()}"
                )
            )
            continue
        if not sel.name:
            issues.append(
                FieldIssue(
                    where, f"resource name is required for resource selection {sel.go_repr()}"
                )
            )
            continue
        key = (sel.group, sel.version, sel.kind, sel.name)
        if key in seen:
            issues.append(
                FieldIssue(
                    where, f"resource selector {sel.go_repr()} already exists, and must be unique"
                )
            )
        seen.add(key)
    return issues


class ClusterResourceOverride(KubeObject):
    """Per-cluster patches for cluster-scoped resources (and whole namespaces)."""

    api_version: Literal[
        "placement.kubernetes-fleet.io/v1beta1",
        "placement.kubernetes-fleet.io/v1",
        "placement.kubernetes-fleet.io/v1alpha1",
    ]
    kind: Literal["ClusterResourceOverride"]
    spec: ClusterResourceOverrideSpec

    def validate_rules(self) -> list[FieldIssue]:
        """Name (DNS-1123 label), selectors, placement scope, rules."""
        issues = super().validate_rules() + check_object_name(self.name, file_name=True)
        issues += prefix(
            "spec.clusterResourceSelectors",
            _cro_selector_rules(self.spec.cluster_resource_selectors),
        )
        if self.spec.placement is not None and self.spec.placement.scope == "Namespaced":
            issues.append(
                FieldIssue(
                    "spec.placement.scope",
                    "clusterResourceOverride placement reference cannot be Namespaced scope",
                )
            )
        return issues + prefix("spec.policy", validate_policy(self.spec.policy))


class ResourceOverride(KubeObject):
    """Per-cluster patches for namespaced resources of its namespace."""

    api_version: Literal[
        "placement.kubernetes-fleet.io/v1beta1",
        "placement.kubernetes-fleet.io/v1",
        "placement.kubernetes-fleet.io/v1alpha1",
    ]
    kind: Literal["ResourceOverride"]
    spec: ResourceOverrideSpec

    def validate_rules(self) -> list[FieldIssue]:
        """Name/namespace (DNS-1123 labels), unique selectors, rules."""
        issues = super().validate_rules() + check_object_name(self.name, file_name=True)
        issues += check_namespace(self.namespace)
        seen: set[tuple[str, str, str, str]] = set()
        for i, sel in enumerate(self.spec.resource_selectors):
            key = (sel.group, sel.version, sel.kind, sel.name)
            if key in seen:
                issues.append(
                    FieldIssue(
                        f"spec.resourceSelectors[{i}]",
                        f"resource selector {sel.go_repr()} already exists, and must be unique",
                    )
                )
            seen.add(key)
        return issues + prefix("spec.policy", validate_policy(self.spec.policy))


ObjectKey = tuple[str, str, str]
"""(kind, namespace, name) of an override object ('' namespace for cluster-scoped)."""


def check_override_conflicts(
    cros: Sequence[ClusterResourceOverride], ros: Sequence[ResourceOverride]
) -> list[tuple[ObjectKey, FieldIssue]]:
    """One override per resource (§3.5): the same selector in two CROs, or in two ROs of one
    namespace, is an error on every override after the first (in name order).

    Returns (key of the offending override, issue on its selector field); the caller ties the
    issue to that override's file.
    """
    out: list[tuple[ObjectKey, FieldIssue]] = []
    owners: dict[tuple[str, ...], str] = {}
    for cro in sorted(cros, key=lambda o: o.name):
        for i, sel in enumerate(cro.spec.cluster_resource_selectors):
            resource: tuple[str, ...] = ("cro", sel.group, sel.version, sel.kind, sel.name or "")
            problem = _claim(owners, resource, cro.name, sel.go_repr())
            if problem:
                where = f"spec.clusterResourceSelectors[{i}]"
                out.append((("ClusterResourceOverride", "", cro.name), FieldIssue(where, problem)))
    for ro in sorted(ros, key=lambda o: (o.namespace or "", o.name)):
        namespace = ro.namespace or ""
        for i, rsel in enumerate(ro.spec.resource_selectors):
            resource = ("ro", namespace, rsel.group, rsel.version, rsel.kind, rsel.name)
            problem = _claim(owners, resource, ro.name, rsel.go_repr())
            if problem:
                where = f"spec.resourceSelectors[{i}]"
                out.append((("ResourceOverride", namespace, ro.name), FieldIssue(where, problem)))
    return out


def _claim(
    owners: dict[tuple[str, ...], str], resource: tuple[str, ...], name: str, shown: str
) -> str | None:
    owner = owners.setdefault(resource, name)
    if owner == name:
        return None
    return (
        f"invalid resource selector {shown}: the resource has been selected by both "
        f"{name} and {owner}, which is not supported"
    )

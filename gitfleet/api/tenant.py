"""Governance kinds (gitfleet.io/v1alpha1): `Tenant` and `DeletionApproval`.

A `Tenant` (in `fleet.yaml` or `tenants/`) owns paths of the fleet repository (globs such as
`resources/payments/**`) and limits what the objects declared there may do: the clusters its
placements may reach (a label selector), the namespaces they may place into, the kinds they may
place (cluster-scoped kinds only when listed explicitly) and the placements its overrides may
patch. The rules are methods here; `reconciler.govern.tenancy` applies them in the pass.

A `DeletionApproval` (under `approvals/`) lets held deletions of the named placements proceed;
it counts only for the source change that adds or changes it (see `reconciler.govern.deletion`).
"""

from __future__ import annotations

import fnmatch
import re
from functools import cached_property
from typing import Literal

from pydantic import Field

from gitfleet.api.base import KubeModel, check_object_name, prefix
from gitfleet.api.errors import FieldIssue
from gitfleet.api.meta import KubeObject
from gitfleet.api.selectors import LabelSelector

ANY = "*"
_GLOB_CHARS = re.compile(r"[A-Za-z0-9._*?/\[\]!-]+")
_KIND_ENTRY = re.compile(r"\*|([a-z0-9.-]*/)?[A-Za-z][A-Za-z0-9]*")
_NAMESPACE_PATTERN = re.compile(r"[a-z0-9*?\[\]!-]+")


def path_glob_regex(pattern: str) -> re.Pattern[str]:
    """A repository path glob as a regex: `**` spans directories, `*` and `?` stay inside one
    path segment, `[...]` is a character class; a trailing `/` means everything below."""
    if pattern.endswith("/"):
        pattern += "**"
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        elif pattern[i] == "[" and "]" in pattern[i + 1 :]:
            end = pattern.index("]", i + 1)
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            out, i = out + "[" + ("^" + body[1:] if body.startswith("!") else body) + "]", end + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out)


def _path_problem(pattern: str) -> str | None:
    if not pattern or not _GLOB_CHARS.fullmatch(pattern):
        return (
            "must be a repository path glob (letters, digits, '.', '_', '-', '/', '*', '?', '[]')"
        )
    if pattern.startswith("/") or ".." in pattern.split("/") or "." in pattern.split("/"):
        return "must be relative to the repository root, without '.' or '..' segments"
    return None


class TenantKinds(KubeModel):
    """Kinds the tenant may place: `Kind` (any group), `group/Kind` (`apps/Deployment`, core
    kinds as `/ConfigMap`) or `*` (every namespaced kind). `deny` wins over `allow`."""

    allow: list[str] = Field(default_factory=lambda: [ANY])
    deny: list[str] = Field(default_factory=list)


class TenantSpec(KubeModel):
    """What a tenant owns and may do."""

    paths: list[str] = Field(min_length=1)
    cluster_selector: LabelSelector
    namespaces: list[str] = Field(default_factory=list)
    kinds: TenantKinds = Field(default_factory=TenantKinds)
    override_targets: list[str] | None = None
    """Placement keys (globs) its overrides may name in spec.placement; default: the placements
    declared under its own paths."""


def _kind_matches(entry: str, group: str, kind: str) -> bool:
    if entry == ANY:
        return True
    if "/" in entry:
        want_group, want_kind = entry.split("/", 1)
        return want_group == group and want_kind == kind
    return entry == kind


def _show_kind(group: str, kind: str) -> str:
    return f"{group}/{kind}" if group else kind


class Tenant(KubeObject):
    """A team's share of the fleet repository, like an Argo CD AppProject."""

    api_version: Literal["gitfleet.io/v1alpha1"]
    kind: Literal["Tenant"]
    spec: TenantSpec

    @cached_property
    def _path_patterns(self) -> tuple[re.Pattern[str], ...]:
        return tuple(path_glob_regex(p) for p in self.spec.paths)

    def owns(self, path: str) -> bool:
        """Whether a repository file lies under one of the tenant's paths."""
        return any(p.fullmatch(path) for p in self._path_patterns)

    def namespace_allowed(self, namespace: str) -> bool:
        """Whether the namespace matches one of spec.namespaces (globs)."""
        return any(fnmatch.fnmatchcase(namespace, p) for p in self.spec.namespaces)

    def cluster_allowed(self, labels: dict[str, str]) -> bool:
        """Whether a cluster with these labels matches spec.clusterSelector."""
        return self.spec.cluster_selector.matches(labels)

    def kind_problem(self, group: str, kind: str, cluster_scoped: bool, name: str) -> str | None:
        """Why the tenant may not place this kind (None: it may). A Namespace named in
        spec.namespaces is the tenant's own; other cluster-scoped kinds need an explicit allow
        entry (`*` does not cover them)."""
        rule = f"tenant {self.name}"
        for entry in self.spec.kinds.deny:
            if _kind_matches(entry, group, kind):
                return f"{rule} denies kind {_show_kind(group, kind)} (spec.kinds.deny: {entry})"
        if (group, kind) == ("", "Namespace") and self.namespace_allowed(name):
            return None
        explicit = [e for e in self.spec.kinds.allow if e != ANY]
        if cluster_scoped and not any(_kind_matches(e, group, kind) for e in explicit):
            return (
                f"{rule} may not place the cluster-scoped kind {_show_kind(group, kind)} "
                "(cluster-scoped kinds are denied unless spec.kinds.allow names them)"
            )
        if not any(_kind_matches(e, group, kind) for e in self.spec.kinds.allow):
            return f"{rule} does not allow kind {_show_kind(group, kind)} (spec.kinds.allow)"
        return None

    def validate_rules(self) -> list[FieldIssue]:
        """Name, path globs, namespace patterns, kind entries and the cluster selector."""
        issues = super().validate_rules() + check_object_name(self.name, file_name=True)
        for i, path in enumerate(self.spec.paths):
            problem = _path_problem(path)
            if problem:
                issues.append(FieldIssue(f"spec.paths[{i}]", f'"{path}" {problem}'))
        for i, ns in enumerate(self.spec.namespaces):
            if not _NAMESPACE_PATTERN.fullmatch(ns):
                message = f'"{ns}" must be a namespace name or a glob of one'
                issues.append(FieldIssue(f"spec.namespaces[{i}]", message))
        for part in ("allow", "deny"):
            for i, entry in enumerate(getattr(self.spec.kinds, part)):
                if not _KIND_ENTRY.fullmatch(entry):
                    message = f'"{entry}" must be Kind, group/Kind or *'
                    issues.append(FieldIssue(f"spec.kinds.{part}[{i}]", message))
        return issues + prefix("spec.clusterSelector", self.spec.cluster_selector.validate_rules())


class DeletionApprovalSpec(KubeModel):
    """The placements whose held deletion the change that adds this file approves."""

    placements: list[str] = Field(min_length=1)
    """Placement keys (`<name>`, or `<namespace>.<name>` for a ResourcePlacement), or `*`."""


class DeletionApproval(KubeObject):
    """Lets the deletions held for the named placements proceed (`approvals/`)."""

    api_version: Literal["gitfleet.io/v1alpha1"]
    kind: Literal["DeletionApproval"]
    spec: DeletionApprovalSpec

    def validate_rules(self) -> list[FieldIssue]:
        """Name syntax and non-empty placement keys."""
        issues = super().validate_rules() + check_object_name(self.name, file_name=False)
        for i, key in enumerate(self.spec.placements):
            if not re.fullmatch(r"\*|[a-z0-9]([a-z0-9.-]*[a-z0-9])?", key):
                message = f'"{key}" must be a placement key (<name> or <namespace>.<name>) or *'
                issues.append(FieldIssue(f"spec.placements[{i}]", message))
        return issues

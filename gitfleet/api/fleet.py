"""The `Fleet` kind (gitfleet.io/v1alpha1): repository-wide settings, usually `fleet.yaml`.

Output branch, template values, limits (camelCase mirrors of `gitfleet.api.limits.Limits`),
heartbeat/health timeouts (Go durations) and how cluster eligibility is decided. At most one
Fleet object per repository (the loader enforces that); its name is free.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace
from datetime import timedelta
from typing import Any, Literal

from pydantic import Field

from gitfleet.api.base import KubeModel, check_object_name
from gitfleet.api.duration import DurationError, parse_duration, parse_duration_ns
from gitfleet.api.errors import FieldIssue
from gitfleet.api.intstr import IntOrString, is_budget_value
from gitfleet.api.limits import DEFAULT_LIMITS, Limits
from gitfleet.api.meta import KubeObject

GITFLEET_V1ALPHA1 = "gitfleet.io/v1alpha1"
DEFAULT_OUTPUT_BRANCH = "gitfleet/rendered"

_REF_COMPONENT = re.compile(r"[A-Za-z0-9._-]+")


class FleetLimits(KubeModel):
    """Optional overrides of `Limits`; unset fields keep the documented defaults."""

    max_file_bytes: int | None = Field(default=None, gt=0)
    max_documents_per_file: int | None = Field(default=None, gt=0)
    max_yaml_nodes: int | None = Field(default=None, gt=0)
    max_yaml_depth: int | None = Field(default=None, gt=0)
    max_object_bytes: int | None = Field(default=None, gt=0)
    max_objects_per_placement: int | None = Field(default=None, gt=0)
    max_rendered_bytes_per_cluster: int | None = Field(default=None, gt=0)
    template_timeout_seconds: float | None = Field(default=None, gt=0)
    template_max_output_bytes: int | None = Field(default=None, gt=0)
    max_kustomize_seconds: float | None = Field(default=None, gt=0)


class FleetVerification(KubeModel):
    """Which source commits the hub reconciles (README "Signed commits"): with mode SSH or GPG
    only commits whose signature git verifies against `allowedSignersFile` (SSH: an
    allowed-signers file; GPG: ASCII-armored public keys), read from the last reconciled
    (verified) commit, never from the commit being checked. `commits`: `All` checks every
    commit since the last reconciled one, `FirstParent` only the first-parent chain (a signed
    merge vouches for the commits it merges, e.g. GitHub's merge of a reviewed pull request)."""

    mode: Literal["None", "SSH", "GPG"] = "None"
    allowed_signers_file: str | None = None
    commits: Literal["All", "FirstParent"] = "All"


def signers_path_problem(path: str) -> str | None:
    """Why `path` cannot name a file of the fleet repository (relative, no '..', no hidden or
    empty parts, no backslash or control character); None when it can."""
    parts = path.split("/")
    if not path or path.startswith("/") or "\\" in path or any(ord(c) < 32 for c in path):
        return f'must be a relative path inside the fleet repository: "{path}"'
    if any(p in ("", ".", "..") or p.startswith(".") for p in parts):
        return f'must not have empty, ".", ".." or hidden (leading ".") parts: "{path}"'
    return None


class SecretSettings(KubeModel):
    """`spec.secrets`: how Secret objects may enter the fleet repository."""

    allow_plaintext: bool = False
    """Accept plaintext `v1/Secret` objects (a warning per object, and they reach the output
    branch in clear). Default: refused; use SOPS files encrypted with age."""


class FleetSpec(KubeModel):
    """Fleet settings with their defaults."""

    output_branch: str = DEFAULT_OUTPUT_BRANCH
    values: dict[str, Any] | None = None
    limits: FleetLimits | None = None
    heartbeat_timeout: str = "5m"
    health_timeout: str = "5m"
    cluster_status_record_interval: str = "5m"
    """How often `status/clusters/<name>.yaml` records an agent's observations (heartbeat,
    properties, resource usage) when nothing else in it changed; 0 records every heartbeat
    (`reconciler.clusterrecord`)."""
    cluster_eligibility: Literal["RequireAgent", "AssumeJoined"] = "RequireAgent"
    verification: FleetVerification | None = None
    deletion_budget: IntOrString = "20%"
    """Mass-deletion guard: most objects of a placement on a cluster, or of its clusters, one
    source change may remove without approval (`reconciler.govern.deletion`)."""
    secrets: SecretSettings = Field(default_factory=SecretSettings)

    def heartbeat_timeout_delta(self) -> timedelta:
        """heartbeatTimeout as a timedelta (DurationError if invalid; validation prevents it)."""
        return parse_duration(self.heartbeat_timeout)

    def health_timeout_delta(self) -> timedelta:
        """healthTimeout as a timedelta (DurationError if invalid; validation prevents it)."""
        return parse_duration(self.health_timeout)

    def cluster_status_record_interval_delta(self) -> timedelta:
        """clusterStatusRecordInterval as a timedelta (DurationError if invalid)."""
        return parse_duration(self.cluster_status_record_interval)


def branch_problem(branch: str) -> str | None:
    """A conservative `git check-ref-format --branch` check; None when acceptable."""
    parts = branch.split("/")
    ok = (
        bool(branch)
        and not branch.startswith("-")
        and ".." not in branch
        and not branch.endswith(".lock")
        and all(_REF_COMPONENT.fullmatch(p) and not p.startswith(".") for p in parts)
        and not branch.endswith(".")
    )
    if ok:
        return None
    return (
        "must be a valid branch name (letters, digits, '.', '_', '-' and '/'-separated parts; "
        f"no leading '-', no '..', no part starting with '.'): \"{branch}\""
    )


def _duration_issue(field: str, text: str, zero: bool = False) -> list[FieldIssue]:
    try:
        ns = parse_duration_ns(text)
        if ns < 0 or (ns == 0 and not zero):
            rule = "a duration >= 0" if zero else "a positive duration"
            return [FieldIssue(field, f'must be {rule}: "{text}"')]
    except DurationError as exc:
        return [FieldIssue(field, str(exc))]
    return []


class Fleet(KubeObject):
    """Repository-wide gitfleet settings."""

    api_version: Literal["gitfleet.io/v1alpha1"]
    kind: Literal["Fleet"]
    spec: FleetSpec = Field(default_factory=FleetSpec)

    def limits(self) -> Limits:
        """`Limits` with the values this Fleet sets, defaults elsewhere."""
        given = self.spec.limits
        if given is None:
            return DEFAULT_LIMITS
        changes = {
            f.name: getattr(given, f.name)
            for f in fields(Limits)
            if getattr(given, f.name) is not None
        }
        return replace(DEFAULT_LIMITS, **changes)

    def heartbeat_timeout(self) -> timedelta:
        """spec.heartbeatTimeout as a timedelta."""
        return self.spec.heartbeat_timeout_delta()

    def health_timeout(self) -> timedelta:
        """spec.healthTimeout as a timedelta."""
        return self.spec.health_timeout_delta()

    def validate_rules(self) -> list[FieldIssue]:
        """Branch name syntax and positive Go durations."""
        issues = super().validate_rules() + check_object_name(self.name, file_name=False)
        problem = branch_problem(self.spec.output_branch)
        if problem:
            issues.append(FieldIssue("spec.outputBranch", problem))
        issues += _duration_issue("spec.heartbeatTimeout", self.spec.heartbeat_timeout)
        issues += _duration_issue("spec.healthTimeout", self.spec.health_timeout)
        issues += _duration_issue(
            "spec.clusterStatusRecordInterval", self.spec.cluster_status_record_interval, True
        )
        if not is_budget_value(self.spec.deletion_budget):
            message = (
                f'must be an integer >= 0 or a percentage 0%..100%: "{self.spec.deletion_budget}"'
            )
            issues.append(FieldIssue("spec.deletionBudget", message))
        return issues + _verification_issues(self.spec.verification)


def _verification_issues(verification: FleetVerification | None) -> list[FieldIssue]:
    if verification is None:
        return []
    field, path = "spec.verification.allowedSignersFile", verification.allowed_signers_file
    if path is None:
        if verification.mode == "None":
            return []
        return [FieldIssue(field, f"is required when mode is {verification.mode}")]
    problem = signers_path_problem(path)
    return [FieldIssue(field, problem)] if problem else []

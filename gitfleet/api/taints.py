"""MemberCluster taints, placement tolerations and the toleration match rule (§1.3.4).

`tolerates` is what the TaintToleration scheduler plugin applies; `validate_tolerations` is the
KubeFleet webhook rule set for `spec.policy.tolerations`, with KubeFleet's messages (Go `%+v`
formatting of the toleration included).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from gitfleet.api.base import KubeModel
from gitfleet.api.errors import FieldIssue
from gitfleet.api.names import is_label_value, is_qualified_name

TaintEffect = Literal["NoSchedule"]
TolerationOperator = Literal["Exists", "Equal"]


class Taint(KubeModel):
    """A MemberCluster taint; only the NoSchedule effect exists."""

    key: str
    value: str | None = None
    effect: TaintEffect

    def go_repr(self) -> str:
        """Go `%+v` of *Taint for scheduler messages: `&{Key:k Value:v Effect:NoSchedule}`."""
        return f"&{{Key:{self.key} Value:{self.value or ''} Effect:{self.effect}}}"

    def validate_rules(self) -> list[FieldIssue]:
        """Key must be a qualified name, value a label value."""
        issues = [FieldIssue("key", msg) for msg in is_qualified_name(self.key)]
        issues += [FieldIssue("value", msg) for msg in is_label_value(self.value or "")]
        return issues


class Toleration(KubeModel):
    """A placement toleration; operator defaults to Equal."""

    key: str | None = None
    operator: TolerationOperator = "Equal"
    value: str | None = None
    effect: TaintEffect | None = None

    def go_repr(self) -> str:
        """Go `%+v` of the struct: `{Key:k Operator:Equal Value:v Effect:NoSchedule}`."""
        return (
            f"{{Key:{self.key or ''} Operator:{self.operator} Value:{self.value or ''} "
            f"Effect:{self.effect or ''}}}"
        )

    def identity(self) -> tuple[str, str, str, str]:
        """Comparable form (absent and empty are the same, as in Go)."""
        return (self.key or "", self.operator, self.value or "", self.effect or "")


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Whether `toleration` tolerates `taint` (KubeFleet/Kubernetes ToleratesTaint)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.operator == "Exists":
        return not toleration.key or toleration.key == taint.key
    if toleration.operator == "Equal":
        return (toleration.key or "") == taint.key and (toleration.value or "") == (
            taint.value or ""
        )
    return False


def first_untolerated(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> Taint | None:
    """The first taint (in taint order) no toleration tolerates, or None."""
    for taint in taints:
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def _one_toleration(tol: Toleration) -> list[str]:
    shown = tol.go_repr()
    problems: list[str] = []
    if tol.key:
        problems += [f"invalid toleration key {shown}: {m}" for m in is_qualified_name(tol.key)]
    if tol.operator == "Exists" and tol.value:
        problems.append(
            f"invalid toleration {shown}: "
            "toleration value needs to be empty, when operator is Exists"
        )
    if tol.operator == "Equal":
        if not tol.key:
            problems.append(
                f"invalid toleration {shown}: "
                "toleration key cannot be empty, when operator is Equal"
            )
        problems += [
            f"invalid toleration value {shown}: {m}" for m in is_label_value(tol.value or "")
        ]
    return problems


def validate_tolerations(tolerations: Sequence[Toleration]) -> list[FieldIssue]:
    """KubeFleet webhook rules for a toleration list (paths relative to the list)."""
    issues: list[FieldIssue] = []
    seen: set[tuple[str, str, str, str]] = set()
    for i, tol in enumerate(tolerations):
        issues += [FieldIssue(f"[{i}]", msg) for msg in _one_toleration(tol)]
        if tol.identity() in seen:
            issues.append(
                FieldIssue(
                    f"[{i}]",
                    f"toleration {tol.go_repr()} already exists, tolerations must be unique",
                )
            )
        seen.add(tol.identity())
    return issues

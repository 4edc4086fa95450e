"""Label selectors, cluster property selectors/sorters and cluster selector terms.

`LabelSelector.matches` implements standard Kubernetes semantics (matchLabels AND matchExpressions;
`{}` matches everything). Validation follows `metav1.LabelSelectorAsSelector` and KubeFleet's
property-name and property-requirement webhook rules. Placements, overrides and staged update
strategies embed these; the scheduler and override engine call `matches`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import Field

from gitfleet.api.base import KubeModel, prefix
from gitfleet.api.errors import FieldIssue
from gitfleet.api.meta import key_path
from gitfleet.api.names import is_dns1123_subdomain, is_label_value, is_qualified_name
from gitfleet.api.quantity import Quantity, QuantityError, parse_quantity

LabelOperator = Literal["In", "NotIn", "Exists", "DoesNotExist"]
PropertyOperator = Literal["Eq", "Ne", "Gt", "Ge", "Lt", "Le"]
SortOrder = Literal["Ascending", "Descending"]

RESOURCE_PROPERTY_PREFIX = "resources.kubernetes-fleet.io/"
CAPACITY_TYPES = ("allocatable", "available", "total")


class LabelSelectorRequirement(KubeModel):
    """One matchExpressions entry."""

    key: str
    operator: LabelOperator
    values: list[str] | None = None

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Kubernetes requirement semantics."""
        present = self.key in labels
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        hit = present and labels[self.key] in (self.values or [])
        return hit if self.operator == "In" else not hit

    def validate_rules(self) -> list[FieldIssue]:
        """Key syntax, value syntax and the operator/values pairing."""
        issues = [FieldIssue("key", msg) for msg in is_qualified_name(self.key)]
        values = self.values or []
        if self.operator in ("In", "NotIn") and not values:
            issues.append(
                FieldIssue("values", "for 'in', 'notin' operators, values set can't be empty")
            )
        if self.operator in ("Exists", "DoesNotExist") and values:
            issues.append(
                FieldIssue("values", "values set must be empty for exists and does not exist")
            )
        for i, value in enumerate(values):
            issues += [FieldIssue(f"values[{i}]", msg) for msg in is_label_value(value)]
        return issues


class LabelSelector(KubeModel):
    """metav1.LabelSelector."""

    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None

    def matches(self, labels: Mapping[str, str]) -> bool:
        """True when every matchLabels pair and every expression holds (`{}` matches all)."""
        for key, value in (self.match_labels or {}).items():
            if labels.get(key) != value:
                return False
        return all(req.matches(labels) for req in self.match_expressions or [])

    def validate_rules(self) -> list[FieldIssue]:
        """Label key/value syntax and requirement rules."""
        issues: list[FieldIssue] = []
        for key, value in sorted((self.match_labels or {}).items()):
            where = f"matchLabels{key_path(key)}"
            issues += [FieldIssue(where, f"key {msg}") for msg in is_qualified_name(key)]
            issues += [FieldIssue(where, msg) for msg in is_label_value(value)]
        for i, req in enumerate(self.match_expressions or []):
            issues += prefix(f"matchExpressions[{i}]", req.validate_rules())
        return issues


def _property_name_problem(name: str) -> str | None:
    """KubeFleet's property name rule (validator.validateName), None when valid."""
    if name.startswith(RESOURCE_PROPERTY_PREFIX):
        segments = name[len(RESOURCE_PROPERTY_PREFIX) :].split("-", 1)
        if len(segments) != 2:
            return (
                f"invalid resource property name {name}, expected format is "
                "[PREFIX]/[CAPACITY_TYPE]-[RESOURCE_NAME]"
            )
        if segments[0] not in CAPACITY_TYPES:
            return (
                f"invalid capacity type in resource property name {name}, supported values are "
                f"[{' '.join(CAPACITY_TYPES)}]"
            )
        errs = is_qualified_name(name)
        return f"property name {name} is not valid: {'; '.join(errs)}" if errs else None
    segments = name.split("/")
    if len(segments) == 1:
        errs = is_qualified_name(name)
        return f"property name {name} is not valid: {'; '.join(errs)}" if errs else None
    first = segments[0]
    sub_errs, qual_errs = is_dns1123_subdomain(first), is_qualified_name(first)
    if sub_errs and qual_errs:
        return (
            f"property name first segment {first} is not valid: it is neither a valid DNS "
            f"subdomain ({'; '.join(sub_errs)}) nor a valid qualified name ({'; '.join(qual_errs)})"
        )
    for seg in segments[1:]:
        errs = is_qualified_name(seg)
        if errs:
            return f"property name segment {seg} is not valid: {'; '.join(errs)}"
    return None


class PropertySelectorRequirement(KubeModel):
    """A requirement on a cluster property (quantity comparison)."""

    name: str
    operator: PropertyOperator
    values: list[str]

    def quantity(self) -> Quantity:
        """The single value as a quantity (QuantityError/IndexError on invalid specs)."""
        return parse_quantity(self.values[0])

    def validate_rules(self) -> list[FieldIssue]:
        """Name syntax, exactly one value, value is a quantity."""
        issues: list[FieldIssue] = []
        problem = _property_name_problem(self.name)
        if problem:
            issues.append(FieldIssue("name", f"invalid property name {self.name}: {problem}"))
        head = f"invalid requirement on property {self.name}: "
        if len(self.values) != 1:
            issues.append(
                FieldIssue(
                    "values",
                    head + f"operator {self.operator} requires "
                    f"exactly one value, got {len(self.values)}",
                )
            )
        for i, value in enumerate(self.values):
            try:
                parse_quantity(value)
            except QuantityError as exc:
                issues.append(
                    FieldIssue(
                        f"values[{i}]",
                        head + f'value "{value}" is not a valid resource.Quantity: {exc}',
                    )
                )
        return issues


class PropertySelector(KubeModel):
    """Requirements on cluster properties, AND-ed."""

    match_expressions: list[PropertySelectorRequirement]

    def validate_rules(self) -> list[FieldIssue]:
        """Per-requirement rules plus KubeFleet's cross-requirement consistency check."""
        issues: list[FieldIssue] = []
        for i, req in enumerate(self.match_expressions):
            issues += prefix(f"matchExpressions[{i}]", req.validate_rules())
        names = sorted({req.name for req in self.match_expressions})
        for name in names:
            problem = _consistency_problem([r for r in self.match_expressions if r.name == name])
            if problem:
                issues.append(
                    FieldIssue(
                        "matchExpressions",
                        f"inconsistent requirements on property {name}: {problem}",
                    )
                )
        return issues


def _bounds(
    reqs: list[PropertySelectorRequirement],
) -> tuple[list[tuple[str, Quantity]], str | None]:
    """Well-formed (operator, quantity) pairs; the conflicting-Eq problem if any."""
    parsed: list[tuple[str, Quantity]] = []
    eq: Quantity | None = None
    for req in reqs:
        if len(req.values) != 1:
            continue
        try:
            q = req.quantity()
        except QuantityError:
            continue
        if req.operator == "Eq":
            if eq is not None and eq != q:
                return parsed, f"conflicting Eq values {eq} and {q}"
            eq = q
        parsed.append((req.operator, q))
    return parsed, None


def _consistency_problem(reqs: list[PropertySelectorRequirement]) -> str | None:
    """Unsatisfiable combinations on one property (validateRequirementsConsistency)."""
    if len(reqs) < 2:
        return None
    parsed, problem = _bounds(reqs)
    if problem:
        return problem
    eq = next((q for op, q in parsed if op == "Eq"), None)
    lows = [(q, op == "Gt") for op, q in parsed if op in ("Gt", "Ge")]
    highs = [(q, op == "Lt") for op, q in parsed if op in ("Lt", "Le")]
    low = max(lows, key=lambda b: (b[0].value, b[1]), default=None)
    high = min(highs, key=lambda b: (b[0].value, not b[1]), default=None)
    if eq is not None and any(op == "Ne" and q == eq for op, q in parsed):
        return f"conflicting Eq and Ne on same value {eq}"
    if low and high and (low[0] > high[0] or (low[0] == high[0] and (low[1] or high[1]))):
        return f"lower bound ({low[0]}) and upper bound ({high[0]}) exclude all values"
    if eq is not None and low and (eq < low[0] or (eq == low[0] and low[1])):
        return f"eq value {eq} violates lower bound {low[0]}"
    if eq is not None and high and (eq > high[0] or (eq == high[0] and high[1])):
        return f"eq value {eq} violates upper bound {high[0]}"
    return None


class PropertySorter(KubeModel):
    """Sort clusters by a property for a preferred affinity term."""

    name: str
    sort_order: SortOrder

    def validate_rules(self) -> list[FieldIssue]:
        """Property name syntax."""
        problem = _property_name_problem(self.name)
        return [FieldIssue("name", problem)] if problem else []


class ClusterSelectorTerm(KubeModel):
    """labelSelector AND propertySelector (required terms) or propertySorter (preferred)."""

    label_selector: LabelSelector | None = None
    property_selector: PropertySelector | None = None
    property_sorter: PropertySorter | None = None

    def matches_labels(self, labels: Mapping[str, str]) -> bool:
        """The label part of the term (nil labelSelector counts as matching)."""
        return self.label_selector is None or self.label_selector.matches(labels)


class ClusterSelector(KubeModel):
    """OR-ed cluster selector terms."""

    cluster_selector_terms: list[ClusterSelectorTerm] = Field(default_factory=list, max_length=10)


class PreferredClusterSelector(KubeModel):
    """A weighted preferred term."""

    weight: int = Field(ge=-100, le=100)
    preference: ClusterSelectorTerm

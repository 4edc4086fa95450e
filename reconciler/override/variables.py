"""Reserved override variables: `${MEMBER-CLUSTER-NAME}` and `${MEMBER-CLUSTER-LABEL-KEY-<key>}`.

KubeFleet (kubefleet.md §3.4.5) replaces these inside a JSON patch `value` only, never in `path`,
case-sensitively; every other spelling stays verbatim. The cluster name is replaced first, then
each label variable from left to right (the key ends at the first `}`); a missing label, a missing
`}` or an empty key is an error. Values are inserted as data: strings are rebuilt, never parsed, so
a value that looks like YAML stays one string. `scan_variables` runs once per patch op when the
override index is built (it says which cluster facts a result depends on, for memoisation);
`substitute` runs when a matching rule is applied. Called by `reconciler.override.compiled` and
`reconciler.override.apply`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

NAME_VARIABLE = "${MEMBER-CLUSTER-NAME}"
LABEL_PREFIX = "${MEMBER-CLUSTER-LABEL-KEY-"
_NAME_MARK = "\x00"
"""Stands for the cluster name while scanning (a cluster name never contains it)."""


class VariableError(ValueError):
    """A variable that cannot be replaced; the message never contains the patch value."""


@dataclass(frozen=True)
class VariableUse:
    """Which cluster facts one patch value reads."""

    name: bool = False
    """Uses `${MEMBER-CLUSTER-NAME}`."""
    labels: frozenset[str] = frozenset()
    """Label keys read by `${MEMBER-CLUSTER-LABEL-KEY-<key>}`."""
    all_labels: bool = False
    """A label key is built from the cluster name (pathological): depends on every label."""
    problem: str | None = None
    """A malformed variable (reported when the rule is applied, as KubeFleet does)."""

    def __bool__(self) -> bool:
        return self.name or bool(self.labels) or self.all_labels or self.problem is not None

    def merge(self, other: VariableUse) -> VariableUse:
        if not other:
            return self
        if not self:
            return other
        return VariableUse(
            name=self.name or other.name,
            labels=self.labels | other.labels,
            all_labels=self.all_labels or other.all_labels,
            problem=self.problem or other.problem,
        )


def _label_keys(text: str) -> list[str]:
    """The label keys of `text` in order (VariableError when one is malformed)."""
    keys: list[str] = []
    pos = 0
    while True:
        start = text.find(LABEL_PREFIX, pos)
        if start < 0:
            return keys
        begin = start + len(LABEL_PREFIX)
        end = text.find("}", begin)
        if end < 0:
            raise VariableError(
                f"a {LABEL_PREFIX}<key>}} variable is missing the closing bracket `}}`"
            )
        if end == begin:
            raise VariableError(f"empty label key in a {LABEL_PREFIX}}} variable")
        keys.append(text[begin:end])
        pos = end + 1


def _scan_text(text: str) -> VariableUse:
    if "${" not in text:
        return VariableUse()
    uses_name = NAME_VARIABLE in text
    try:
        keys = _label_keys(text.replace(NAME_VARIABLE, _NAME_MARK))
    except VariableError as exc:
        return VariableUse(name=uses_name, problem=str(exc))
    dynamic = any(_NAME_MARK in key for key in keys)
    return VariableUse(
        name=uses_name,
        labels=frozenset(k for k in keys if _NAME_MARK not in k),
        all_labels=dynamic,
    )


def scan_variables(value: Any) -> VariableUse:
    """Every variable used in the strings (and mapping keys) of a patch value."""
    if isinstance(value, str):
        return _scan_text(value)
    use = VariableUse()
    if isinstance(value, Mapping):
        for key, item in value.items():
            use = use.merge(_scan_text(key) if isinstance(key, str) else VariableUse())
            use = use.merge(scan_variables(item))
    elif isinstance(value, list | tuple):
        for item in value:
            use = use.merge(scan_variables(item))
    return use


def _substitute_text(text: str, cluster: str, labels: Mapping[str, str]) -> str:
    if "${" not in text:
        return text
    text = text.replace(NAME_VARIABLE, cluster)
    out: list[str] = []
    pos = 0
    for key in _label_keys(text):
        if key not in labels:
            raise VariableError(f"label key {key} not found on cluster {cluster}")
        start = text.index(LABEL_PREFIX + key + "}", pos)
        out += [text[pos:start], labels[key]]
        pos = start + len(LABEL_PREFIX) + len(key) + 1
    out.append(text[pos:])
    return "".join(out)


def substitute(value: Any, cluster: str, labels: Mapping[str, str]) -> Any:
    """A fresh copy of `value` with the variables replaced in every string and mapping key.

    Always returns new containers, so the patched object never shares structure with the
    override. Raises VariableError for a missing label or a malformed variable.
    """
    if isinstance(value, str):
        return _substitute_text(value, cluster, labels)
    if isinstance(value, Mapping):
        return {
            (_substitute_text(k, cluster, labels) if isinstance(k, str) else k): substitute(
                item, cluster, labels
            )
            for k, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [substitute(item, cluster, labels) for item in value]
    return value

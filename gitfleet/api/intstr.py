"""Kubernetes IntOrString values: the pydantic field type, scaling and pattern checks.

`ceil_scale`/`floor_scale` implement `intstr.GetScaledValueFromIntOrPercent` with round up/down
(rolling update budgets, disruption budgets, stage maxConcurrency). The `is_*` checks are the
CRD patterns that validation (`validate_rules` of the kinds) applies to such fields.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import PlainSerializer, PlainValidator

ROLLOUT_PATTERN = r"^((100|[0-9]{1,2})%|[0-9]+)$"
"""Pattern for rollingUpdate.maxUnavailable / maxSurge string values."""
BUDGET_PERCENT_PATTERN = r"^(100|[0-9]{1,2})%$"
"""Pattern for disruption budget percentages."""
CONCURRENCY_PERCENT_PATTERN = r"^(100|[1-9][0-9]?)%$"
"""Pattern for stage maxConcurrency percentages."""


class IntOrStringError(ValueError):
    """The value cannot be scaled (not an integer and not a percentage)."""


def _int_or_str(value: object) -> int | str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError('must be an integer or a string such as "25%"')
    return value


IntOrString = Annotated[
    int | str,
    PlainValidator(_int_or_str),
    PlainSerializer(lambda v: v, return_type=int | str),
]
"""Field type: an int or a str exactly as written (YAML booleans and floats are refused)."""


def _percent(value: str) -> int:
    if not value.endswith("%"):
        raise IntOrStringError("invalid type: string is not a percentage")
    digits = value[:-1]
    if not re.fullmatch(r"[+-]?[0-9]+", digits):
        raise IntOrStringError(f'invalid value for IntOrString: invalid value "{value}"')
    return int(digits)


def ceil_scale(value: int | str, total: int) -> int:
    """Integers as is; "P%" becomes ceil(P*total/100). IntOrStringError otherwise."""
    if isinstance(value, str):
        return -((-_percent(value) * total) // 100)
    return value


def floor_scale(value: int | str, total: int) -> int:
    """Integers as is; "P%" becomes floor(P*total/100). IntOrStringError otherwise."""
    if isinstance(value, str):
        return (_percent(value) * total) // 100
    return value


def matches(pattern: str, value: str) -> bool:
    """Whether a string value satisfies a CRD pattern."""
    return re.fullmatch(pattern.removeprefix("^").removesuffix("$"), value) is not None


def is_rollout_value(value: int | str) -> bool:
    """maxUnavailable/maxSurge: integer >= 0 or a string matching ROLLOUT_PATTERN."""
    return value >= 0 if isinstance(value, int) else matches(ROLLOUT_PATTERN, value)


def is_budget_value(value: int | str) -> bool:
    """Disruption budget: integer >= 0 or a percentage 0%..100%."""
    return value >= 0 if isinstance(value, int) else matches(BUDGET_PERCENT_PATTERN, value)


def is_concurrency_value(value: int | str) -> bool:
    """Stage maxConcurrency: integer >= 1 or a percentage 1%..100%."""
    return value >= 1 if isinstance(value, int) else matches(CONCURRENCY_PERCENT_PATTERN, value)

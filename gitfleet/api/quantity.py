"""Exact parsing and comparison of Kubernetes resource quantities (`500m`, `2Gi`, `1e3`).

Follows `k8s.io/apimachinery/pkg/api/resource.ParseQuantity`: an optionally signed decimal
number followed by a binary-SI suffix (Ki..Ei), a decimal-SI suffix (n u m k M G T P E) or a
decimal exponent (e3, E-2). Values are exact `Fraction`s, so `1000m == 1`. Used by cluster
property selectors and sorters in the scheduler and by validation of property values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import total_ordering

_NUMBER_RE = re.compile(r"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(.*)", re.DOTALL)
_EXPONENT_RE = re.compile(r"[eE]([+-]?[0-9]+)")
_MAX_EXPONENT = 1000
_MAX_TEXT = 256

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

QUANTITY_FORMAT_MESSAGE = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity."""


@total_ordering
@dataclass(frozen=True, eq=False)
class Quantity:
    """An exact quantity; equality and ordering compare values, not spellings."""

    value: Fraction
    text: str = field(default="")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value == other.value

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def to_float(self) -> float:
        """float64 approximation (what KubeFleet uses for sorter interpolation)."""
        return float(self.value)

    def __str__(self) -> str:
        return self.text or str(self.value)


def _suffix_multiplier(suffix: str) -> Fraction:
    if suffix in _BINARY:
        return Fraction(1024) ** _BINARY[suffix]
    if suffix in _DECIMAL:
        return Fraction(10) ** _DECIMAL[suffix]
    match = _EXPONENT_RE.fullmatch(suffix)
    if match is None:
        raise QuantityError("unable to parse quantity's suffix")
    exponent = int(match.group(1))
    if abs(exponent) > _MAX_EXPONENT:
        raise QuantityError("quantity exponent is out of range")
    return Fraction(10) ** exponent


def parse_quantity(text: str) -> Quantity:
    """Parse `text` exactly; QuantityError with Kubernetes' wording when it is not a quantity."""
    if not text:
        raise QuantityError("quantities must be non-empty")
    if len(text) > _MAX_TEXT:
        raise QuantityError(QUANTITY_FORMAT_MESSAGE)
    match = _NUMBER_RE.fullmatch(text)
    if match is None:
        raise QuantityError(QUANTITY_FORMAT_MESSAGE)
    number, suffix = match.groups()
    return Quantity(Fraction(number) * _suffix_multiplier(suffix), text)


def compare_quantities(left: Quantity, right: Quantity) -> int:
    """-1, 0 or 1 like Go's Quantity.Cmp."""
    return (left.value > right.value) - (left.value < right.value)


_SUFFIX_BY_EXPONENT = {exp: suffix for suffix, exp in _DECIMAL.items()}


def canonical_number(value: int | float) -> str:
    """A YAML/JSON number as the quantity string Kubernetes stores (`32`, `1k`, `500m`).

    Follows `resource.Quantity`'s canonical decimal-SI form: the largest exponent that is a
    multiple of 3 (at most 18, `E`) keeping the mantissa an integer; precision below nano is
    rounded up, as Kubernetes does.
    """
    exact = Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    nanos = exact * 10**9
    if nanos.denominator != 1:
        nanos = Fraction(-((-nanos.numerator) // nanos.denominator))
    mantissa, exponent = int(nanos), -9
    while mantissa and mantissa % 1000 == 0 and exponent < 18:
        mantissa //= 1000
        exponent += 3
    if mantissa == 0:
        return "0"
    return f"{mantissa}{_SUFFIX_BY_EXPONENT[exponent]}"

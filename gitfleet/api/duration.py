"""Go `time.Duration` text: parse exactly like `time.ParseDuration`, format like `String()`.

Used for Fleet timeouts (`heartbeatTimeout: 5m`) and staged-update `waitTime` values. Parsing
replicates Go's algorithm, including its float64 arithmetic for fractional parts and its
overflow errors, so a value accepted here is accepted by KubeFleet and means the same.
"""

from __future__ import annotations

import json
from datetime import timedelta

_UNITS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # U+00B5 micro sign
    "\u03bcs": 1_000,  # U+03BC Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_MAX = (1 << 63) - 1


class DurationError(ValueError):
    """The text is not a Go duration."""


def _leading_int(s: str) -> tuple[int, str, bool]:
    """Digits at the start of `s`: (value, rest, overflowed)."""
    i, value = 0, 0
    while i < len(s) and "0" <= s[i] <= "9":
        if value > _MAX // 10:
            return 0, s, True
        value = value * 10 + int(s[i])
        if value > 1 << 63:
            return 0, s, True
        i += 1
    return value, s[i:], False


def _leading_fraction(s: str) -> tuple[int, float, str]:
    """Digits after '.', ignoring precision beyond int64 like Go: (value, scale, rest)."""
    i, value, scale, overflow = 0, 0, 1.0, False
    while i < len(s) and "0" <= s[i] <= "9":
        if not overflow:
            if value > _MAX // 10:
                overflow = True
            else:
                candidate = value * 10 + int(s[i])
                if candidate > 1 << 63:
                    overflow = True
                else:
                    value, scale = candidate, scale * 10
        i += 1
    return value, scale, s[i:]


def _split_unit(s: str) -> tuple[str, str]:
    i = 0
    while i < len(s) and s[i] != "." and not ("0" <= s[i] <= "9"):
        i += 1
    return s[:i], s[i:]


def _component(s: str, quoted: str) -> tuple[int, str]:
    """One `<number><unit>` component: (nanoseconds, rest)."""
    if not (s[0] == "." or "0" <= s[0] <= "9"):
        raise DurationError(f"time: invalid duration {quoted}")
    pl = len(s)
    whole, s, overflow = _leading_int(s)
    if overflow:
        raise DurationError(f"time: invalid duration {quoted}")
    pre = pl != len(s)
    frac, scale, post = 0, 1.0, False
    if s.startswith("."):
        s = s[1:]
        pl = len(s)
        frac, scale, s = _leading_fraction(s)
        post = pl != len(s)
    if not pre and not post:
        raise DurationError(f"time: invalid duration {quoted}")
    unit_text, s = _split_unit(s)
    if not unit_text:
        raise DurationError(f"time: missing unit in duration {quoted}")
    if unit_text not in _UNITS:
        raise DurationError(f"time: unknown unit {json.dumps(unit_text)} in duration {quoted}")
    unit = _UNITS[unit_text]
    if whole > (1 << 63) // unit:
        raise DurationError(f"time: invalid duration {quoted}")
    value = whole * unit
    if frac > 0:
        value += int(float(frac) * (float(unit) / scale))
        if value > 1 << 63:
            raise DurationError(f"time: invalid duration {quoted}")
    return value, s


def parse_duration_ns(text: str) -> int:
    """Nanoseconds of a Go duration such as `300ms`, `-1.5h` or `2h45m`."""
    quoted = json.dumps(text, ensure_ascii=False)
    s, total, negative = text, 0, False
    if s and s[0] in "+-":
        negative, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    if s == "":
        raise DurationError(f"time: invalid duration {quoted}")
    while s:
        value, s = _component(s, quoted)
        total += value
        if total > 1 << 63:
            raise DurationError(f"time: invalid duration {quoted}")
    if negative:
        return -total
    if total > _MAX:
        raise DurationError(f"time: invalid duration {quoted}")
    return total


def parse_duration(text: str) -> timedelta:
    """A Go duration as a timedelta (sub-microsecond parts truncated toward zero)."""
    ns = parse_duration_ns(text)
    micros = abs(ns) // 1000
    return timedelta(microseconds=-micros if ns < 0 else micros)


def _format_fraction(value: int, precision: int) -> tuple[str, int]:
    """Go fmtFrac: digits after the point without trailing zeros, and value // 10**precision."""
    digits = ""
    printed = False
    for _ in range(precision):
        digit = value % 10
        printed = printed or digit != 0
        if printed:
            digits = str(digit) + digits
        value //= 10
    return ("." + digits if printed else ""), value


def format_duration_ns(ns: int) -> str:
    """Go's Duration.String(): `1h2m3.5s`, `300ms`, `0s`."""
    if ns == 0:
        return "0s"
    sign, u = ("-" if ns < 0 else ""), abs(ns)
    if u < 1_000_000_000:
        for unit, precision in (("ns", 0), ("\u00b5s", 3), ("ms", 6)):
            if u < 10 ** (precision + 3):
                frac, whole = _format_fraction(u, precision)
                return f"{sign}{whole}{frac}{unit}"
    frac, u = _format_fraction(u, 9)
    seconds, u = u % 60, u // 60
    text = f"{seconds}{frac}s"
    if u > 0:
        minutes, hours = u % 60, u // 60
        text = f"{minutes}m{text}"
        if hours > 0:
            text = f"{hours}h{text}"
    return sign + text


def format_duration(delta: timedelta) -> str:
    """A timedelta in Go duration syntax."""
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return format_duration_ns(micros * 1000)

"""Kubernetes name and label syntax checks, with Kubernetes' own problem messages.

Each function returns a list of human-readable problems (empty when the value is valid), worded
like `k8s.io/apimachinery/pkg/util/validation`. Kinds, selectors and the loader call them; names
that become file or directory names must pass `is_dns1123_label`.
"""

from __future__ import annotations

import re

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"

_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)


def _max_len_msg(limit: int) -> str:
    return f"must be no more than {limit} characters"


def is_dns1123_label(value: str) -> list[str]:
    """Problems with `value` as an RFC 1123 label (lowercase alphanumerics and '-', <= 63)."""
    problems: list[str] = []
    if len(value) > DNS1123_LABEL_MAX:
        problems.append(_max_len_msg(DNS1123_LABEL_MAX))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        problems.append(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
            "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
            f"'123-abc', regex used for validation is '{_DNS1123_LABEL_FMT}')"
        )
    return problems


def is_dns1123_subdomain(value: str) -> list[str]:
    """Problems with `value` as an RFC 1123 subdomain (labels joined by '.', <= 253)."""
    problems: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        problems.append(_max_len_msg(DNS1123_SUBDOMAIN_MAX))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        problems.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character (e.g. "
            f"'example.com', regex used for validation is '{_DNS1123_SUBDOMAIN_FMT}')"
        )
    return problems


def is_qualified_name(value: str) -> list[str]:
    """Problems with `value` as a label key / qualified name (`[prefix/]name`)."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
        problems: list[str] = []
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            problems = ["prefix part must be non-empty"]
        else:
            problems = ["prefix part " + msg for msg in is_dns1123_subdomain(prefix)]
    else:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
            f"or '123-abc', regex used for validation is '{_QUALIFIED_NAME_FMT}') with an "
            "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        problems.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        problems.append("name part " + _max_len_msg(QUALIFIED_NAME_MAX))
    if name and not _QUALIFIED_NAME_RE.fullmatch(name):
        problems.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
            "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
            f"'123-abc', regex used for validation is '{_QUALIFIED_NAME_FMT}')"
        )
    return problems


def is_label_value(value: str) -> list[str]:
    """Problems with `value` as a label value (may be empty)."""
    problems: list[str] = []
    if len(value) > LABEL_VALUE_MAX:
        problems.append(_max_len_msg(LABEL_VALUE_MAX))
    if not _LABEL_VALUE_RE.fullmatch(value):
        problems.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', "
            "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  "
            f"or 'my_value',  or '12345', regex used for validation is '{_LABEL_VALUE_FMT}')"
        )
    return problems


def dns_label_message(name: str) -> str:
    """The gitfleet rule for names that become file or directory names."""
    return (
        "must be a DNS-1123 label (lowercase alphanumerics and '-', at most 63 characters): "
        f'"{name}"'
    )

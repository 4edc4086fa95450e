"""Tables for the shared API primitives: names, label selectors, quantities, IntOrString,
Go durations, conditions and taints/tolerations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from fractions import Fraction

import pytest

from gitfleet.api import (
    Condition,
    DurationError,
    IntOrStringError,
    LabelSelector,
    QuantityError,
    Taint,
    Toleration,
    ceil_scale,
    compare_quantities,
    find_condition,
    first_untolerated,
    floor_scale,
    format_duration_ns,
    format_time,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    parse_duration,
    parse_duration_ns,
    parse_quantity,
    parse_time,
    set_condition,
    tolerates,
)
from gitfleet.api.base import prefix
from gitfleet.api.errors import FieldIssue
from gitfleet.api.intstr import is_budget_value, is_concurrency_value, is_rollout_value
from gitfleet.api.taints import validate_tolerations

LABELS = {"env": "prod", "region": "eu", "tier": ""}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ({}, True),
        ({"matchLabels": {}}, True),
        ({"matchLabels": {"env": "prod"}}, True),
        ({"matchLabels": {"env": "dev"}}, False),
        ({"matchLabels": {"missing": ""}}, False),
        ({"matchLabels": {"tier": ""}}, True),
        ({"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev", "prod"]}]}, True),
        ({"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev"]}]}, False),
        ({"matchExpressions": [{"key": "nope", "operator": "In", "values": ["x"]}]}, False),
        ({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["dev"]}]}, True),
        ({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]}, False),
        ({"matchExpressions": [{"key": "nope", "operator": "NotIn", "values": ["x"]}]}, True),
        ({"matchExpressions": [{"key": "region", "operator": "Exists"}]}, True),
        ({"matchExpressions": [{"key": "nope", "operator": "Exists"}]}, False),
        ({"matchExpressions": [{"key": "nope", "operator": "DoesNotExist"}]}, True),
        ({"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]}, False),
        (
            {
                "matchLabels": {"env": "prod"},
                "matchExpressions": [{"key": "region", "operator": "In", "values": ["us"]}],
            },
            False,
        ),
    ],
)
def test_label_selector_matches(selector: dict[str, object], expected: bool) -> None:
    assert LabelSelector.model_validate(selector).matches(LABELS) is expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ({"matchLabels": {"app.kubernetes.io/name": "web"}}, []),
        (
            {"matchExpressions": [{"key": "env", "operator": "In", "values": []}]},
            [
                (
                    "matchExpressions[0].values",
                    "for 'in', 'notin' operators, values set can't be empty",
                )
            ],
        ),
        (
            {"matchExpressions": [{"key": "env", "operator": "NotIn"}]},
            [
                (
                    "matchExpressions[0].values",
                    "for 'in', 'notin' operators, values set can't be empty",
                )
            ],
        ),
        (
            {"matchExpressions": [{"key": "env", "operator": "Exists", "values": ["a"]}]},
            [
                (
                    "matchExpressions[0].values",
                    "values set must be empty for exists and does not exist",
                )
            ],
        ),
        (
            {"matchExpressions": [{"key": "env", "operator": "DoesNotExist", "values": ["a"]}]},
            [
                (
                    "matchExpressions[0].values",
                    "values set must be empty for exists and does not exist",
                )
            ],
        ),
    ],
)
def test_label_selector_rules(selector: dict[str, object], expected: list[tuple[str, str]]) -> None:
    issues = LabelSelector.model_validate(selector).validate_rules()
    assert [(i.field, i.message) for i in issues] == expected


@pytest.mark.parametrize(
    ("selector", "field", "fragment"),
    [
        ({"matchLabels": {"bad key!": "x"}}, 'matchLabels["bad key!"]', "key name part must"),
        ({"matchLabels": {"k": "bad value!"}}, "matchLabels.k", "a valid label must be"),
        ({"matchLabels": {"/k": "v"}}, 'matchLabels["/k"]', "key prefix part must be non-empty"),
        (
            {"matchExpressions": [{"key": "k", "operator": "In", "values": ["-x"]}]},
            "matchExpressions[0].values[0]",
            "a valid label must be",
        ),
    ],
)
def test_label_selector_syntax(selector: dict[str, object], field: str, fragment: str) -> None:
    issues = LabelSelector.model_validate(selector).validate_rules()
    assert issues and issues[0].field == field and fragment in issues[0].message


@pytest.mark.parametrize(
    ("check", "value", "problems"),
    [
        (is_dns1123_label, "member-1", 0),
        (is_dns1123_label, "Member", 1),
        (is_dns1123_label, "a" * 64, 1),
        (is_dns1123_label, "a.b", 1),
        (is_dns1123_label, "-a", 1),
        (is_dns1123_subdomain, "a.b-c", 0),
        (is_dns1123_subdomain, "a..b", 1),
        (is_qualified_name, "kubernetes.io/hostname", 0),
        (is_qualified_name, "a/b/c", 1),
        (is_qualified_name, "a" * 64, 1),
        (is_qualified_name, "", 1),
        (is_label_value, "", 0),
        (is_label_value, "My_value.1", 0),
        (is_label_value, "a" * 64, 1),
    ],
)
def test_name_checks(check: object, value: str, problems: int) -> None:
    assert callable(check)
    assert len(check(value)) == problems


def test_dns_label_messages_are_kubernetes_wording() -> None:
    assert is_dns1123_label("a" * 64)[0] == "must be no more than 63 characters"
    assert is_dns1123_label("A")[0].startswith("a lowercase RFC 1123 label must consist of")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", Fraction(1)),
        ("1000m", Fraction(1)),
        ("500m", Fraction(1, 2)),
        ("1Ki", Fraction(1024)),
        ("2Gi", Fraction(2 * 1024**3)),
        ("1k", Fraction(1000)),
        ("1M", Fraction(10**6)),
        ("1E", Fraction(10**18)),
        ("1Ei", Fraction(1024**6)),
        ("1e3", Fraction(1000)),
        ("5E-2", Fraction(1, 20)),
        ("1.5", Fraction(3, 2)),
        (".5", Fraction(1, 2)),
        ("-1m", Fraction(-1, 1000)),
        ("+2k", Fraction(2000)),
        ("100n", Fraction(1, 10**7)),
        ("3u", Fraction(3, 10**6)),
    ],
)
def test_parse_quantity(text: str, value: Fraction) -> None:
    quantity = parse_quantity(text)
    assert quantity.value == value
    assert quantity.to_float() == float(value)
    assert str(quantity) == text


@pytest.mark.parametrize(
    "text", ["", "abc", "1KB", "1 Ki", "..5", "e3", "1e", " 1", "1Ki ", "0x10"]
)
def test_parse_quantity_rejects(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize(
    ("left", "right", "cmp"),
    [("1", "1000m", 0), ("1Gi", "1G", 1), ("999m", "1", -1), ("1e3", "1k", 0), ("-1", "0", -1)],
)
def test_compare_quantities(left: str, right: str, cmp: int) -> None:
    a, b = parse_quantity(left), parse_quantity(right)
    assert compare_quantities(a, b) == cmp
    assert (a == b) is (cmp == 0)
    assert (a < b) is (cmp < 0)


@pytest.mark.parametrize(
    ("value", "total", "ceil", "floor"),
    [
        (3, 10, 3, 3),
        (0, 10, 0, 0),
        ("25%", 10, 3, 2),
        ("25%", 4, 1, 1),
        ("25%", 0, 0, 0),
        ("100%", 7, 7, 7),
        ("0%", 7, 0, 0),
        ("50%", 3, 2, 1),
        ("1%", 1, 1, 0),
    ],
)
def test_intstr_scaling(value: int | str, total: int, ceil: int, floor: int) -> None:
    assert ceil_scale(value, total) == ceil
    assert floor_scale(value, total) == floor


@pytest.mark.parametrize(
    ("value", "message"),
    [("5", "invalid type: string is not a percentage"), ("x%", "invalid value for IntOrString")],
)
def test_intstr_scaling_errors(value: str, message: str) -> None:
    with pytest.raises(IntOrStringError, match=message):
        ceil_scale(value, 10)


@pytest.mark.parametrize(
    ("check", "value", "ok"),
    [
        (is_rollout_value, "25%", True),
        (is_rollout_value, "100%", True),
        (is_rollout_value, "101%", False),
        (is_rollout_value, "5", True),
        (is_rollout_value, 0, True),
        (is_rollout_value, -1, False),
        (is_budget_value, "5", False),
        (is_budget_value, "0%", True),
        (is_concurrency_value, "0%", False),
        (is_concurrency_value, 0, False),
        (is_concurrency_value, "1%", True),
        (is_concurrency_value, 15, True),
    ],
)
def test_intstr_patterns(check: object, value: int | str, ok: bool) -> None:
    assert callable(check)
    assert check(value) is ok


@pytest.mark.parametrize(
    ("text", "ns", "formatted"),
    [
        ("300ms", 300_000_000, "300ms"),
        ("1.5h", 5_400_000_000_000, "1h30m0s"),
        ("2h45m", 9_900_000_000_000, "2h45m0s"),
        ("-1m", -60_000_000_000, "-1m0s"),
        ("0", 0, "0s"),
        ("+5s", 5_000_000_000, "5s"),
        (".5s", 500_000_000, "500ms"),
        ("1.s", 1_000_000_000, "1s"),
        ("3us", 3_000, "3\u00b5s"),
        ("3\u03bcs", 3_000, "3\u00b5s"),
        ("1ns", 1, "1ns"),
        ("1.000000001s", 1_000_000_001, "1.000000001s"),
        ("9223372036854775807ns", 9223372036854775807, "2562047h47m16.854775807s"),
    ],
)
def test_parse_duration(text: str, ns: int, formatted: str) -> None:
    assert parse_duration_ns(text) == ns
    assert format_duration_ns(ns) == formatted


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("1", 'time: missing unit in duration "1"'),
        ("m", 'time: invalid duration "m"'),
        ("1x", 'time: unknown unit "x" in duration "1x"'),
        (".s", 'time: invalid duration ".s"'),
        ("-", 'time: invalid duration "-"'),
        ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
        ("1.2.3s", 'time: missing unit in duration "1.2.3s"'),
    ],
)
def test_parse_duration_errors(text: str, message: str) -> None:
    with pytest.raises(DurationError) as info:
        parse_duration_ns(text)
    assert str(info.value) == message


def test_parse_duration_timedelta() -> None:
    assert parse_duration("1.5h") == timedelta(hours=1, minutes=30)
    assert parse_duration("-1500ns") == timedelta(microseconds=-1)


NOW = datetime(2026, 11, 21, 10, 0, 0, tzinfo=UTC)
EARLIER = "2026-11-20T09:00:00Z"


def cond(
    status: str, reason: str = "R", message: str = "m", time: str | None = EARLIER
) -> Condition:
    return Condition.model_validate(
        {"type": "Ready", "status": status, "reason": reason, "message": message}
        | ({"lastTransitionTime": time} if time else {})
    )


@pytest.mark.parametrize(
    ("new", "expected_time"),
    [
        (cond("True", time=None), EARLIER),
        (cond("False", time=None), "2026-11-21T10:00:00Z"),
        (cond("True", reason="Other", time=None), "2026-11-21T10:00:00Z"),
        (cond("True", message="other", time=None), "2026-11-21T10:00:00Z"),
        (cond("False", time="2026-11-21T09:59:00Z"), "2026-11-21T09:59:00Z"),
    ],
)
def test_set_condition_transitions(new: Condition, expected_time: str) -> None:
    other = Condition(type="Other", status="True")
    result = set_condition([other, cond("True")], new, NOW)
    assert [c.type for c in result] == ["Other", "Ready"]
    ready = find_condition(result, "Ready")
    assert ready is not None and ready.last_transition_time == expected_time
    assert ready.status == new.status


def test_set_condition_appends_new_type_and_updates_generation() -> None:
    first = set_condition([], cond("True", time=None), NOW)
    assert first[0].last_transition_time == "2026-11-21T10:00:00Z"
    bumped = cond("True", time=None).model_copy(update={"observed_generation": 7})
    second = set_condition(first, bumped, NOW + timedelta(hours=1))
    assert second[0].last_transition_time == "2026-11-21T10:00:00Z"
    assert second[0].observed_generation == 7
    assert find_condition(second, "Missing") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-21T10:00:00Z", datetime(2026, 11, 21, 10, tzinfo=UTC)),
        ("2026-11-21T11:00:00+01:00", datetime(2026, 11, 21, 10, tzinfo=UTC)),
        ("2026-11-21T10:00:00.123456789Z", datetime(2026, 11, 21, 10, 0, 0, 123456, tzinfo=UTC)),
    ],
)
def test_parse_time(text: str, expected: datetime) -> None:
    assert parse_time(text) == expected
    assert format_time(parse_time(text)) == "2026-11-21T10:00:00Z"


@pytest.mark.parametrize("text", ["2026-11-21", "2026-11-21 10:00:00Z", "2026-13-01T00:00:00Z", ""])
def test_parse_time_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_time(text)


def test_format_time_naive_is_utc() -> None:
    assert format_time(datetime(2026, 1, 2, 3, 4, 5, 999)) == "2026-01-02T03:04:05Z"


TAINT = Taint(key="key1", value="value1", effect="NoSchedule")


@pytest.mark.parametrize(
    ("toleration", "expected"),
    [
        ({"key": "key1", "value": "value1"}, True),
        ({"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoSchedule"}, True),
        ({"key": "key1", "value": "other"}, False),
        ({"key": "key2", "value": "value1"}, False),
        ({"key": "key1", "operator": "Exists"}, True),
        ({"operator": "Exists"}, True),
        ({"operator": "Exists", "effect": "NoSchedule"}, True),
        ({"key": "key2", "operator": "Exists"}, False),
        ({"value": "value1"}, False),
    ],
)
def test_tolerates(toleration: dict[str, str], expected: bool) -> None:
    assert tolerates(Toleration.model_validate(toleration), TAINT) is expected


def test_first_untolerated_and_go_repr() -> None:
    taints = [TAINT, Taint(key="key2", effect="NoSchedule")]
    tolerations = [Toleration(key="key1", value="value1")]
    missing = first_untolerated(taints, tolerations)
    assert missing is not None and missing.go_repr() == "&{Key:key2 Value: Effect:NoSchedule}"
    assert first_untolerated([TAINT], tolerations) is None


@pytest.mark.parametrize(
    ("tolerations", "expected"),
    [
        ([{"key": "k", "value": "v"}], []),
        (
            [{"key": "k", "operator": "Exists", "value": "v"}],
            [
                (
                    "[0]",
                    "invalid toleration {Key:k Operator:Exists Value:v Effect:}: toleration "
                    "value needs to be empty, when operator is Exists",
                )
            ],
        ),
        (
            [{"value": "v"}],
            [
                (
                    "[0]",
                    "invalid toleration {Key: Operator:Equal Value:v Effect:}: toleration key "
                    "cannot be empty, when operator is Equal",
                )
            ],
        ),
        (
            [{"key": "k", "value": "v"}, {"key": "k", "value": "v", "operator": "Equal"}],
            [
                (
                    "[1]",
                    "toleration {Key:k Operator:Equal Value:v Effect:} already exists, "
                    "tolerations must be unique",
                )
            ],
        ),
    ],
)
def test_validate_tolerations(
    tolerations: list[dict[str, str]], expected: list[tuple[str, str]]
) -> None:
    issues = validate_tolerations([Toleration.model_validate(t) for t in tolerations])
    assert [(i.field, i.message) for i in issues] == expected


def test_toleration_value_syntax() -> None:
    issues = validate_tolerations([Toleration(key="k", value="bad value")])
    assert issues[0].message.startswith("invalid toleration value {Key:k Operator:Equal")


def test_prefix_paths() -> None:
    issues = [FieldIssue("", "a"), FieldIssue("[1]", "b"), FieldIssue("x.y", "c")]
    assert prefix("spec.list", issues) == [
        FieldIssue("spec.list", "a"),
        FieldIssue("spec.list[1]", "b"),
        FieldIssue("spec.list.x.y", "c"),
    ]
